package process

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/runbox/runbox/internal/gpu"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/confine"
)

// TestAdmitGPUs: a process run asks for a number of this host's GPUs (or
// all), never more than the daemon knows (the refusal names what exists),
// never with none known (the refusal names RUNBOX_GPUS), never devices by
// name; what it asks for is what the queue must reserve.
func TestAdmitGPUs(t *testing.T) {
	two := gpu.Inventory{Devices: []gpu.Device{{Index: "0"}, {Index: "1", Name: "NVIDIA A100"}}}
	for _, tc := range []struct {
		name    string
		inv     gpu.Inventory
		gpus    string
		reserve int
		refusal string // "" admitted
	}{
		{"none asked", gpu.Inventory{}, "", 0, ""},
		{"one of two", two, "1", 1, ""},
		{"all", two, "all", -1, ""},
		{"three of two", two, "3", 0, "--gpus 3 asks for more GPUs than the daemon has: 2 known (0, 1: NVIDIA A100)"},
		{"none known", gpu.Inventory{}, "1", 0, "declare them with RUNBOX_GPUS=0,1"},
		{"all with none known", gpu.Inventory{}, "all", 0, "no GPUs are known to the daemon"},
		{"devices by name", two, "device=0", 0, "--gpus device=0: a process run asks for a number of GPUs (or all); the daemon hands them out"},
		{"not a number", two, "two", 0, `--gpus "two": want a number of GPUs (1, 2, ...) or all`},
		{"zero", two, "0", 0, `--gpus "0": want a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := New(Options{GPUs: tc.inv})
			v, err := sb.Admit(context.Background(), sandbox.Request{GPUs: tc.gpus}, &sandbox.Spec{})
			if tc.refusal != "" {
				if !errors.Is(err, sandbox.ErrRefused) || !strings.Contains(err.Error(), tc.refusal) {
					t.Fatalf("Admit: %v, want a refusal saying %q", err, tc.refusal)
				}
				return
			}
			if err != nil || v.GPUs != tc.reserve {
				t.Fatalf("Admit: %+v %v, want %d GPUs reserved", v, err, tc.reserve)
			}
		})
	}
	if c := New(Options{}).Capabilities(context.Background()); c.GPUs != sandbox.GPUsHost {
		t.Errorf("capabilities: GPUs %q, want %q", c.GPUs, sandbox.GPUsHost)
	}
}

// TestAdmitAllowNet: a process run with an allow-list gets its network
// cut (the proxy is its only way out), at least, or a refusal naming why
// this host cannot; the host network contradicts a list. The capability
// says whether this host can keep one.
func TestAdmitAllowNet(t *testing.T) {
	sb := New(Options{})
	ctx := context.Background()
	cut := confine.Probe().Can(confine.Net)
	if c := sb.Capabilities(ctx); c.AllowNet != (cut == nil) {
		t.Errorf("capabilities: AllowNet %v, but the host can cut a run's network: %v", c.AllowNet, cut)
	}
	_, err := sb.Admit(ctx, sandbox.Request{AllowNet: []string{"pypi.org"}, Network: "host"}, &sandbox.Spec{})
	if !errors.Is(err, sandbox.ErrRefused) || !strings.Contains(err.Error(), "--network host gives it every host: choose one") {
		t.Errorf("--allow-net with --network host: %v", err)
	}
	spec := sandbox.Spec{ProcessOptions: sandbox.ProcessOptions{Isolate: "fs"}}
	_, err = sb.Admit(ctx, sandbox.Request{AllowNet: []string{"pypi.org", "*.pythonhosted.org"}, Isolate: "fs"}, &spec)
	if cut != nil {
		if !errors.Is(err, sandbox.ErrRefused) || !strings.Contains(err.Error(), "which this host cannot enforce") {
			t.Errorf("a host that cannot cut the network admitted a list: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if spec.Isolate != "full" || strings.Join(spec.AllowNet, ",") != "pypi.org,*.pythonhosted.org" {
		t.Errorf("spec: isolate %q allow %v, want full and the list", spec.Isolate, spec.AllowNet)
	}
}

// TestAdmitProposedAllowNet: while planning, the hosts the planner
// proposes become a process run's allow-list (its network cut), unless
// the run was given the host network or no isolation by name; the note
// says which.
func TestAdmitProposedAllowNet(t *testing.T) {
	if err := confine.Probe().Can(confine.Net); err != nil {
		t.Skipf("this host cannot cut a run's network: %v", err)
	}
	sb := New(Options{})
	for _, tc := range []struct {
		name    string
		req     sandbox.Request
		applied bool
		note    string
	}{
		{"applied", sandbox.Request{}, true, "network: only pypi.org, through an egress proxy"},
		{"host network", sandbox.Request{Network: "host"}, false, "not enforced, as the run was given the host network"},
		{"isolate none", sandbox.Request{Isolate: "none"}, false, "not enforced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.Planning, req.ProposedAllowNet = true, []string{"pypi.org"}
			var spec sandbox.Spec
			v, err := sb.Admit(context.Background(), req, &spec)
			if err != nil {
				t.Fatal(err)
			}
			if applied := len(spec.AllowNet) > 0; applied != tc.applied || (applied && spec.Isolate != "net") {
				t.Errorf("spec: isolate %q allow %v, want applied=%v", spec.Isolate, spec.AllowNet, tc.applied)
			}
			if !strings.Contains(v.Note, tc.note) {
				t.Errorf("note %q, want one saying %q", v.Note, tc.note)
			}
		})
	}
}

// TestGiveGPUs: a starting run gets the GPUs the queue reserved for it in
// CUDA_VISIBLE_DEVICES, without touching the spec it came from; on Apple
// silicon (one Metal GPU, held for exclusivity) nothing is named.
func TestGiveGPUs(t *testing.T) {
	env := []string{"PATH=/bin"}
	spec := sandbox.Spec{Env: env[:1:1]}
	New(Options{}).GiveGPUs(&spec, []string{"0", "2"})
	if strings.Join(spec.Env, " ") != "PATH=/bin CUDA_VISIBLE_DEVICES=0,2" || len(env) != 1 {
		t.Errorf("env %q", spec.Env)
	}
	apple := sandbox.Spec{Env: []string{"PATH=/bin"}}
	New(Options{GPUs: gpu.Inventory{Devices: []gpu.Device{{Index: "0", Apple: true}}}}).GiveGPUs(&apple, []string{"0"})
	if len(apple.Env) != 1 {
		t.Errorf("Apple silicon: env %q", apple.Env)
	}
}
