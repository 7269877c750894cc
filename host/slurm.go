package host

import (
	"context"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

// slurmSpec maps the request's Slurm settings onto the spec; they mean
// nothing to another backend, so asking for them there is an error.
func slurmSpec(backend string, req api.RunRequest) (*sandbox.SlurmSpec, error) {
	s := req.Slurm
	if s == nil {
		return nil, nil
	}
	if backend != sandbox.Slurm {
		return nil, badRequest("partition, account, qos, slurm options and queue timeout need --sandbox slurm (this run goes to %s)", backend)
	}
	if s.QueueTimeout < 0 {
		return nil, badRequest("queue timeout %s: cannot be negative", s.QueueTimeout)
	}
	return &sandbox.SlurmSpec{Partition: s.Partition, Account: s.Account, QOS: s.QOS,
		Options: s.Options, QueueTimeout: time.Duration(s.QueueTimeout)}, nil
}

// slurmFromSpec fills a retry's unset Slurm settings from the stored spec.
func slurmFromSpec(req *api.RunRequest, s sandbox.Spec) {
	if req.Slurm != nil || s.Slurm == nil {
		return
	}
	req.Slurm = &api.SlurmRequest{Partition: s.Slurm.Partition, Account: s.Slurm.Account, QOS: s.Slurm.QOS,
		Options: s.Slurm.Options, QueueTimeout: api.Duration(s.Slurm.QueueTimeout)}
}

// awaitStart keeps a run the backend still holds in its own queue (a
// PENDING Slurm job) in preparing, with the backend's reason as the run's
// reason, until it starts; later reasons (controller unreachable) keep
// updating the run's reason while it runs. Stop reaches the run meanwhile.
func (r *runner) awaitStart(ctx context.Context, q sandbox.Queued) {
	r.setHandle(q)
	report := func(reason string) {
		if _, err := r.e.cfg.Store.UpdateRun(ctx, r.id, func(run *store.Run) error {
			if !run.State.Terminal() {
				run.Reason = reason
			}
			return nil
		}); err != nil && ctx.Err() == nil {
			r.e.log.Warn("run: report", "run", r.id, "err", err)
		}
	}
	if err := q.Started(ctx, report); err != nil && ctx.Err() == nil {
		r.e.log.Warn("run: await start", "run", r.id, "err", err)
	}
}
