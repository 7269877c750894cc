package slurm

import (
	"context"
	"errors"
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
