package host

import (
	"context"
	"fmt"
	"slices"

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
	if u := e.withUnrecorded(run); u != run {
		return u, nil // ended; the store has not taken it yet (disk full)
	}
	if p := e.Progress(run.ID); p != nil {
		run.Progress = p
	}
	if run.State == store.Queued {
		if why := e.waitingReason(ctx, run.ID); why != "" {
			run.Reason = why
		} else if n := e.queuePosition(run.ID); n > 0 {
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
	runs, err := e.cfg.Store.ListRuns(ctx, f)
	if err != nil {
		return nil, err
	}
	out := runs[:0]
	for _, r := range runs {
		r = e.withUnrecorded(r)
		if len(f.States) > 0 && !slices.Contains(f.States, r.State) {
			continue // its end, not yet stored, is outside the filter
		}
		if r.State == store.Queued {
			if why := e.waitingReason(ctx, r.ID); why != "" {
				r.Reason = why
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// Events returns a run's events after seq.
func (e *Engine) Events(ctx context.Context, id string, after uint64) ([]store.Event, error) {
	run, err := e.cfg.Store.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	return e.cfg.Store.Events(ctx, run.ID, after, 0)
}

// Backends reports every backend's health and what auto would pick.
func (e *Engine) Backends(ctx context.Context) api.Backends {
	var out api.Backends
	for _, name := range sandbox.Names {
		sb, ok := e.cfg.Sandboxes[name]
		if !ok {
			continue
		}
		b := api.Backend(sb.Health(ctx))
		out.Backends = append(out.Backends, b)
	}
	out.Default, out.Reason, _ = e.chooseSandbox(ctx, sandbox.Auto, "")
	return out
}

// IsolationView describes a stored plan's isolation as its backend will
// enforce it on this host (api.Plan.Isolation); nil when the backend has
// nothing to say.
func (e *Engine) IsolationView(p *store.Plan) *api.Isolation {
	ex, ok := e.cfg.Sandboxes[p.Sandbox].(sandbox.Explainer)
	if !ok {
		return nil
	}
	v := ex.IsolationView(p.Spec, p.Result)
	if v == nil {
		return nil
	}
	iso := api.Isolation(*v)
	return &iso
}
