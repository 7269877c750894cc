package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

// Get returns a run by id or unique id prefix, with live progress.
func (e *Engine) Get(ctx context.Context, id string) (*store.Run, error) {
	run, err := e.cfg.Store.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	if p := e.Progress(run.ID); p != nil {
		run.Progress = p
	}
	if run.State == store.Queued {
		if n := e.queuePosition(run.ID); n > 0 {
			run.Reason = fmt.Sprintf("queued: %d run(s) ahead", n-1)
		}
	}
	return run, nil
}

func (e *Engine) queuePosition(id string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, q := range e.queue {
		if q == id {
			return i + 1
		}
	}
	return 0
}

// List returns runs matching f, newest first.
func (e *Engine) List(ctx context.Context, f store.Filter) ([]*store.Run, error) {
	return e.cfg.Store.ListRuns(ctx, f)
}

// Events returns a run's events after seq.
func (e *Engine) Events(ctx context.Context, id string, after uint64) ([]store.Event, error) {
	run, err := e.cfg.Store.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	return e.cfg.Store.Events(ctx, run.ID, after, 0)
}

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
// it as its parent. Overrides in req replace the parent's settings.
func (e *Engine) Retry(ctx context.Context, id string, req api.RunRequest) (*store.Run, error) {
	parent, err := e.cfg.Store.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	if !parent.State.Terminal() {
		return nil, badRequest("run %s is still %s; stop it or wait before retrying", parent.ID, parent.State)
	}
	if req.Sandbox == "" {
		req.Sandbox = parent.Sandbox
	}
	if req.Name == "" {
		req.Name = parent.Name
	}
	if req.Labels == nil {
		req.Labels = parent.Labels
	}
	if err := fillFromSpec(&req, parent.Spec, "run "+parent.ID); err != nil {
		return nil, err
	}
	req.ParentRunID = parent.ID
	return e.Submit(ctx, req)
}

// Backends reports every backend's health and what auto would pick.
func (e *Engine) Backends(ctx context.Context) api.Backends {
	var out api.Backends
	for _, name := range []string{sandbox.Process, sandbox.Docker} {
		sb, ok := e.cfg.Sandboxes[name]
		if !ok {
			continue
		}
		out.Backends = append(out.Backends, api.Backend(sb.Health(ctx)))
	}
	out.Default, out.Reason, _ = e.chooseSandbox(ctx, sandbox.Auto, "")
	return out
}

// Recover re-attaches to every run a previous daemon left unfinished:
// queued runs are queued again, started runs are recovered from their
// sandbox (or marked lost when nothing of them is left).
func (e *Engine) Recover(ctx context.Context) error {
	runs, err := e.cfg.Store.ActiveRuns(ctx)
	if err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	// Oldest first, so the queue keeps its FIFO order.
	for i := len(runs) - 1; i >= 0; i-- {
		e.recoverRun(ctx, runs[i])
	}
	for name, sb := range e.cfg.Sandboxes {
		sw, ok := sb.(sandbox.Sweeper)
		if !ok {
			continue
		}
		n, err := sw.Sweep(ctx, func(id string) bool {
			e.mu.Lock()
			defer e.mu.Unlock()
			_, live := e.done[id]
			return live
		})
		if err != nil {
			e.log.Warn("recover: sweep", "sandbox", name, "err", err)
		} else if n > 0 {
			e.log.Info("recover: swept orphans", "sandbox", name, "count", n)
		}
	}
	return nil
}

func (e *Engine) recoverRun(ctx context.Context, run *store.Run) {
	lost := func(reason string) {
		now := e.cfg.Now()
		exit := sandbox.Exit{Lost: true, Error: reason, EndedAt: now}
		in := cancelledInput
		in.Cancelled, in.SandboxError = false, reason
		if _, err := e.cfg.Store.Transition(ctx, run.ID, store.Lost, "lost: "+reason, func(r *store.Run) {
			r.Exit = &exit
			r.EndedAt = &now
			r.Failure = fallbackFailure(in)
		}); err != nil {
			e.log.Error("recover: mark lost", "run", run.ID, "err", err)
		}
	}
	if run.State == store.Queued {
		p, err := loadPending(e.runDir(run.ID))
		if err != nil {
			lost("its queued spec could not be read after a daemon restart: " + err.Error())
			return
		}
		e.enqueue(run.ID, p)
		return
	}
	sb, ok := e.cfg.Sandboxes[run.Sandbox]
	if !ok {
		lost(fmt.Sprintf("sandbox %q is not available to this daemon", run.Sandbox))
		return
	}
	spec := run.Spec
	if run.State == store.Smoke {
		// A smoke run the previous daemon left behind is not worth
		// re-attaching to: the full run it guarded never started.
		lost("the daemon stopped during the smoke run; retry it")
		return
	}
	// A preparing run may have started just before the daemon died (between
	// Start and recording "running"), so it is looked for like a running one.
	h, err := sb.Recover(ctx, spec)
	if err != nil {
		if errors.Is(err, sandbox.ErrNotFound) && run.State == store.Preparing {
			// Its queued spec is removed once it has started; still there
			// means it never did, so it starts now.
			if p, perr := loadPending(e.runDir(run.ID)); perr == nil {
				p.prepared, p.backend = true, run.Sandbox
				e.enqueue(run.ID, p)
				return
			}
			lost("the daemon stopped while the run was being prepared; it never started — retry it")
		} else if errors.Is(err, sandbox.ErrNotFound) {
			lost("its " + run.Sandbox + " sandbox left no trace (supervisor or container gone)")
		} else {
			lost("re-attach failed: " + err.Error())
		}
		return
	}
	if run.State == store.Preparing {
		if _, err := e.cfg.Store.Transition(ctx, run.ID, store.Running, "running (re-attached after a daemon restart)", func(r *store.Run) {
			r.Ref = h.Ref()
		}); err != nil {
			e.log.Warn("recover: mark running", "run", run.ID, "err", err)
		}
	}
	e.mu.Lock()
	e.track(run.ID)
	r := newRunner(e, run.ID)
	e.active[run.ID] = r
	e.mu.Unlock()
	e.log.Info("recover: re-attached", "run", run.ID, "sandbox", run.Sandbox, "ref", h.Ref())
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer e.finish(run.ID)
		r.supervise(e.ctx, h, spec)
	}()
}
