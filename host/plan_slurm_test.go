package host

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/supervisor"
	"github.com/runbox/runbox/sandbox/slurm"
	"github.com/runbox/runbox/store"
)

// A plan goes to the Slurm cluster when one answers and the run is long by
// experience or bigger than this machine; otherwise it stays local. Needs a
// real cluster (CI brings one up; RUNBOX_REQUIRE_SLURM=1 makes its absence
// a failure).
func TestPlanRecommendsSlurm(t *testing.T) {
	if !slurm.Configured() {
		if os.Getenv("RUNBOX_REQUIRE_SLURM") == "1" {
			t.Fatal("no Slurm on this host and RUNBOX_REQUIRE_SLURM=1")
		}
		t.Skip("no Slurm on this host (sbatch not on PATH)")
	}
	te := newTestEngine(t, t.TempDir(), 2)
	te.cfg.Sandboxes[sandbox.Slurm] = slurm.New(slurm.Options{})
	if h := te.probes.healthOf(context.Background(), te.cfg.Sandboxes[sandbox.Slurm]); !h.Available {
		t.Fatalf("Slurm is configured but does not answer: %s", h.Detail)
	}
	ctx := context.Background()
	wd := t.TempDir()
	plan := func(req api.RunRequest) *store.Plan {
		t.Helper()
		req.Workdir = wd
		p, err := te.Plan(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := plan(api.RunRequest{Command: []string{"echo", "small"}}); p.Sandbox == sandbox.Slurm {
		t.Errorf("a small, new run went to Slurm: %s", p.SandboxReason)
	}
	huge := api.RunRequest{Command: []string{"echo", "big"}, Limits: api.Limits{MemoryBytes: 1 << 50}}
	if p := plan(huge); p.Sandbox != sandbox.Slurm || !strings.Contains(p.SandboxReason, "memory") {
		t.Errorf("more memory than the machine has: %s (%s), want slurm for memory", p.Sandbox, p.SandboxReason)
	}
	// What a cluster would refuse keeps the run here, where it is taken:
	// a confined run, a --network mode, an allow-list.
	for _, tc := range []struct {
		name string
		set  func(*api.RunRequest)
	}{
		{"--isolate net", func(r *api.RunRequest) { r.Isolate = sandbox.IsolateNet }},
		{"--network host", func(r *api.RunRequest) { r.Network = "host" }},
		{"--allow-net", func(r *api.RunRequest) { r.AllowNet = []string{"pypi.org"} }},
	} {
		req := huge
		tc.set(&req)
		if p := plan(req); p.Sandbox == sandbox.Slurm {
			t.Errorf("%s, more memory than the machine has: went to Slurm (%s), which refuses it", tc.name, p.SandboxReason)
		}
	}
	explicit := huge
	explicit.Sandbox = sandbox.Process
	if p := plan(explicit); p.Sandbox != sandbox.Process {
		t.Errorf("an explicit --sandbox process was overridden: %s", p.Sandbox)
	}
	// Three runs of the same command that took an hour each.
	long := []string{"python3", "train.py", "--epochs", "90"}
	for i := 0; i < 3; i++ {
		start := time.Now().Add(-2 * time.Hour)
		end := start.Add(time.Hour)
		r := &store.Run{State: store.Succeeded, Sandbox: sandbox.Process, Fingerprint: Fingerprint(long),
			Spec: sandbox.Spec{Command: long}, StartedAt: &start, EndedAt: &end,
			Exit: &sandbox.Exit{Usage: sandbox.Usage{WallSeconds: 3600}}}
		if err := te.st.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if p := plan(api.RunRequest{Command: long}); p.Sandbox != sandbox.Slurm || !strings.Contains(p.SandboxReason, "similar runs took 1h") {
		t.Errorf("a run whose like took an hour: %s (%s), want slurm for its length", p.Sandbox, p.SandboxReason)
	}
}

func TestGPUsAsked(t *testing.T) {
	for v, want := range map[string]int{"": 0, "all": 1, "2": 2, "device=0,1,3": 3, "lots": 1} {
		if got := gpusAsked(v); got != want {
			t.Errorf("gpusAsked(%q) = %d, want %d", v, got, want)
		}
	}
}

// A plan states the memory, pids and CPU policy the run will get.
func TestPlanStatesLimits(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 2)
	cpusHow := "not enforced here"
	if m := supervisor.CPULimitMode(); m != "" {
		cpusHow = "enforced by " + m
	}
	ctx := context.Background()
	for _, tt := range []struct {
		req  api.RunRequest
		want []string
	}{
		{api.RunRequest{Command: []string{"true"}, Sandbox: sandbox.Process}, []string{"memory: no limit (set --memory", "pids: "}},
		{api.RunRequest{Command: []string{"true"}, Sandbox: sandbox.Process, Limits: api.Limits{MemoryBytes: 512 << 20, Pids: 64}}, []string{"memory: 512 MiB, enforced by ", "pids: 64"}},
		{api.RunRequest{Command: []string{"true"}, Sandbox: sandbox.Process, Limits: api.Limits{CPUs: 1.5}}, []string{"cpus: 1.5, " + cpusHow}},
	} {
		tt.req.Workdir = t.TempDir()
		p, err := te.Plan(ctx, tt.req)
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(p.Result.Notes, "\n")
		for _, w := range tt.want {
			if !strings.Contains(notes, w) {
				t.Errorf("plan notes %q do not say %q", notes, w)
			}
		}
	}
}
