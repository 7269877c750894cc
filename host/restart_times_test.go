package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

// Fault: a daemon dies after starting a run's sandbox but before its "running" write reached the disk (the store shows preparing) -> the next daemon re-attaches and records the run as started when its sandbox was started, not at the re-attach; at the end the run's times are its exit record's
func TestRecoveredStartIsNotTheReattachTime(t *testing.T) {
	home := t.TempDir()
	te := newTestEngine(t, home, 2)
	ctx := context.Background()
	// What a daemon does up to the lost write: the run created in
	// preparing, its sandbox started, its queued spec removed.
	// The run lasts until the test has looked at it re-attached (the go
	// file): a fixed sleep could end first on a loaded machine, before
	// the second daemon re-attached, and the run be found ended.
	goFile := filepath.Join(t.TempDir(), "go")
	run, spec := te.preparingRun(t, processRequest(t, "sh", "-c", `while [ ! -e "$0" ]; do sleep 0.02; done`, goFile))
	id := run.ID
	if err := prepareDirs(spec); err != nil {
		t.Fatal(err)
	}
	if _, err := te.cfg.Sandboxes[sandbox.Process].Start(ctx, spec); err != nil {
		t.Fatal(err)
	}
	startedBy := time.Now()
	te.die()
	time.Sleep(400 * time.Millisecond) // a start taken at the re-attach would show

	te2 := newTestEngine(t, home, 2)
	reattach := time.Now()
	if err := te2.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	var live *store.Run
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for {
		if live, err = te2.Get(ctx, id); err != nil {
			t.Fatal(err)
		}
		if live.State != store.Preparing || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if live.State != store.Running || live.StartedAt == nil {
		t.Fatalf("after re-attaching: %s (%s) started %v, want running", live.State, live.Reason, live.StartedAt)
	}
	t.Logf("re-attached: %s", live.Reason)
	if live.StartedAt.Before(run.CreatedAt) || live.StartedAt.After(startedBy) {
		t.Errorf("started_at %s while it runs, want between its creation %s and its sandbox's start %s (re-attached at %s)",
			live.StartedAt.Format(time.StampMicro), run.CreatedAt.Format(time.StampMicro),
			startedBy.Format(time.StampMicro), reattach.Format(time.StampMicro))
	}
	if err := os.WriteFile(goFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	end := te2.wait(t, id)
	if end.State != store.Succeeded || end.Exit == nil {
		t.Fatalf("ended %s (%s)", end.State, end.Reason)
	}
	if !end.StartedAt.Equal(end.Exit.StartedAt) || !end.EndedAt.Equal(end.Exit.EndedAt) {
		t.Errorf("ended with started %s ended %s, its exit record says %s and %s",
			end.StartedAt, end.EndedAt, end.Exit.StartedAt, end.Exit.EndedAt)
	}
}
