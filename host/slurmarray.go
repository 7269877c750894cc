package host

import (
	"context"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

// A sweep on Slurm is one job array (sandbox/slurm/array.go): its members
// are still ordinary runs, each with its runner and its own task of the
// array, but the cluster holds them to the sweep's --parallel (%P), so
// the daemon gates them neither by the sweep's limit nor by its own
// slots. It starts them together, once every member is created, so that
// they go in one sbatch.

// slurmArrayLocked reports whether queued run id is a sweep member that
// goes in a Slurm job array. Called with e.mu held.
func (e *Engine) slurmArrayLocked(id string) bool {
	p := e.pending[id]
	c := e.camp.info[id]
	return p != nil && p.backend == sandbox.Slurm && c != nil && c.Sweep != ""
}

// arrayPassLocked gives the members a pass of the scheduler starts their
// place in the sweep's array: those of one sweep started together share
// one array (split by the Slurm backend into arrays of at most the
// cluster's MaxArraySize, chained), named after the first of them; the
// sweep id is the arrays' group, so an array of the sweep submitted later
// (a retried member, one whose --after runs ended later) is held by the
// cluster until the sweep's earlier arrays end, and the sweep's %P holds
// across them. Called with e.mu held, before the runners start.
func (e *Engine) arrayPassLocked(d queueDecision) {
	bySweep := map[string][]string{}
	for _, id := range d.start {
		if sw := d.array[id]; sw != "" {
			bySweep[sw] = append(bySweep[sw], id)
		}
	}
	for sw, ids := range bySweep {
		st := e.sweepStateLocked(sw)
		key := ids[0]
		for _, id := range ids {
			p := e.pending[id]
			sl := sandbox.SlurmSpec{}
			if p.spec.Slurm != nil {
				sl = *p.spec.Slurm
			}
			sl.Array = &sandbox.SlurmArray{Key: key, Dir: filepath.Join(e.sweepDir(sw), "slurm-"+key),
				Index: e.camp.info[id].Index, Size: len(ids), Group: sw}
			if st != nil {
				sl.Array.Parallel = st.parallel
			}
			p.spec.Slurm = &sl
			e.camp.array[id] = true
		}
	}
}

// arrayActiveLocked counts the active runs that are array tasks, which
// take none of the daemon's slots. Called with e.mu held.
func (e *Engine) arrayActiveLocked() int {
	n := 0
	for id := range e.camp.array {
		if _, ok := e.active[id]; ok {
			n++
		}
	}
	return n
}

// arrayStopper is a backend that cancels a whole job array at once.
type arrayStopper interface {
	StopArray(ctx context.Context, ref string) error
}

// stopArrays cancels the job arrays of a sweep's live members with one
// scancel each; their runs end cancelled. What it could not reach (a
// member not yet in Slurm) is stopped one by one by the caller.
func (e *Engine) stopArrays(ctx context.Context, runs []*store.Run) {
	sb, ok := e.cfg.Sandboxes[sandbox.Slurm].(arrayStopper)
	if !ok {
		return
	}
	done := map[string]bool{}
	var refs []string
	for _, run := range runs {
		if run.State.Terminal() || run.Sandbox != sandbox.Slurm {
			continue
		}
		r := e.runner(run.ID)
		if r == nil {
			continue
		}
		r.mu.Lock()
		h := r.handle
		r.mu.Unlock()
		if h == nil {
			continue
		}
		ref := h.Ref()
		array, _, isTask := strings.Cut(ref, "_")
		if !isTask || done[array] {
			continue
		}
		done[array] = true
		refs = append(refs, ref)
	}
	// The newest array first: a sweep's arrays go one after another
	// (afterany), and cancelling an older one first would let the next
	// start for a moment.
	sort.Slice(refs, func(i, j int) bool { return arrayNum(refs[i]) > arrayNum(refs[j]) })
	for _, ref := range refs {
		if err := sb.StopArray(ctx, ref); err != nil {
			e.log.Warn("sweep stop: job array", "ref", ref, "err", err)
		}
	}
}

// arrayNum is the job id of task ref "slurm:123_4" (0 if none).
func arrayNum(ref string) int64 {
	a, _, _ := strings.Cut(strings.TrimPrefix(ref, "slurm:"), "_")
	n, _ := strconv.ParseInt(a, 10, 64)
	return n
}

// stopPendingMembers cancels the members of a sweep still pending in its
// Slurm array (the members not yet started, as --max-failures says),
// each with the reason; running members go on.
func (e *Engine) stopPendingMembers(sweep, reason string) {
	e.mu.Lock()
	var rs []*runner
	for id, r := range e.active {
		if c := e.camp.info[id]; c != nil && c.Sweep == sweep && e.camp.array[id] {
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
		if p, ok := h.(interface{ Pending(context.Context) bool }); ok && !p.Pending(ctx) {
			continue // the cluster started it since the last look: it goes on
		}
		r.mu.Lock()
		r.stopWhy = reason // shown as "CANCELLED: " + reason, as for a queued member
		r.mu.Unlock()
		go r.stop(ctx, 0)
	}
}
