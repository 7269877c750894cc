package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

// Recover re-attaches to every run a previous daemon left unfinished:
// queued runs are queued again, started runs are recovered from their
// sandbox (or marked lost when nothing of them is left).
func (e *Engine) Recover(ctx context.Context) error {
	runs, err := e.cfg.Store.ActiveRuns(ctx)
	if err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	// Oldest first, so the queue keeps its FIFO order. A sweep's members
	// that go in one group of their backend (a Slurm job array) wait
	// until all are back.
	e.mu.Lock()
	e.camp.recovering = true
	e.mu.Unlock()
	for i := len(runs) - 1; i >= 0; i-- {
		e.recoverRun(ctx, runs[i])
	}
	e.mu.Lock()
	e.camp.recovering = false
	e.mu.Unlock()
	e.schedule()
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
	// lost ends the run as lost. Retryable: the daemon's stop lost it,
	// not its command, so running it again may well succeed.
	lost := func(reason string) {
		e.markLost(ctx, run.ID, reason, true)
	}
	if run.State == store.Queued {
		p, err := loadPending(e.runDir(run.ID))
		if err != nil {
			lost("its queued spec could not be read after a daemon restart: " + err.Error())
			return
		}
		p.backend = run.Sandbox
		e.trackCampaign(run.ID, run.Campaign, false)
		e.enqueue(run.ID, p)
		return
	}
	sb, ok := e.cfg.Sandboxes[run.Sandbox]
	if !ok {
		e.markLost(ctx, run.ID, fmt.Sprintf("sandbox %q is not available to this daemon", run.Sandbox), false)
		return
	}
	spec := run.Spec
	if run.State == store.Smoke {
		// A smoke run the previous daemon left behind is not worth
		// re-attaching to: the full run it guarded never started.
		e.stopLeftSmoke(ctx, sb, run)
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
				e.trackCampaign(run.ID, run.Campaign, false) // it gets its GPUs again
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
	e.trackCampaign(run.ID, run.Campaign, true)
	e.mu.Lock()
	if _, ok := e.cfg.Sandboxes[run.Sandbox].(sandbox.Grouper); ok && run.Campaign != nil && run.Campaign.Sweep != "" {
		e.camp.grouped[run.ID] = true // in its sweep's group (backendheld.go)
	}
	e.track(run.ID)
	r := newRunner(e, run.ID)
	e.active[run.ID] = r
	e.mu.Unlock()
	r.resumeMetrics(ctx)
	go e.completeRecordSoon(e.ctx, run.ID, spec, run.Sandbox) // record.go: one the dead daemon left incomplete
	e.log.Info("recover: re-attached", "run", run.ID, "sandbox", run.Sandbox, "ref", h.Ref())
	q, queued := h.(sandbox.Queued)
	if run.State == store.Preparing && !queued {
		// Before the daemon answers anyone: it is running.
		r.markStarted(ctx, h)
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer e.finish(run.ID)
		if queued {
			// The backend's reasons reach the run again. Only then: a job
			// still pending in the backend's queue stays in preparing, as
			// awaitStart says; one that ended without ever starting goes
			// from preparing to its end.
			unseen := r.awaitStart(e.ctx, q)
			if run.State == store.Preparing && !unseen {
				r.markStarted(e.ctx, h)
			}
		}
		r.supervise(e.ctx, h, spec)
	}()
}

// markLost ends a run the daemon lost track of.
func (e *Engine) markLost(ctx context.Context, id, reason string, retryable bool) {
	now := e.cfg.Now()
	exit := sandbox.Exit{Lost: true, Error: reason, EndedAt: now}
	in := cancelledInput
	in.Cancelled, in.SandboxError = false, reason
	f := fallbackFailure(in)
	f.Retryable = retryable
	if _, err := e.cfg.Store.Transition(ctx, id, store.Lost, "lost: "+reason, func(r *store.Run) {
		r.Exit = &exit
		r.EndedAt = &now
		r.Failure = f
	}); err != nil {
		e.log.Error("recover: mark lost", "run", id, "err", err)
	}
}

// stopLeftSmoke ends a run a dead daemon left in its smoke run: the smoke
// command is stopped (its whole tree, with the run's grace), then the run
// is lost. Left going, it wrote on into the log of a run already called
// lost. The stop goes on beside the recovery of the other runs.
func (e *Engine) stopLeftSmoke(ctx context.Context, sb sandbox.Sandbox, run *store.Run) {
	const reason = "the daemon stopped during the smoke run; retry it"
	h, err := sb.Recover(ctx, e.smokeSpec(run.Spec))
	if err != nil {
		if !errors.Is(err, sandbox.ErrNotFound) {
			e.log.Warn("recover: find the smoke run", "run", run.ID, "err", err)
		}
		e.markLost(ctx, run.ID, reason, true)
		return
	}
	e.mu.Lock()
	e.track(run.ID) // live until stopped: not an orphan to sweep; waiters wait for its end
	e.mu.Unlock()
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer e.ended(run.ID)
		if err := h.Stop(e.ctx, run.Spec.Grace); err != nil && e.ctx.Err() == nil {
			e.log.Warn("recover: stop the smoke run", "run", run.ID, "err", err)
		}
		settle(e.ctx, h)
		e.markLost(e.ctx, run.ID, reason, true)
	}()
}

// startTimer is a handle that knows when its run started (a Slurm job's
// start, from its record).
type startTimer interface {
	StartedAt() time.Time
}

// markStarted records a re-attached run found in preparing as running.
// Its start was never stored (the daemon died before its unsynced
// "running" write reached the disk), and the re-attach time is not it:
// the backend's own start time is, where the handle knows it; else the
// run's last move to preparing, the moment its sandbox was started
// (milliseconds before its command ran). The exit record's start
// replaces that estimate when the run ends (runner.trueTimes).
func (r *runner) markStarted(ctx context.Context, h sandbox.Handle) {
	start, how := time.Time{}, ""
	if st, ok := h.(startTimer); ok {
		start, how = st.StartedAt(), "the backend's start time"
	}
	if start.IsZero() {
		start, how = r.e.cfg.Now(), "re-attach time (no earlier trace of its start)"
		if evs, err := r.e.cfg.Store.Events(ctx, r.id, 0, 0); err == nil {
			for _, ev := range evs {
				if ev.Type == store.EventState && ev.State == store.Preparing {
					start, how = ev.Time, "when its sandbox was started"
				}
			}
		}
	}
	if _, err := r.e.cfg.Store.Transition(ctx, r.id, store.Running, "running (re-attached after a daemon restart; start time: "+how+")", func(run *store.Run) {
		run.Ref = h.Ref()
		run.StartedAt = &start
	}); err != nil {
		r.e.log.Warn("recover: mark running", "run", r.id, "err", err)
	}
}
