package host

import (
	"context"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

// Stop ends a run: a queued run is cancelled at once, a started one is sent
// SIGTERM (docker stop), given grace, then killed. It returns without
// waiting for the end; use Wait for that.
func (e *Engine) Stop(ctx context.Context, id string, grace time.Duration) (*store.Run, error) {
	run, err := e.cfg.Store.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	if run.State.Terminal() {
		return run, nil
	}
	if e.dequeue(run.ID) {
		now := e.cfg.Now()
		removeSecrets(e.runDir(run.ID))
		e.removeSnapshot(run.ID) // it never ran: nothing to copy back
		run, err = e.cfg.Store.Transition(ctx, run.ID, store.Cancelled, "CANCELLED: stopped while queued", func(r *store.Run) {
			r.EndedAt = &now
			r.Exit = &sandbox.Exit{Cancelled: true, Code: 130, EndedAt: now}
			r.Failure = fallbackFailure(cancelledInput)
		})
		e.finish(run.ID)
		return run, err
	}
	if r := e.runner(run.ID); r != nil {
		if grace == 0 {
			grace = run.Spec.Grace
		}
		go r.stop(context.WithoutCancel(e.ctx), grace)
	}
	run.Reason = "stopping"
	return run, nil
}

// Wait blocks until the run is terminal or ctx ends, then returns it as it
// stands (the caller checks State).
func (e *Engine) Wait(ctx context.Context, id string) (*store.Run, error) {
	run, err := e.cfg.Store.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	if !run.State.Terminal() {
		if ch := e.Done(run.ID); ch != nil {
			select {
			case <-ch:
			case <-ctx.Done():
			}
		}
	}
	return e.Get(context.WithoutCancel(ctx), run.ID)
}

// Retry starts a new run of the same command and settings as id, linked to
// it as its parent. Overrides in req replace the parent's settings. A
// sweep member's retry stays in its sweep.
func (e *Engine) Retry(ctx context.Context, id string, req api.RunRequest) (*store.Run, error) {
	parent, err := e.cfg.Store.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	if !parent.State.Terminal() {
		return nil, badRequest("run %s is still %s; stop it or wait before retrying", parent.ID, parent.State)
	}
	if c := parent.Campaign; c != nil && c.Sweep != "" {
		return e.retryMember(ctx, parent, req) // the member's next attempt (sweep.go)
	}
	return e.submit(ctx, req, parent, nil) // its settings filled in by prepare
}
