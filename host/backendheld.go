package host

import (
	"context"
	"path/filepath"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

// Runs a backend's own scheduler holds for the campaign layer, asked for
// by capability, never by backend name:
//
//   - a chain (sandbox.Chainer): a run that comes after runs its backend
//     already has is handed to it at once, held until they end (no round
//     trip through the daemon, which may be down by then). If one of them
//     fails where the run needed it to succeed, the daemon stops the held
//     run with the reason naming that run (heldAfterLocked).
//   - a sweep's group (sandbox.Grouper): its members are still ordinary
//     runs, each with its runner, but the backend takes them as one
//     submission and holds them to the sweep's --parallel, so the daemon
//     gates them neither by the sweep's limit nor by its own slots. It
//     starts them together, once every member is created.

// chainLocked returns what makes queued run id wait in its backend for the
// runs it comes after, or nil when it must wait in the daemon: its backend
// holds no chains, or a run it comes after is not yet a job of that
// backend. Called with e.mu held.
func (e *Engine) chainLocked(id string, c *store.Campaign) func(*sandbox.Spec) {
	p := e.pending[id]
	if p == nil {
		return nil
	}
	ch, ok := e.cfg.Sandboxes[p.backend].(sandbox.Chainer)
	if !ok {
		return nil
	}
	var refs []string
	for _, dep := range c.After {
		if st, ended := e.camp.ended[dep]; ended {
			if st == store.Succeeded || c.AfterAny {
				continue
			}
			return nil // depStateLocked cancels it
		}
		if _, live := e.active[dep]; !live {
			return nil // still queued in the daemon
		}
		run, err := e.cfg.Store.GetRun(e.ctx, dep)
		if err != nil || run.Sandbox != p.backend || run.Ref == "" {
			return nil
		}
		refs = append(refs, run.Ref)
	}
	return ch.ChainAfter(refs, c.AfterAny)
}

// heldAfterLocked lists the started runs that their backend holds for run
// id, which ended in state: they can never start unless it succeeded (or
// they start after it whatever happens).
func (e *Engine) heldAfterLocked(id string, state store.State) []*runner {
	if !state.Terminal() || state == store.Succeeded {
		return nil
	}
	var out []*runner
	for rid, r := range e.active {
		c := e.camp.info[rid]
		if c == nil || c.AfterAny {
			continue
		}
		for _, dep := range c.After {
			if dep == id {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// groupedLocked reports whether queued run id is a sweep member that its
// backend takes as one group with the sweep's others. Called with e.mu
// held.
func (e *Engine) groupedLocked(id string) bool {
	p := e.pending[id]
	c := e.camp.info[id]
	if p == nil || c == nil || c.Sweep == "" {
		return false
	}
	_, ok := e.cfg.Sandboxes[p.backend].(sandbox.Grouper)
	return ok
}

// groupName is what queued run id's group is called by its backend.
// Called with e.mu held, for a run groupedLocked took.
func (e *Engine) groupName(id string) string {
	return e.cfg.Sandboxes[e.pending[id].backend].(sandbox.Grouper).GroupName()
}

// groupPassLocked gives the members a pass of the scheduler starts their
// place in their sweep's group: those of one sweep started together share
// one group, named after the first of them; a group of the sweep started
// later (a retried member, one whose --after runs ended later) comes after
// the sweep's earlier groups, and the sweep's --parallel holds across
// them. Called with e.mu held, before the runners start.
func (e *Engine) groupPassLocked(d queueDecision) {
	bySweep := map[string][]string{}
	for _, id := range d.start {
		if sw := d.group[id]; sw != "" {
			bySweep[sw] = append(bySweep[sw], id)
		}
	}
	for sw, ids := range bySweep {
		st := e.sweepStateLocked(sw)
		key := ids[0]
		for _, id := range ids {
			p := e.pending[id]
			g := sandbox.Group{Key: key, Dir: filepath.Join(e.sweepDir(sw), p.backend+"-"+key), Index: e.camp.info[id].Index, Size: len(ids), Sweep: sw}
			if st != nil {
				g.Parallel = st.parallel
			}
			e.cfg.Sandboxes[p.backend].(sandbox.Grouper).Group(&p.spec, g)
			e.camp.grouped[id] = true
		}
	}
}

// groupedActiveLocked counts the active runs in a backend's group, which
// take none of the daemon's slots. Called with e.mu held.
func (e *Engine) groupedActiveLocked() int {
	n := 0
	for id := range e.camp.grouped {
		if _, ok := e.active[id]; ok {
			n++
		}
	}
	return n
}

// stopGroups cancels the groups of a sweep's live members, each backend's
// at once; their runs end cancelled. What it could not reach (a member
// not yet in its group) is stopped one by one by the caller.
func (e *Engine) stopGroups(ctx context.Context, runs []*store.Run) {
	refs := map[string][]string{} // backend → refs
	for _, run := range runs {
		if run.State.Terminal() {
			continue
		}
		if _, ok := e.cfg.Sandboxes[run.Sandbox].(sandbox.Grouper); !ok {
			continue
		}
		r := e.runner(run.ID)
		if r == nil {
			continue
		}
		r.mu.Lock()
		h := r.handle
		r.mu.Unlock()
		if h != nil {
			refs[run.Sandbox] = append(refs[run.Sandbox], h.Ref())
		}
	}
	for backend, rs := range refs {
		if err := e.cfg.Sandboxes[backend].(sandbox.Grouper).StopGroups(ctx, rs); err != nil {
			e.log.Warn("sweep stop: groups", "sandbox", backend, "err", err)
		}
	}
}

// stopPendingMembers cancels the members of a sweep still pending in
// their backend's group (the members not yet started, as --max-failures
// says), each with the reason; running members go on.
func (e *Engine) stopPendingMembers(sweep, reason string) {
	e.mu.Lock()
	var rs []*runner
	for id, r := range e.active {
		if c := e.camp.info[id]; c != nil && c.Sweep == sweep && e.camp.grouped[id] {
			rs = append(rs, r)
		}
	}
	e.mu.Unlock()
	ctx := context.WithoutCancel(e.ctx)
	for _, r := range rs {
		run, err := e.cfg.Store.GetRun(ctx, r.id)
		if err != nil || run.State != store.Preparing {
			continue // running (or ended): it goes on
		}
		r.mu.Lock()
		h := r.handle
		r.mu.Unlock()
		if q, ok := h.(sandbox.Queued); ok && !q.HoldIfQueued(ctx) {
			continue // the backend started it since the last look: it goes on
		}
		r.mu.Lock()
		r.stopWhy = reason // shown as "CANCELLED: " + reason, as for a queued member
		r.mu.Unlock()
		go r.stop(ctx, 0)
	}
}
