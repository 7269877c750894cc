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
//
// The run names its place in the backend (its Ref: the Slurm job) from
// the start of the wait: the job exists from then on, and a run that
// leaves the queue with no start seen still names it. awaitStart says
// whether it left so (cancelled while pending, or ended between two looks
// of the backend); its end then carries its true start, if it had one
// (trueTimes).
func (r *runner) awaitStart(ctx context.Context, q sandbox.Queued) (unseen bool) {
	r.setHandle(q)
	ref := q.Ref()
	update := func(fn func(run *store.Run)) {
		if _, err := r.e.cfg.Store.UpdateRun(ctx, r.id, func(run *store.Run) error {
			if !run.State.Terminal() {
				fn(run)
			}
			return nil
		}); err != nil && ctx.Err() == nil {
			r.e.log.Warn("run: report", "run", r.id, "err", err)
		}
	}
	update(func(run *store.Run) { run.Ref = ref })
	report := func(reason string) { update(func(run *store.Run) { run.Reason = reason }) }
	if err := q.Started(ctx, report); err != nil && ctx.Err() == nil {
		r.e.log.Warn("run: await start", "run", r.id, "err", err)
	}
	st, knows := q.(startTimer)
	return knows && st.StartedAt().IsZero()
}
