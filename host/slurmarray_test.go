package host

import (
	"slices"
	"testing"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

// A Slurm sweep's members wait until every member is created, then start
// together — past the sweep's --parallel and the daemon's own slots,
// which the cluster enforces instead (%P) — each with its task of one
// array; they do not take the slot a process run behind them needs.
func TestSlurmSweepMembersStartAsOneArray(t *testing.T) {
	e := decideEngine(t, 0, 1)
	st := &sweepState{parallel: 2}
	e.camp.sweeps["s"] = st
	ids := []string{"m0", "m1", "m2", "m3"}
	for i, id := range ids {
		e.queueFor(id, 0)
		e.pending[id].backend = sandbox.Slurm
		e.camp.info[id] = &store.Campaign{Sweep: "s", Index: i}
	}
	e.queueFor("local", 0)
	d := e.decideLocked()
	if !slices.Equal(d.start, []string{"local"}) {
		t.Fatalf("before the sweep is complete: started %v, want only the process run", d.start)
	}
	if got := e.camp.waiting["m0"].text; got != "waiting for the sweep's other members (one Slurm job array)" {
		t.Errorf("m0 waits with %q", got)
	}

	e.queue = slices.DeleteFunc(e.queue, func(id string) bool { return id == "local" })
	e.active["busy"] = &runner{} // the daemon's one slot is taken
	st.complete = true
	d = e.decideLocked()
	if !slices.Equal(d.start, ids) {
		t.Fatalf("complete sweep: started %v, want all of %v", d.start, ids)
	}
	e.arrayPassLocked(d)
	for i, id := range ids {
		a := e.pending[id].spec.Slurm.Array
		if a == nil || a.Key != "m0" || a.Index != i || a.Size != 4 || a.Parallel != 2 || a.Group != "s" {
			t.Errorf("%s: array %+v", id, a)
		}
		e.active[id] = &runner{} // as schedule does
		delete(e.pending, id)
	}
	e.queue = nil
	e.queueFor("local2", 0)
	delete(e.active, "busy")
	if d = e.decideLocked(); !slices.Equal(d.start, []string{"local2"}) {
		t.Errorf("with four array tasks active: started %v, want the process run in the free slot", d.start)
	}
}
