package host

import (
	"context"
	"slices"
	"testing"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process"
	"github.com/runbox/runbox/sandbox/slurm"
	"github.com/runbox/runbox/store"
)

// withBackends gives a decision engine the real Slurm and process
// backends' objects: what the queue asks of them (Chainer, Grouper) needs
// no cluster and starts nothing.
func withBackends(e *Engine) *Engine {
	e.cfg.Sandboxes = map[string]sandbox.Sandbox{
		sandbox.Slurm:   slurm.New(slurm.Options{}),
		sandbox.Process: process.New(process.Options{}),
	}
	return e
}

// A Slurm sweep's members wait until every member is created, then start
// together — past the sweep's --parallel and the daemon's own slots,
// which the cluster enforces instead (%P) — each with its task of one
// array; they do not take the slot a process run behind them needs.
func TestSlurmSweepMembersStartAsOneArray(t *testing.T) {
	e := withBackends(decideEngine(t, 0, 1))
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
	e.groupPassLocked(d)
	for i, id := range ids {
		a := e.pending[id].spec.Slurm.Array
		if a == nil || a.Key != "m0" || a.Index != i || a.Size != 4 || a.Parallel != 2 || a.Sweep != "s" {
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

// A run that comes after runs its backend already has is handed to that
// backend held on them (Slurm: --dependency, afterok or afterany), its
// stored spec untouched; it waits in the daemon while one of them is
// still queued there, or when its backend holds no chains.
func TestChainHandsTheRunToItsBackend(t *testing.T) {
	e := withBackends(decideEngine(t, 0, 10))
	ctx := context.Background()
	for _, r := range []*store.Run{
		{ID: "a", State: store.Running, Sandbox: sandbox.Slurm, Ref: "slurm:41"},
		{ID: "b", State: store.Running, Sandbox: sandbox.Slurm, Ref: "slurm:42_3"},
		{ID: "p", State: store.Running, Sandbox: sandbox.Process, Ref: "process:7"},
	} {
		if err := e.cfg.Store.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		e.active[r.ID] = &runner{}
	}
	stored := &sandbox.SlurmSpec{Partition: "gpu", Options: map[string]string{"constraint": "a100"}}
	queue := func(id, backend string, after []string, anyEnd bool) {
		e.queueFor(id, 0)
		e.pending[id].backend = backend
		e.pending[id].spec.Slurm = stored
		e.camp.info[id] = &store.Campaign{After: after, AfterAny: anyEnd}
	}
	queue("ok", sandbox.Slurm, []string{"a", "b"}, false)
	queue("any", sandbox.Slurm, []string{"a"}, true)
	queue("mixed", sandbox.Slurm, []string{"a", "p"}, false)   // p is not a Slurm job
	queue("queued", sandbox.Slurm, []string{"a", "ok"}, false) // ok is still in the daemon's queue
	queue("local", sandbox.Process, []string{"p"}, false)      // the process backend holds no chains
	d := e.decideLocked()
	for id, want := range map[string]string{"ok": "afterok:41:42_3", "any": "afterany:41"} {
		chain := d.chain[id]
		if chain == nil || !slices.Contains(d.start, id) {
			t.Errorf("%s: not handed to Slurm (started %v)", id, d.start)
			continue
		}
		spec := e.pending[id].spec
		chain(&spec)
		if got := spec.Slurm.Options["dependency"]; got != want || spec.Slurm.Partition != "gpu" || spec.Slurm.Options["constraint"] != "a100" {
			t.Errorf("%s: options %+v, want dependency %s beside the run's own", id, spec.Slurm, want)
		}
	}
	if _, changed := stored.Options["dependency"]; changed {
		t.Errorf("the stored spec's options were changed: %v", stored.Options)
	}
	for _, id := range []string{"mixed", "queued", "local"} {
		if slices.Contains(d.start, id) || d.chain[id] != nil {
			t.Errorf("%s: started (%v) or chained; want it waiting in the daemon", id, d.start)
		}
		if e.camp.waiting[id].text == "" {
			t.Errorf("%s: waits with no reason", id)
		}
	}
}
