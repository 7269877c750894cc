package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/record"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

// The record of what ran (package record): its cheap part is taken in
// Submit, its slow part (git diff, packages, host) by the runner once the
// run has started; both are kept in the store beside the run. This file is
// the engine's side of it: taking, completing, reading, diffing,
// comparing, and the --snapshot copy.

// recordCache keeps interpreter probes and site-packages listings for the
// daemon's life: they are facts of this machine, shared by every run.
var recordCache = record.NewCache()

// imageInspector is a sandbox that can name an image's id and digest.
type imageInspector interface {
	InspectImage(ctx context.Context, ref string) (id, digest string, err error)
}

func recordInput(spec sandbox.Spec, backend string) record.Input {
	return record.Input{
		Command: spec.Command, Shell: spec.Shell, Workdir: spec.Workdir,
		Sandbox: backend, Isolate: spec.Isolate, Image: spec.Image,
		Limits: record.Limits{
			MemoryBytes: spec.Limits.MemoryBytes, CPUs: spec.Limits.CPUs, Pids: spec.Limits.Pids,
			TimeoutSeconds: spec.Timeout.Seconds(), GPUs: spec.GPUs, Network: spec.Network,
		},
		RunEnv: spec.Env,
	}
}

// takeRecord is the submit path's part: no process spawned, a few small
// files read (bench: BenchmarkTakeRecord).
func (e *Engine) takeRecord(req api.RunRequest, spec sandbox.Spec, backend string) *record.Record {
	if req.NoRecord {
		return nil
	}
	in := recordInput(spec, backend)
	in.Env = store.RedactEnv(req.Env)
	given := map[string]bool{}
	for _, kv := range req.Env {
		k, _, _ := strings.Cut(kv, "=")
		given[k] = true
	}
	for _, kv := range spec.Env {
		if k, _, _ := strings.Cut(kv, "="); !given[k] {
			in.EnvNames = append(in.EnvNames, k)
		}
	}
	return record.Fast(in, e.cfg.Now())
}

// saveRecord keeps a record beside its run.
func (e *Engine) saveRecord(ctx context.Context, id string, rec *record.Record) {
	if rec == nil {
		return
	}
	b, err := json.Marshal(rec)
	if err == nil {
		err = e.cfg.Store.PutRecord(ctx, id, b)
	}
	if err != nil && ctx.Err() == nil {
		e.log.Warn("run: save record", "run", id, "err", err)
	}
}

// recordDelay is how long after its start a run's record is completed,
// unless the run ends first: the slow part (git, the interpreter) must not
// compete for the CPU with a short run and its answer; a short run's
// record is completed once its end is recorded.
const recordDelay = 500 * time.Millisecond

// completeRecordSoon hands the run to the engine's completer after
// recordDelay or the run's end.
func (e *Engine) completeRecordSoon(ctx context.Context, id string, spec sandbox.Spec, backend string) {
	done := e.Done(id)
	t := time.NewTimer(recordDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
	case <-ctx.Done():
		return
	}
	c, _ := completers.LoadOrStore(e, &completer{})
	c.(*completer).add(ctx, e, pendingRecord{id: id, spec: spec, backend: backend})
}

// A completer completes records one batch at a time (the runs handed to
// it within batchWindow): runs that wait together share one reading of their workspace's git state (git status
// and diff cost ~10 ms of CPU each; `runbox run -- true` back to back in a
// dirty repository took twice as long with a git reading per run, beside
// the next run on two busy cores). A batch's reading is taken after the
// batch was formed, so it is as fresh for each of its runs as a reading of
// its own would have been.
type completer struct {
	mu      sync.Mutex
	queue   []pendingRecord
	running bool
}

type pendingRecord struct {
	id      string
	spec    sandbox.Spec
	backend string
}

// completers holds each engine's completer.
var completers sync.Map

func (c *completer) add(ctx context.Context, e *Engine, p pendingRecord) {
	c.mu.Lock()
	c.queue = append(c.queue, p)
	start := !c.running
	c.running = true
	c.mu.Unlock()
	if start {
		go c.drain(ctx, e)
	}
}

// batchWindow is how long a completer gathers runs before it reads.
const batchWindow = 250 * time.Millisecond

func (c *completer) drain(ctx context.Context, e *Engine) {
	for {
		select {
		case <-time.After(batchWindow):
		case <-ctx.Done():
		}
		c.mu.Lock()
		batch := c.queue
		c.queue = nil
		if len(batch) == 0 || ctx.Err() != nil {
			c.running = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		formed := time.Now()
		for _, p := range batch {
			e.completeRecord(ctx, p.id, p.spec, p.backend, formed)
		}
	}
}

// completeRecord adds the slow parts once the run has started; spec is
// the one that runs (its env resolved: it finds the run's interpreter).
func (e *Engine) completeRecord(ctx context.Context, id string, spec sandbox.Spec, backend string, fresh time.Time) {
	rec, err := e.Record(ctx, id)
	if err != nil || rec == nil || rec.Complete {
		return
	}
	in := recordInput(spec, backend)
	if rec.Snapshot != nil {
		in.Workdir = rec.Workdir // the record is of the workspace, not its copy
	}
	if run, err := e.cfg.Store.GetRun(ctx, id); err == nil && run.StartedAt != nil {
		in.Started = *run.StartedAt
	}
	if ii, ok := e.cfg.Sandboxes[backend].(imageInspector); ok {
		in.InspectImage = ii.InspectImage
	}
	recordCache.CompleteAt(ctx, rec, in, fresh)
	// The run may have ended while the record was read, and its end
	// written what its snapshot copied back (settleSnapshot): keep that.
	recordWrites.Lock()
	defer recordWrites.Unlock()
	if rec.Snapshot != nil {
		if cur, err := e.Record(ctx, id); err == nil && cur != nil && cur.Snapshot != nil {
			rec.Snapshot = cur.Snapshot
		}
	}
	e.saveRecord(ctx, id, rec)
}

// recordWrites orders the two read-modify-writes of a record that can
// overlap: its completion and a snapshot run's end.
var recordWrites sync.Mutex

// Record returns a run's record (by exact id), or nil when it has none.
func (e *Engine) Record(ctx context.Context, id string) (*record.Record, error) {
	b, err := e.cfg.Store.Record(ctx, id)
	if err != nil || b == nil {
		return nil, err
	}
	var rec record.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("run %s: record: %w", id, err)
	}
	return &rec, nil
}

// snapshotDir is where a run's --snapshot copy lives (removed at its end).
func (e *Engine) snapshotDir(id string) string { return filepath.Join(e.runDir(id), "snapshot") }

// takeSnapshot copies the workspace for a --snapshot run and points the
// spec at the copy.
func (e *Engine) takeSnapshot(ctx context.Context, id string, spec *sandbox.Spec, rec *record.Record) error {
	snap, err := record.TakeSnapshot(ctx, spec.Workdir, e.snapshotDir(id), e.cfg.Home)
	if err != nil {
		os.RemoveAll(e.snapshotDir(id))
		return fmt.Errorf("%w: --snapshot: %v", ErrBadRequest, err)
	}
	spec.Workdir = snap.Dir
	adoptSnapshot(rec, *snap)
	return nil
}

// adoptSnapshot describes a run's copy in its record, and the code the
// copy holds (read as it was taken) as the record's code.
func adoptSnapshot(rec *record.Record, snap record.Snapshot) {
	if rec == nil {
		return
	}
	if snap.Code != nil {
		code := *snap.Code
		rec.Code = &code
		snap.Code = nil
	}
	rec.Snapshot = &snap
}

// linkNewPaths, as a --snapshot run chained --after others starts, links
// into its copy the workspace paths that appeared since the submission
// (record.LinkNew): it reads what the runs it waited for wrote. A run that
// waits for none (a sweep's member, a plain --snapshot run) sees its copy
// alone: linked, the files its sweep's earlier members copied back would
// be read and written through by the next ones (a member resuming from
// another's checkpoint). A sweep chained --after a run links what
// appeared, its earlier members' outputs among it.
func (e *Engine) linkNewPaths(ctx context.Context, id string, spec sandbox.Spec) {
	if dir := e.snapshotDir(id); spec.Workdir == dir {
		run, err := e.cfg.Store.GetRun(ctx, id)
		if err != nil || run.Campaign == nil || len(run.Campaign.After) == 0 {
			return
		}
		linked, err := record.LinkNew(dir)
		if err != nil {
			e.log.Warn("run: snapshot: link new paths", "run", id, "err", err)
		} else if len(linked) > 0 {
			e.log.Debug("run: snapshot: linked new paths", "run", id, "paths", linked)
		}
	}
}

// wantSnapshot says whether a run gets a --snapshot copy: when asked,
// and by default for a sweep's member and a run that waits for others
// (--after), whose code would otherwise be read when they start, long
// after the submission; NoSnapshot turns that default off.
func wantSnapshot(req api.RunRequest, base *store.Campaign) bool {
	if req.Snapshot || req.NoSnapshot {
		return req.Snapshot && !req.NoSnapshot
	}
	return (base != nil && base.Sweep != "") || len(req.After) > 0
}

// removeSnapshot deletes a run's copy of its workspace (a run refused
// before it was created).
func (e *Engine) removeSnapshot(id string) {
	dir := e.snapshotDir(id)
	if err := os.RemoveAll(dir); err != nil {
		e.log.Warn("run: remove snapshot", "run", id, "err", err)
	}
	_ = os.Remove(record.StampsPath(dir))
}

// settleSnapshot runs at a snapshot run's end: what the run wrote into
// its copy is copied back into the workspace (record.WriteBack), then
// the copy is removed, unless some files could not go back (the user
// changed the workspace's file meanwhile, bounds): then it is kept, and
// the run's record and events say where and which.
func (e *Engine) settleSnapshot(id string) {
	dir := e.snapshotDir(id)
	if _, err := os.Stat(record.StampsPath(dir)); err != nil {
		if _, derr := os.Stat(dir); derr == nil {
			e.removeSnapshot(id) // a copy from before write-back existed
		}
		return
	}
	ctx := context.Background()
	run, err := e.cfg.Store.GetRun(ctx, id) // its spec keeps the workspace (submit.go)
	if err != nil || run.Spec.Workdir == "" || run.Spec.Workdir == dir {
		e.log.Warn("run: snapshot without its workspace: removed, nothing copied back", "run", id, "err", err)
		e.removeSnapshot(id)
		return
	}
	workdir := run.Spec.Workdir
	returned, skipped, err := record.WriteBack(ctx, dir, workdir)
	if err != nil {
		skipped = append(skipped, "(copy-back stopped: "+err.Error()+")")
	}
	msg := ""
	if len(returned) > 0 {
		msg = fmt.Sprintf("snapshot: %d file(s) the run wrote copied back into %s", len(returned), workdir)
	}
	kept := ""
	if len(skipped) > 0 {
		if msg != "" {
			msg += "; "
		}
		kept = dir
		msg += fmt.Sprintf("snapshot: %d file(s) not copied back, kept in %s: %s", len(skipped), dir, strings.Join(record.ReturnedNames(skipped), ", "))
	} else {
		e.removeSnapshot(id)
	}
	if msg == "" {
		return
	}
	recordWrites.Lock()
	if rec, err := e.Record(ctx, id); err == nil && rec != nil && rec.Snapshot != nil {
		rec.Snapshot.Returned, rec.Snapshot.Skipped, rec.Snapshot.Kept = record.ReturnedNames(returned), record.ReturnedNames(skipped), kept
		e.saveRecord(ctx, id, rec)
	}
	recordWrites.Unlock()
	if _, err := e.cfg.Store.AppendEvent(ctx, store.Event{RunID: id, Time: e.cfg.Now(), Type: store.EventNote, Message: msg}); err != nil {
		e.log.Warn("run: note", "run", id, "err", err)
	}
}

// side is a run as a diff sees it. A run without a record is described by
// what its stored spec says (the note says so).
func (e *Engine) side(ctx context.Context, run *store.Run) (record.Side, string) {
	s := record.Side{RunID: run.ID, State: string(run.State)}
	if run.Exit != nil {
		c := run.Exit.Code
		s.ExitCode = &c
	}
	if run.Failure != nil {
		s.FailureCode = run.Failure.Code
	}
	if h, err := e.cfg.Store.Metrics(ctx, run.ID); err == nil {
		s.Metrics = map[string]float64{}
		for _, ser := range h.Series {
			if ownMetric(ser.Name) && len(ser.Points) > 0 {
				s.Metrics[ser.Name] = ser.Points[len(ser.Points)-1].Value
			}
		}
	}
	rec, err := e.Record(ctx, run.ID)
	var note string
	if err != nil || rec == nil {
		in := recordInput(run.Spec, run.Sandbox)
		in.Env = run.Spec.Env
		rec = &record.Record{Command: in.Command, Params: record.Params(in.Command), Workdir: in.Workdir,
			Sandbox: in.Sandbox, Isolate: in.Isolate, Limits: in.Limits, Env: in.Env}
		note = fmt.Sprintf("run %s has no record of what ran (taken before records, or --no-record): only its command, environment and limits are compared", displayID(run))
	} else if !rec.Complete {
		note = fmt.Sprintf("run %s's record is still being completed (packages, git diff, host): they are compared once it is", displayID(run))
	} else if c := rec.Code; c != nil && len(c.ChangedAfterStart) > 0 {
		note = fmt.Sprintf("run %s's uncommitted changes were read after it started, and %s changed since: what is recorded of it may hold later edits", displayID(run), strings.Join(c.ChangedAfterStart, ", "))
	}
	s.Record = rec
	return s, note
}

func displayID(r *store.Run) string {
	if r.Short != "" {
		return r.Short
	}
	return r.ID
}

// ownMetric: the run's own metrics, not the machine's (sys/) nor the
// progress bar's.
func ownMetric(name string) bool {
	return !strings.HasPrefix(name, SysPrefix) && !strings.HasPrefix(name, "progress/")
}

// Diff says what differs from run a to run b (any names the CLI takes).
func (e *Engine) Diff(ctx context.Context, a, b string) (*api.RunDiff, error) {
	ra, err := e.Get(ctx, a)
	if err != nil {
		return nil, err
	}
	rb, err := e.Get(ctx, b)
	if err != nil {
		return nil, err
	}
	sa, na := e.side(ctx, ra)
	sb, nb := e.side(ctx, rb)
	d := &api.RunDiff{A: ra.ID, B: rb.ID, AShort: ra.Short, BShort: rb.Short, Changes: record.Diff(sa, sb)}
	record.ExplainCommits(ctx, sa.Record, sb.Record, d.Changes)
	if d.Changes == nil {
		d.Changes = []record.Change{}
	}
	for _, n := range []string{na, nb} {
		if n != "" && (ra.ID != rb.ID || n == na && na != nb) {
			d.Notes = append(d.Notes, n)
		}
	}
	return d, nil
}

// sinceWorkedLines bounds the short list.
const sinceWorkedLines = 5

// SinceWorked says, for a run that failed, what changed since the last
// run of the same command that succeeded; nil when there is none (or the
// run did not fail).
func (e *Engine) SinceWorked(ctx context.Context, run *store.Run) (*api.SinceWorked, error) {
	if run.State != store.Failed && run.State != store.TimedOut {
		return nil, nil
	}
	if v, ok := sinceWorkedCache.Load(run.ID); ok {
		return v.(*api.SinceWorked), nil
	}
	sw, final, err := e.sinceWorked(ctx, run)
	if err == nil && final {
		if sinceWorkedCount.Add(1) > maxSinceWorkedCache {
			sinceWorkedCache.Clear()
			sinceWorkedCount.Store(0)
		}
		sinceWorkedCache.Store(run.ID, sw)
	}
	return sw, err
}

// A failed run's answer is kept once both records are complete: a run
// page asks for it on every refresh. (An earlier run still going when it
// was computed that succeeds later is not noticed: it would be a newer
// success to compare with.) Bounded by clearing, not evicting.
var (
	sinceWorkedCache sync.Map
	sinceWorkedCount atomic.Int64
)

const maxSinceWorkedCache = 4096

func (e *Engine) sinceWorked(ctx context.Context, run *store.Run) (*api.SinceWorked, bool, error) {
	ok, err := e.cfg.Store.LastSucceeded(ctx, run.Fingerprint, run.CreatedAt, run.Spec.Workdir, 100)
	if err != nil || ok == nil {
		return nil, false, err // an earlier run still going may yet succeed
	}
	sw, nw := e.side(ctx, ok)
	sf, nf := e.side(ctx, run)
	final := sw.Record != nil && sw.Record.Complete && sf.Record != nil && sf.Record.Complete
	sw2 := &api.SinceWorked{RunID: ok.ID, ShortID: ok.Short, Changes: record.SinceWorked(sw, sf)}
	record.ExplainCommits(ctx, sw.Record, sf.Record, sw2.Changes)
	for i, c := range sw2.Changes {
		if i == sinceWorkedLines {
			sw2.Summary = append(sw2.Summary, fmt.Sprintf("and %d more (runbox diff %s %s)", len(sw2.Changes)-i, displayID(ok), displayID(run)))
			break
		}
		sw2.Summary = append(sw2.Summary, c.String())
	}
	if len(sw2.Changes) == 0 {
		sw2.Changes = []record.Change{}
		sw2.Summary = []string{record.Nothing}
	}
	for _, n := range []string{nw, nf} {
		if n != "" {
			sw2.Summary = append(sw2.Summary, "note: "+n)
		}
	}
	return sw2, final, nil
}
