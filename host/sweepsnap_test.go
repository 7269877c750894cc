package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runbox/runbox/record"
)

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func waitGone(t *testing.T, p string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for exists(p) {
		if time.Now().After(deadline) {
			t.Fatalf("%s still there", p)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Across a daemon restart: the sweep's copy that a daemon killed as its
// last member ended left behind is removed by the next daemon; the copy
// of a sweep with a member still queued is kept (the member makes its
// own from it when it starts) and removed once the sweep has ended.
func TestSweepSnapshotAcrossRestart(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	te := newTestEngine(t, home, 1)
	done := te.sweepOf(t, sweepReq(t, "x", []string{"1", "2"}, 0, 0, "true"))
	te.waitSweep(t, done.ID)
	// The removal ends with the sweep's own directory: waiting for the
	// copy alone let the leftover below be made while the removal went
	// on, and its parent went from under it (a fresh-clone CI met that).
	waitGone(t, te.sweepDir(done.ID))
	// What a daemon killed between the last end and the removal leaves.
	if _, err := record.TakeSnapshot(ctx, t.TempDir(), te.sweepSnapshotDir(done.ID), ""); err != nil {
		t.Fatal(err)
	}
	gate := filepath.Join(t.TempDir(), "go")
	live := te.sweepOf(t, sweepReq(t, "x", []string{"1", "2"}, 1, 0, "sh", "-c", "while [ ! -e "+gate+" ]; do sleep 0.05; done"))
	if !exists(te.sweepSnapshotDir(live.ID)) {
		t.Fatal("the sweep took no copy of its workspace")
	}
	// Its first member running (a daemon stopped mid-start loses it), the
	// second queued behind it (--parallel 1).
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := te.SweepStatus(ctx, live.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Runs) == 2 && v.Counts["running"] == 1 && v.Counts["queued"] == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sweep: %+v", v.Counts)
		}
		time.Sleep(20 * time.Millisecond)
	}
	te.close()

	te = newTestEngine(t, home, 1)
	if err := te.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	te.RecoverSweeps(ctx)
	if exists(te.sweepSnapshotDir(done.ID)) {
		t.Error("the ended sweep's leftover copy was not removed at restart")
	}
	if !exists(record.StampsPath(te.sweepSnapshotDir(live.ID))) {
		t.Fatal("the copy of a sweep with a member still queued was removed at restart")
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	v := te.waitSweep(t, live.ID)
	for _, r := range v.Runs {
		if r.State != "succeeded" {
			t.Errorf("member %d: %s (%s)", r.Index, r.State, r.Reason)
		}
		rec, err := te.Record(ctx, r.ID)
		if err != nil || rec == nil || rec.Snapshot == nil || rec.Snapshot.From != te.sweepSnapshotDir(live.ID) {
			t.Errorf("member %d's record of its snapshot: %+v %v", r.Index, rec, err)
		}
	}
	waitGone(t, te.sweepSnapshotDir(live.ID))
	left, _ := filepath.Glob(filepath.Join(home, "runs", "*", "snapshot*"))
	if len(left) > 0 {
		t.Errorf("members' copies left: %v", left)
	}
}
