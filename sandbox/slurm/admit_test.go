package slurm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/runbox/runbox/sandbox"
)

// TestAdmit: a Slurm job refuses a level of isolation (nobody would keep
// it on the nodes) and a negative queue timeout, as a refusal the engine
// reports as a bad request; its scheduler settings land in its own options.
func TestAdmit(t *testing.T) {
	sb := New(Options{})
	for _, tc := range []struct {
		name    string
		req     sandbox.Request
		refused bool
	}{
		{"isolate fs", sandbox.Request{Isolate: "fs"}, true},
		{"isolate none", sandbox.Request{Isolate: "none"}, false},
		{"negative queue timeout", sandbox.Request{Slurm: &sandbox.SlurmSpec{QueueTimeout: -1}}, true},
		{"partition", sandbox.Request{Slurm: &sandbox.SlurmSpec{Partition: "gpu", Options: map[string]string{"gres": "gpu:1"}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var spec sandbox.Spec
			_, err := sb.Admit(context.Background(), tc.req, &spec)
			if got := errors.Is(err, sandbox.ErrRefused); got != tc.refused || (err != nil && !got) {
				t.Fatalf("Admit: %v, want refused=%v", err, tc.refused)
			}
			if !tc.refused && tc.req.Slurm != nil && (spec.Slurm == nil || spec.Slurm.Partition != tc.req.Slurm.Partition || spec.Slurm.Options["gres"] != "gpu:1") {
				t.Errorf("spec.Slurm = %+v, want the request's settings", spec.Slurm)
			}
		})
	}
	if c := sb.Capabilities(context.Background()); !c.SchedulerOptions || len(c.Isolation) != 0 {
		t.Errorf("capabilities %+v: want scheduler options and no isolation levels", c)
	}
}

// TestAdmitGPUsAndAllowNet: a job asks the cluster for a number of GPUs
// (how many it has is the cluster's to decide), never all of them or this
// host's devices by name; an allow-list is refused, naming why (no proxy
// on the nodes), and so is a --network mode (it was ignored). While planning, the proposed hosts get a note.
func TestAdmitGPUsAndAllowNet(t *testing.T) {
	sb := New(Options{})
	for _, tc := range []struct {
		name    string
		req     sandbox.Request
		refusal string // "" admitted
	}{
		{"a number", sandbox.Request{GPUs: "8"}, ""},
		{"all", sandbox.Request{GPUs: "all"}, "--gpus all has no meaning on a cluster: ask for a number (--gpus 2)"},
		{"devices by name", sandbox.Request{GPUs: "device=0"}, "--gpus device=0 names this host's devices; on Slurm ask for a number"},
		{"not a number", sandbox.Request{GPUs: "x"}, `--gpus "x": want a number of GPUs`},
		{"allow-list", sandbox.Request{AllowNet: []string{"pypi.org"}}, "a Slurm job runs on the cluster's nodes, where runbox has no proxy"},
		{"setup list", sandbox.Request{SetupAllowNet: []string{"pypi.org"}}, "drop --allow-net"},
		{"network mode", sandbox.Request{Network: "none"}, "--network none sets a container's or a confined process run's network; a Slurm job gets the cluster's network"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var spec sandbox.Spec
			v, err := sb.Admit(context.Background(), tc.req, &spec)
			if tc.refusal == "" {
				if err != nil || v.GPUs != 0 {
					t.Fatalf("Admit: %+v %v: want admitted, nothing reserved on this host", v, err)
				}
				return
			}
			if !errors.Is(err, sandbox.ErrRefused) || !strings.Contains(err.Error(), tc.refusal) {
				t.Fatalf("Admit: %v, want a refusal saying %q", err, tc.refusal)
			}
		})
	}
	v, err := sb.Admit(context.Background(), sandbox.Request{Planning: true, ProposedAllowNet: []string{"pypi.org"}}, &sandbox.Spec{})
	if err != nil || !strings.Contains(v.Note, "the command needs pypi.org") {
		t.Errorf("planning: %v, note %q", err, v.Note)
	}
	// --pids: sbatch sets no process count, so a run refuses it and a
	// plan says so and drops it (its exec is then not refused).
	spec := sandbox.Spec{Limits: sandbox.Limits{Pids: 64}}
	if _, err := sb.Admit(context.Background(), sandbox.Request{}, &spec); !errors.Is(err, sandbox.ErrRefused) || !strings.Contains(err.Error(), "--pids 64: a Slurm job's process count is the cluster's to limit") {
		t.Errorf("--pids: %v, want refused", err)
	}
	v, err = sb.Admit(context.Background(), sandbox.Request{Planning: true}, &spec)
	if err != nil || spec.Limits.Pids != 0 || !strings.Contains(v.Note, "--pids 64 is not taken on Slurm") {
		t.Errorf("planning --pids: %v, pids %d, note %q", err, spec.Limits.Pids, v.Note)
	}
	if c := sb.Capabilities(context.Background()); c.GPUs != sandbox.GPUsCluster || c.AllowNet {
		t.Errorf("capabilities: GPUs %q AllowNet %v, want the cluster's GPUs and no allow-list", c.GPUs, c.AllowNet)
	}
}
