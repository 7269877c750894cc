package host

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/runbox/runbox/store"
)

// Fault: 200 submissions at once under a parallelism limit of 1 -> runs start in the order they were created (their ids, which sort by creation), none overtakes an earlier one
func TestConcurrentSubmissionsStartInCreationOrder(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 1)
	ctx := context.Background()
	const n = 200
	wd := t.TempDir()
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			req := processRequest(t, "true")
			req.Workdir = wd
			r, err := te.Submit(ctx, req)
			if err == nil {
				ids[i] = r.ID
			}
			errs[i] = err
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("submission %d: %v", i, err)
		}
	}
	type started struct {
		id      string
		created time.Time
		at      time.Time
	}
	var runs []started
	for _, id := range ids {
		r := te.wait(t, id)
		if r.State != store.Succeeded {
			t.Fatalf("run %s ended %s (%s)", id, r.State, r.Reason)
		}
		evs, err := te.Events(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		s := started{id: id, created: r.CreatedAt}
		for _, ev := range evs {
			if ev.Type == store.EventState && ev.State == store.Running {
				s.at = ev.Time
			}
		}
		if s.at.IsZero() {
			t.Fatalf("run %s has no running event", id)
		}
		runs = append(runs, s)
	}
	// Start order, as the store's events tell it.
	sort.Slice(runs, func(i, j int) bool { return runs[i].at.Before(runs[j].at) })
	overtook := 0
	for i := 1; i < len(runs); i++ {
		if runs[i].id < runs[i-1].id || runs[i].created.Before(runs[i-1].created) {
			overtook++
			if overtook <= 5 {
				t.Errorf("run %s (created %s) started at %s, before run %s (created earlier, %s)",
					runs[i-1].id, runs[i-1].created.Format(time.StampMicro), runs[i-1].at.Format(time.StampMicro),
					runs[i].id, runs[i].created.Format(time.StampMicro))
			}
		}
	}
	if overtook > 0 {
		t.Fatalf("%d of %d runs started before a run created earlier", overtook, n)
	}
}
