package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/internal/jsonfile"
	"github.com/runbox/runbox/record"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

// A sweep's members run the code as it was when the sweep was submitted
// (a --snapshot, on by default). A copy per member at submission cost a
// sweep its size times the workspace's, on disk, before any member ran;
// so the sweep takes one copy, and each member makes its own from it as
// it starts (its copy is the one it may change, and is copied back and
// removed at its end as any snapshot run's). At most the running members'
// copies exist besides the sweep's. The sweep's copy is removed once the
// sweep is whole and none of its runs is queued or running. A retried
// member takes a copy of the workspace as it is when retried, as before
// (docs/RATIONALE.md, snapshots): it never needs the sweep's.

// sweepSnapshotDir is the sweep's one copy of the workspace.
func (e *Engine) sweepSnapshotDir(sweep string) string {
	return filepath.Join(e.sweepDir(sweep), "snapshot")
}

// sweepSnapshotInfo is the record's description of the sweep's copy,
// which each member's record takes.
func sweepSnapshotInfo(dir string) string { return dir + ".json" }

// takeSweepSnapshot copies the workspace once for a sweep whose members
// take snapshots. A workspace the members would refuse anyway is left to
// their refusal.
func (e *Engine) takeSweepSnapshot(ctx context.Context, sweep string, tmpl api.RunRequest) error {
	if !wantSnapshot(tmpl, &store.Campaign{Sweep: sweep}) || checkWorkdir(tmpl.Workdir) != nil {
		return nil
	}
	dir := e.sweepSnapshotDir(sweep)
	snap, err := record.TakeSnapshot(ctx, tmpl.Workdir, dir, e.cfg.Home)
	if err == nil {
		err = jsonfile.Write(sweepSnapshotInfo(dir), snap, false)
	}
	if err != nil {
		e.removeSweepSnapshot(sweep)
		return fmt.Errorf("%w: --snapshot: %v", ErrBadRequest, err)
	}
	return nil
}

// sweepSnapshot is the sweep's copy a member's record names and its own
// copy is made from, or nil when there is none (the sweep's copy was
// removed: the member takes one of its own). A retried member does not
// use it: it runs the workspace as it is when retried, fix included.
func (e *Engine) sweepSnapshot(base *store.Campaign) *record.Snapshot {
	if base == nil || base.Sweep == "" {
		return nil
	}
	dir := e.sweepSnapshotDir(base.Sweep)
	if _, err := os.Stat(record.StampsPath(dir)); err != nil {
		return nil
	}
	b, err := os.ReadFile(sweepSnapshotInfo(dir))
	if err != nil {
		return nil
	}
	var snap record.Snapshot
	if json.Unmarshal(b, &snap) != nil {
		return nil
	}
	snap.From = dir
	return &snap
}

// memberSnapshot points a sweep member's spec at the copy it will make
// from the sweep's as it starts (materialise). The directory is made now,
// empty, for its backend's admission to check.
func (e *Engine) memberSnapshot(id string, shared *record.Snapshot, spec *sandbox.Spec, rec *record.Record) error {
	dir := e.snapshotDir(id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("--snapshot: %w", err)
	}
	spec.Workdir = dir
	snap := *shared
	snap.Dir = dir
	snap.Note += "; a sweep member: the sweep copied the workspace once, at its submission, and this run's copy is made from that one as it starts"
	adoptSnapshot(rec, snap)
	return nil
}

// materialise makes a sweep member's copy from its sweep's as it starts,
// before its backend sees it (a Slurm member's job runs in it). A copy
// with its stamps is whole (a restarted daemon may have made it); one
// without is started over. Were the sweep's copy gone, the member copies
// the workspace as it is now, and says so.
func (e *Engine) materialise(ctx context.Context, id string, p *pendingRun) error {
	if p.snapshotFrom == "" {
		return nil
	}
	dir := e.snapshotDir(id)
	if _, err := os.Stat(record.StampsPath(dir)); err == nil {
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	err := record.CopySnapshot(p.snapshotFrom, dir)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return err
	}
	os.RemoveAll(dir)
	run, gerr := e.cfg.Store.GetRun(ctx, id)
	if gerr != nil {
		return gerr
	}
	if _, terr := record.TakeSnapshot(ctx, run.Spec.Workdir, dir, e.cfg.Home); terr != nil {
		return terr
	}
	e.log.Warn("run: the sweep's snapshot is gone: the member copies the workspace as it is now", "run", id, "from", p.snapshotFrom)
	if _, err := e.cfg.Store.AppendEvent(ctx, store.Event{RunID: id, Time: e.cfg.Now(), Type: store.EventNote,
		Message: "snapshot: the sweep's copy of the workspace was gone; this run copied the workspace as it is at its start"}); err != nil {
		e.log.Warn("run: note", "run", id, "err", err)
	}
	return nil
}

func (e *Engine) removeSweepSnapshot(sweep string) {
	dir := e.sweepSnapshotDir(sweep)
	if err := os.RemoveAll(dir); err != nil {
		e.log.Warn("sweep: remove snapshot", "sweep", sweep, "err", err)
	}
	_ = os.Remove(record.StampsPath(dir))
	_ = os.Remove(sweepSnapshotInfo(dir))
	_ = os.Remove(e.sweepDir(sweep)) // only if empty
}

// releaseSweepSnapshot removes the sweep's copy once nothing can need it:
// the sweep has all its members and none is queued or running (those of
// a sweep a restarted daemon is still creating included: it is not yet
// complete). Under the retry lock, so that no run of the sweep is being
// created meanwhile.
func (e *Engine) releaseSweepSnapshot(sweep string) {
	dir := e.sweepSnapshotDir(sweep)
	if _, err := os.Stat(dir); err != nil || e.ctx.Err() != nil {
		return // none, or the daemon is closing: the next one looks again (RecoverSweeps)
	}
	e.camp.retry.Lock()
	defer e.camp.retry.Unlock()
	e.mu.Lock()
	for _, c := range e.camp.info { // queued and running runs
		if c != nil && c.Sweep == sweep {
			e.mu.Unlock()
			return
		}
	}
	e.mu.Unlock()
	ctx := context.WithoutCancel(e.ctx)
	sw, err := e.cfg.Store.GetSweep(ctx, sweep)
	if store.IsNotFound(err) {
		e.removeSweepSnapshot(sweep)
		return
	}
	if err != nil || !sw.Complete {
		return
	}
	runs, err := e.cfg.Store.ListRuns(ctx, store.Filter{Sweep: sweep})
	if err != nil {
		return
	}
	for _, r := range runs {
		if !e.withUnrecorded(r).State.Terminal() {
			return
		}
	}
	e.log.Debug("sweep: every member ended: its snapshot removed", "sweep", sweep)
	e.removeSweepSnapshot(sweep)
}
