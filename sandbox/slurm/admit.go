package slurm

import (
	"context"

	"github.com/runbox/runbox/sandbox"
)

// Capabilities: a job runs on the cluster's nodes, which runbox does not
// confine (no --isolate level), on their own network (no --network mode); Slurm enforces memory
// (--mem) and CPUs, and takes scheduler settings.
func (s *Sandbox) Capabilities(ctx context.Context) sandbox.Capabilities {
	return sandbox.Capabilities{
		Limits:           map[string]string{"memory": "Slurm (--mem)", "cpus": "Slurm (--cpus-per-task)", "pids": "as the cluster sets"},
		SchedulerOptions: true,
	}
}

// Admit refuses a level of isolation (a promise nobody would keep on the
// nodes) and a negative queue timeout, and puts the scheduler settings in
// the spec.
func (s *Sandbox) Admit(ctx context.Context, req sandbox.Request, spec *sandbox.Spec) (sandbox.Verdict, error) {
	if l := req.Isolate; l != "" && l != sandbox.IsolateNone {
		return sandbox.Verdict{}, sandbox.Refuse("--isolate %s confines process runs; a %s job runs on the cluster's nodes, which runbox does not confine: drop --isolate, or run it with --sandbox process or docker", l, sandbox.Slurm)
	}
	r := req.Slurm
	if r == nil {
		return sandbox.Verdict{}, nil
	}
	if r.QueueTimeout < 0 {
		return sandbox.Verdict{}, sandbox.Refuse("queue timeout %s: cannot be negative", r.QueueTimeout)
	}
	o := *r
	spec.Slurm = &o
	return sandbox.Verdict{}, nil
}
