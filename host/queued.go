package host

import (
	"context"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

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
