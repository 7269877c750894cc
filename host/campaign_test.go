package host

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/runbox/runbox/internal/gpu"
	"github.com/runbox/runbox/store"
)

// decideEngine is an engine whose queue is filled by hand, to look at
// one scheduling decision (nothing is started).
func decideEngine(tb testing.TB, gpus, maxParallel int) *Engine {
	tb.Helper()
	home := tb.TempDir()
	st, err := store.Open(filepath.Join(home, "store"), store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	var devs []gpu.Device
	for i := range gpus {
		devs = append(devs, gpu.Device{Index: fmt.Sprint(i)})
	}
	e, err := New(Config{Home: home, Store: st, MaxParallel: maxParallel, GPUs: gpu.Inventory{Devices: devs}})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func (e *Engine) queueFor(id string, gpus int) {
	e.queue = append(e.queue, id)
	e.pending[id] = &pendingRun{}
	if gpus != 0 {
		e.camp.info[id] = &store.Campaign{GPUs: gpus}
	}
}

func (e *Engine) holding(id string, devs ...string) {
	e.active[id] = &runner{}
	e.camp.info[id] = &store.Campaign{GPUs: len(devs), Devices: devs}
	e.camp.alloc.Hold(id, devs)
}

// Fault: a 4-GPU run at the head of the queue while 1-GPU runs keep
// arriving behind it -> under plain first-fit it would wait forever; the
// head reserves what is free, the 1-GPU runs wait, a CPU run behind still
// starts, and the head starts the moment the last GPU is freed.
func TestFourGPURunIsNotStarved(t *testing.T) {
	e := decideEngine(t, 4, 8)
	e.holding("busy", "0")
	e.queueFor("big", 4)
	e.queueFor("small1", 1)
	e.queueFor("small2", 1)
	e.queueFor("cpu", 0)
	d := e.decideLocked()
	if !slices.Equal(d.start, []string{"cpu"}) {
		t.Fatalf("started %v, want only the CPU run", d.start)
	}
	if got := e.camp.waiting["big"].text; got != "waiting for 4 GPUs (3 free: 1,2,3)" {
		t.Errorf("big waits with %q", got)
	}
	if got := e.camp.waiting["small1"].text; got != "waiting for 1 GPU (3 free: 1,2,3)" {
		t.Errorf("small1 waits with %q", got)
	}
	// The GPU is freed: the head goes first and takes all four.
	e.camp.alloc.Release("busy")
	delete(e.active, "busy")
	e.queue = slices.DeleteFunc(e.queue, func(id string) bool { return id == "cpu" })
	d = e.decideLocked()
	if !slices.Equal(d.start, []string{"big"}) || len(d.devices["big"]) != 4 {
		t.Fatalf("after the release: started %v with %v", d.start, d.devices)
	}
}

// Backfill that never delays the head: GPUs the head cannot use do not
// sit idle for runs that fit beside it.
func TestBackfillBesideAWaitingHead(t *testing.T) {
	e := decideEngine(t, 4, 8)
	e.holding("busy", "0", "1", "2")
	e.queueFor("big", 2) // 1 free: waits, reserves GPU 3
	e.queueFor("small", 1)
	d := e.decideLocked()
	if len(d.start) != 0 {
		t.Fatalf("started %v while the head's reserved GPU was the only free one", d.start)
	}
	e2 := decideEngine(t, 4, 8)
	e2.holding("busy", "0", "1")
	e2.queueFor("huge", 4) // reserves 2 and 3
	e2.queueFor("small", 1)
	if d := e2.decideLocked(); len(d.start) != 0 {
		t.Fatalf("small overtook the head: %v", d.start)
	}
}

func TestSlotAndSweepReasons(t *testing.T) {
	e := decideEngine(t, 0, 1)
	e.active["r"] = &runner{}
	e.queueFor("q", 0)
	e.decideLocked()
	if got := e.camp.waiting["q"].text; got != "waiting for a slot (1 running, limit 1)" {
		t.Errorf("got %q", got)
	}
	e2 := decideEngine(t, 0, 8)
	e2.camp.sweeps["s"] = &sweepState{parallel: 2}
	for _, id := range []string{"m1", "m2", "m3"} {
		e2.queueFor(id, 0)
		e2.camp.info[id] = &store.Campaign{Sweep: "s"}
	}
	d := e2.decideLocked()
	if !slices.Equal(d.start, []string{"m1", "m2"}) || e2.camp.waiting["m3"].text != "sweep limit 2 reached" {
		t.Errorf("started %v, m3 %q", d.start, e2.camp.waiting["m3"].text)
	}
}

// BenchmarkScheduleDecision1000Waiting is one scheduling decision with
// 1000 queued runs that cannot start: half wait for GPUs (all held), half
// for a slot (the limit reached).
func BenchmarkScheduleDecision1000Waiting(b *testing.B) {
	e := decideEngine(b, 8, 16)
	for i := range 8 {
		e.holding(fmt.Sprint("gpu-holder-", i), fmt.Sprint(i))
	}
	for i := range 8 {
		e.active[fmt.Sprint("cpu-", i)] = &runner{}
	}
	for i := range 1000 {
		g := 0
		if i%2 == 0 {
			g = 1 + i%4
		}
		e.queueFor(fmt.Sprintf("q%04d", i), g)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if d := e.decideLocked(); len(d.start) != 0 {
			b.Fatal("a run started")
		}
	}
}
