package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/runbox/runbox/internal/printable"
	"github.com/runbox/runbox/internal/tail"
	"github.com/runbox/runbox/plugins/explain"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/runlog"
	"github.com/runbox/runbox/sdk"
	"github.com/runbox/runbox/store"
)

// runner drives one run from preparing to a terminal state.
type runner struct {
	e  *Engine
	id string

	// prepared: the run was created in preparing (it started at once).
	prepared bool

	mu       sync.Mutex
	handle   sandbox.Handle
	stopping bool
	// stopWhy, when set, is why runbox (not the user) stopped the run:
	// a dependency failed (campaign.go).
	stopWhy string
	stalled bool
	parser  Parser
	// sess explains the run's output: progress from its lines, the
	// failure at its end (plugins/explain, shared with analyze and
	// make eval).
	sess      *explain.Session
	progSaved time.Time
	tails     map[runlog.Stream]*tail.Buffer
	lastOut   time.Time
	// fed counts lines given to the parser since the last flush; only
	// the goroutine following the log touches it.
	fed int
	// metrics keeps the run's metric history (metrics.go).
	metrics metricRecorder
}

func newRunner(e *Engine, id string) *runner {
	r := &runner{e: e, id: id, tails: map[runlog.Stream]*tail.Buffer{
		runlog.Stdout: tail.New(tailSize), runlog.Stderr: tail.New(tailSize),
		runlog.SetupStdout: tail.New(tailSize), runlog.SetupStderr: tail.New(tailSize),
		runlog.Meta: tail.New(4 << 10),
	}}
	r.newSession()
	if e.cfg.Judge != nil {
		r.hookMetrics()
	}
	return r
}

// newSession starts explaining the run's output afresh (a new parser
// after the smoke run).
func (r *runner) newSession() {
	var p explain.Parser
	if r.e.cfg.Judge != nil {
		r.parser = r.e.cfg.Judge.NewParser()
		p = r.parser
	}
	r.sess = explain.New(p, func(ctx context.Context, in sdk.ClassifyInput) *sdk.Failure {
		return Classify(ctx, r.e.cfg.Judge, in)
	})
}

const tailSize = 64 << 10

func (r *runner) progress() *sdk.Progress {
	r.mu.Lock()
	sess := r.sess
	r.mu.Unlock()
	return sess.Progress()
}

// start prepares and starts the run, then supervises it to the end.
func (r *runner) start(p *pendingRun) {
	ctx := r.e.ctx
	defer r.e.finish(r.id)
	r.e.log.Debug("run: preparing", "run", r.id)
	backend := p.backend
	if !r.prepared || backend == "" {
		var run *store.Run
		var err error
		if r.prepared {
			run, err = r.e.cfg.Store.GetRun(ctx, r.id)
		} else {
			run, err = r.e.cfg.Store.Transition(ctx, r.id, store.Preparing, "preparing", nil)
		}
		if err != nil {
			r.e.log.Error("run: preparing", "run", r.id, "err", err)
			return
		}
		backend = run.Sandbox
	}
	// The record's slow part is read once the run has started or has
	// ended, whichever way it ends: a failed smoke run or start too, whose
	// record would otherwise say "still being completed" for good and
	// what changed since the run last worked would be read from half a
	// record.
	go r.e.completeRecordSoon(ctx, r.id, p.spec, backend) // record.go
	sb, ok := r.e.cfg.Sandboxes[backend]
	if !ok {
		r.fail(ctx, sandbox.Exit{Error: fmt.Sprintf("sandbox %q is not available in this daemon", backend)}, false)
		return
	}
	if err := r.e.materialise(ctx, r.id, p); err != nil { // sweepsnap.go
		r.fail(ctx, sandbox.Exit{Error: "snapshot: " + err.Error()}, false)
		return
	}
	r.e.linkNewPaths(ctx, r.id, p.spec) // record.go
	if err := prepareDirs(p.spec); err != nil {
		r.fail(ctx, sandbox.Exit{Error: err.Error()}, false)
		return
	}
	if p.smoke != nil {
		if ok := r.smoke(ctx, sb, *p.smoke); !ok {
			return
		}
	}
	r.mu.Lock()
	stopping := r.stopping
	r.mu.Unlock()
	if stopping {
		r.finalize(ctx, sandbox.Exit{Cancelled: true, Code: 130}, false)
		return
	}
	h, err := sb.Start(ctx, p.spec)
	removeSecrets(r.e.runDir(r.id))
	if err != nil {
		r.fail(ctx, sandbox.Exit{Error: "start: " + err.Error()}, false)
		return
	}
	unseen := false
	if q, ok := h.(sandbox.Queued); ok {
		// One that left the queue unseen goes from preparing to its end.
		unseen = r.awaitStart(ctx, q)
	}
	now := r.e.cfg.Now()
	r.e.log.Debug("run: started", "run", r.id, "ref", h.Ref())
	// Unsynced: if the daemon is killed or the machine loses power before
	// the run's next synced write, recovery finds it in preparing and
	// looks for it like a running one (see TransitionUnsynced).
	if !unseen {
		if _, err := r.e.cfg.Store.TransitionUnsynced(ctx, r.id, store.Running, "running", func(run *store.Run) {
			run.Ref = h.Ref()
			run.StartedAt = &now
		}); err != nil {
			r.e.log.Error("run: running", "run", r.id, "err", err)
		}
	}
	// Pebble holds that write in its own buffer, so a daemon killed now
	// would lose it and the next one would re-attach to a run in
	// preparing, its start unknown. A run still going after a moment gets
	// it synced off the start path; a shorter one's synced end does it.
	synced := time.AfterFunc(startSyncDelay, func() {
		if err := r.e.cfg.Store.Sync(ctx); err != nil && ctx.Err() == nil {
			r.e.log.Warn("run: sync start", "run", r.id, "err", err)
		}
	})
	defer synced.Stop()
	r.supervise(ctx, h, p.spec)
}

// startSyncDelay is how long a started run's unsynced "running" record
// may wait for a synced write before the runner syncs it itself.
const startSyncDelay = 50 * time.Millisecond

// smoke runs the smoke command; it reports whether the full run may go on.
func (r *runner) smoke(ctx context.Context, sb sandbox.Sandbox, spec sandbox.Spec) bool {
	if _, err := r.e.cfg.Store.Transition(ctx, r.id, store.Smoke, "smoke: "+printable.Run(spec.Command, spec.Shell), nil); err != nil {
		r.e.log.Error("run: smoke", "run", r.id, "err", err)
	}
	if err := prepareDirs(spec); err != nil {
		r.fail(ctx, sandbox.Exit{Error: err.Error()}, true)
		return false
	}
	h, err := sb.Start(ctx, spec)
	if err != nil {
		r.fail(ctx, sandbox.Exit{Error: "start smoke: " + err.Error()}, true)
		return false
	}
	r.setHandle(h)
	exit := r.follow(ctx, h, spec)
	settle(ctx, h)
	r.setHandle(nil)
	if exit.Code == 0 && exit.Error == "" && !exit.Cancelled && !exit.TimedOut {
		r.note(ctx, "smoke run passed")
		r.resetForMain()
		return true
	}
	r.finalize(ctx, exit, true)
	return false
}

func (r *runner) setHandle(h sandbox.Handle) {
	r.mu.Lock()
	r.handle = h
	stop := r.stopping && h != nil
	r.mu.Unlock()
	if stop {
		go h.Stop(context.WithoutCancel(r.e.ctx), 0)
	}
}

// resetForMain clears the tails the smoke run filled.
func (r *runner) resetForMain() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.tails {
		t.Reset()
	}
	r.newSession()
}

// supervise follows a started main run to its end and records the result.
func (r *runner) supervise(ctx context.Context, h sandbox.Handle, spec sandbox.Spec) {
	r.setHandle(h)
	stopSys := r.sampleSys(ctx, h) // sysmetrics.go
	exit := r.follow(ctx, h, spec)
	stopSys()
	if ctx.Err() != nil {
		return // engine shutting down: the next daemon re-attaches
	}
	r.finalize(ctx, exit, false)
	r.e.ended(r.id)
	settle(ctx, h)
}

// settle waits until the backend is done with an ended run (an
// EarlyExiter may still be writing its record after it told it), so that
// the run is over for the engine only once nothing touches its files.
func settle(ctx context.Context, h sandbox.Handle) {
	if _, ok := h.(sandbox.EarlyExiter); ok {
		_, _ = h.Wait(ctx)
	}
}

// follow reads the log while the run goes on and returns its exit record.
func (r *runner) follow(ctx context.Context, h sandbox.Handle, spec sandbox.Spec) sandbox.Exit {
	ended := make(chan struct{})
	followed := make(chan error, 1)
	splitters := map[runlog.Stream]*runlog.LineSplitter{}
	r.mu.Lock()
	r.lastOut = r.e.cfg.Now()
	r.mu.Unlock()
	lag := lagMeter{path: spec.LogPath}
	go func() {
		followed <- runlog.FollowShared(ctx, spec.LogPath, 0, ended, func(rec runlog.Record) error {
			behind := lag.behind(rec)
			r.consume(ctx, rec, splitters, behind > maxParseLag)
			if behind == 0 && r.fed > 0 {
				// Caught up with the output: what was just printed is what
				// the user sees, so its progress is published now rather
				// than at the next tick. While output outpaces the reader,
				// lines keep going out in batches on the tick.
				// Bounded well below the bar's 200 ms: a healthy plugin
				// answers in a millisecond, and a hanging one must not hold
				// up the reader (its own deadline and breaker deal with it).
				r.fed = 0
				r.flushProgress(ctx, false, idleFlushTimeout)
			}
			return nil
		})
	}()
	stallStop := r.watchStall(ctx, h, spec)
	tickStop := r.tickProgress(ctx)
	// The record as soon as the backend knows it: it is stored (synced)
	// while the backend writes its own copy; settle waits for that.
	var exit sandbox.Exit
	var err error
	if ee, ok := h.(sandbox.EarlyExiter); ok {
		exit, err = ee.WaitEarly(ctx)
	} else {
		exit, err = h.Wait(ctx)
	}
	close(tickStop)
	r.e.log.Debug("run: exited", "run", r.id, "code", exit.Code, "err", err)
	close(stallStop)
	close(ended)
	if ferr := <-followed; ferr != nil && ctx.Err() == nil {
		r.e.log.Warn("run: follow log", "run", r.id, "err", ferr)
	}
	for s, sp := range splitters {
		sp.Close(func(line string) { r.feed(ctx, s, line) })
	}
	r.flushProgress(ctx, true, finalFlushTimeout)
	r.e.log.Debug("run: output drained", "run", r.id)
	if err != nil {
		if ctx.Err() != nil {
			return sandbox.Exit{}
		}
		return sandbox.Exit{Error: "wait: " + err.Error(), Lost: errors.Is(err, sandbox.ErrNotFound)}
	}
	return exit
}

// consume handles one log record: tails for classification, lines for
// progress parsing.
// When the log grows faster than lines can be parsed, the parser skips
// ahead: progress is "latest wins", so the newest output is what matters,
// and a run printing hundreds of MB/s must not have the daemon burn the
// machine's cores on lines nobody will read. Tails are always kept.
const maxParseLag = 8 << 20

// lagMeter tells how far a record is behind the end of the log file.
type lagMeter struct {
	path string
	size int64
	n    int
}

func (l *lagMeter) behind(rec runlog.Record) int64 {
	l.n++
	if rec.End > l.size || l.n%16 == 0 {
		if st, err := os.Stat(l.path); err == nil {
			l.size = st.Size()
		}
	}
	return l.size - rec.End
}

func (r *runner) consume(ctx context.Context, rec runlog.Record, splitters map[runlog.Stream]*runlog.LineSplitter, skipParse bool) {
	r.mu.Lock()
	if t := r.tails[rec.Stream]; t != nil {
		t.Write(rec.Data)
	}
	r.lastOut = r.e.cfg.Now()
	r.mu.Unlock()
	if rec.Stream == runlog.Meta {
		r.egressEvent(ctx, rec) // allownet.go
	}
	if r.parser == nil || (rec.Stream != runlog.Stdout && rec.Stream != runlog.Stderr) {
		return
	}
	if skipParse {
		delete(splitters, rec.Stream) // the partial line it held is stale now
		return
	}
	sp := splitters[rec.Stream]
	if sp == nil {
		sp = runlog.NewLineSplitter(16 << 10)
		splitters[rec.Stream] = sp
	}
	sp.Write(rec.Data, func(line string) { r.feed(ctx, rec.Stream, line) })
}

// progressTick is how often batched lines are sent to the progress plugins
// and the state published.
const progressTick = 200 * time.Millisecond

// tickProgress flushes the parser every progressTick until stopped.
func (r *runner) tickProgress(ctx context.Context) chan struct{} {
	stop := make(chan struct{})
	if r.parser == nil {
		return stop
	}
	go every(ctx, stop, progressTick, func() bool {
		r.flushProgress(ctx, false, time.Second)
		return true
	})
	return stop
}

// every calls fn each interval until stop is closed, ctx ends or fn
// returns false.
func every(ctx context.Context, stop <-chan struct{}, interval time.Duration, fn func() bool) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			if !fn() {
				return
			}
		}
	}
}

func (r *runner) feed(ctx context.Context, s runlog.Stream, line string) {
	r.fed++
	r.sess.Feed(ctx, s.String(), line)
}

// flushProgress publishes parsed progress: to memory at once, to the store
// at most every progressSaveEvery (progress is frequent and not worth a sync).
// The pending lines are sent to the plugins first, bounded by flush: a plugin still compiling (first run ever) must not hold up a run;
// its progress is then simply unknown.
func (r *runner) flushProgress(ctx context.Context, final bool, flush time.Duration) {
	if r.parser == nil {
		return
	}
	r.mu.Lock()
	sess := r.sess
	r.mu.Unlock()
	fctx, cancel := context.WithTimeout(ctx, flush)
	st, changed := sess.Flush(fctx)
	cancel()
	if st == nil {
		return
	}
	r.mu.Lock()
	save := changed && (final || r.e.cfg.Now().Sub(r.progSaved) >= progressSaveEvery)
	if save {
		r.progSaved = r.e.cfg.Now()
	}
	r.mu.Unlock()
	r.observeMetrics(ctx, st, save || final)
	if save && !final {
		p := *st
		if _, err := r.e.cfg.Store.UpdateRun(ctx, r.id, func(run *store.Run) error {
			run.Progress = &p
			return nil
		}); err != nil && ctx.Err() == nil {
			r.e.log.Warn("run: save progress", "run", r.id, "err", err)
		}
	}
}

const (
	idleFlushTimeout  = 100 * time.Millisecond
	progressSaveEvery = time.Second
	finalFlushTimeout = 2 * time.Second
)

// watchStall stops the run when it prints nothing for spec's stall window.
func (r *runner) watchStall(ctx context.Context, h sandbox.Handle, spec sandbox.Spec) chan struct{} {
	stop := make(chan struct{})
	window := r.stallWindow()
	if window <= 0 {
		return stop
	}
	go every(ctx, stop, min(window/4, time.Second), func() bool {
		r.mu.Lock()
		idle := r.e.cfg.Now().Sub(r.lastOut)
		r.mu.Unlock()
		if idle < window {
			return true
		}
		r.mu.Lock()
		r.stalled = true
		r.mu.Unlock()
		r.note(ctx, fmt.Sprintf("stalled: no output for %s, stopping", window.Round(time.Second)))
		_ = h.Stop(ctx, spec.Grace)
		return false
	})
	return stop
}

func (r *runner) stallWindow() time.Duration {
	run, err := r.e.cfg.Store.GetRun(r.e.ctx, r.id)
	if err != nil {
		return 0
	}
	return stallOf(run)
}

// labelStall is the run label carrying the stall window.
const labelStall = "runbox.stall-timeout"

// fail ends a run that never got going as a sandbox error.
func (r *runner) fail(ctx context.Context, exit sandbox.Exit, smoke bool) {
	if exit.EndedAt.IsZero() {
		exit.EndedAt = r.e.cfg.Now()
	}
	r.note(ctx, exit.Error)
	r.finalize(ctx, exit, smoke)
}

// finalize classifies a finished run and records its terminal state.
func (r *runner) finalize(ctx context.Context, exit sandbox.Exit, smoke bool) {
	r.containerEgressEvents(ctx) // allownet.go
	r.mu.Lock()
	stalled := r.stalled
	cancelled := r.stopping && !stalled
	r.mu.Unlock()
	if cancelled && exit.Error == "" {
		exit.Cancelled = true
	}
	if stalled {
		// runbox stopped it for silence, not the user: a failure (STALLED).
		exit.Cancelled = false
	}
	state := stateOf(exit, smoke)
	var failure *sdk.Failure
	if state != store.Succeeded {
		run, err := r.e.cfg.Store.GetRun(ctx, r.id)
		if err != nil {
			r.e.log.Error("run: finalize", "run", r.id, "err", err)
			return
		}
		failure = r.classify(ctx, run, exit, smoke, stalled)
		r.mu.Lock()
		if why := r.stopWhy; why != "" && cancelled && failure != nil {
			failure.Message = why
		}
		r.mu.Unlock()
	}
	// A --snapshot copy's outputs go back to the workspace (record.go)
	// before the end is recorded: a run chained --after this one finds
	// them there when it starts.
	r.e.settleSnapshot(r.id)
	prog := r.progress()
	now := r.e.cfg.Now()
	reason := describeEnd(state, exit, failure)
	if exit.LogDropped > 0 {
		reason += fmt.Sprintf(" (disk full: %d bytes of output dropped)", exit.LogDropped)
	}
	end := func(run *store.Run) {
		ex := exit
		run.Exit = &ex
		run.Failure = failure
		if prog != nil {
			run.Progress = prog
		}
		r.trueTimes(run, exit, smoke, now)
	}
	shown := false
	err := untilRoom(ctx, func() error {
		_, err := r.e.cfg.Store.Transition(ctx, r.id, state, reason, end)
		if err != nil && errors.Is(err, store.ErrDiskFull) && !shown {
			shown = r.showUnrecorded(ctx, state, reason, end)
		}
		return err
	})
	if err != nil {
		r.e.log.Error("run: finalize", "run", r.id, "err", err)
	} else if shown {
		r.e.setUnrecorded(r.id, nil)
		r.e.log.Info("run: end recorded now that the store has room", "run", r.id, "state", state)
	}
	r.e.log.Debug("run: ended", "run", r.id, "state", state)
}

// unrecordedNote is added to the reason of a run whose end the store has
// not taken yet.
const unrecordedNote = " [the store could not record this end yet (its disk is full): shown from the run's exit record; it is recorded when space returns]"

// showUnrecorded makes a run's end, which the store refused for want of
// space, what the engine answers for the run meanwhile (Get, List) and
// answers those waiting for it: the end is on disk in the run's exit
// record, so status must not say running and wait must not hang until
// space returns. The runner keeps offering the end to the store.
func (r *runner) showUnrecorded(ctx context.Context, state store.State, reason string, end func(*store.Run)) bool {
	run, err := r.e.cfg.Store.GetRun(ctx, r.id)
	if err != nil || run.State.Terminal() {
		return false
	}
	run.State, run.Reason = state, reason+unrecordedNote
	end(run)
	r.e.setUnrecorded(r.id, run)
	r.e.ended(r.id)
	r.e.log.Warn("run: ended, but the store's disk is full: its end is shown from its exit record until the store can take it",
		"run", r.id, "state", state)
	return true
}

// trueTimes sets an ending run's start and end from its exit record, which
// its sandbox wrote when they happened: a daemon that learns of the end
// later (it re-attached after a restart, rebuilt the run after store
// damage, or the store lost the write that recorded it) must not move the
// end to when it found out, nor the start to when it re-attached. The
// daemon's own start, shown while the run goes on, is taken a few
// milliseconds after the sandbox's, so the record's replaces it at the end
// for every run alike. A time the record lacks, or one that cannot be
// right (before the run was created, after now, an end before the start:
// a pooled container's start, a whole-second Slurm time, another
// machine's clock), leaves the daemon's own.
func (r *runner) trueTimes(run *store.Run, exit sandbox.Exit, smoke bool, now time.Time) {
	if st := exit.StartedAt; !smoke && !st.IsZero() && !st.Before(run.CreatedAt) && !st.After(now) {
		run.StartedAt = &st
	}
	end := now
	if et := exit.EndedAt; !et.IsZero() && !et.After(now) && !et.Before(run.CreatedAt) &&
		(run.StartedAt == nil || !et.Before(*run.StartedAt)) {
		end = et
	}
	run.EndedAt = &end
}

// diskFullRetry is how often a run's end is offered again to a store
// that refused it for want of space.
const diskFullRetry = time.Second

// untilRoom runs write until the store takes it: a full disk must not
// leave a run that has ended looking as if it ran on (the space may come
// back at any time; the exit record waits on disk meanwhile). Other
// errors, and ctx ending, return at once.
func untilRoom(ctx context.Context, write func() error) error {
	for {
		err := write()
		if err == nil || !errors.Is(err, store.ErrDiskFull) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(diskFullRetry):
		}
	}
}

func stateOf(exit sandbox.Exit, smoke bool) store.State {
	switch {
	case exit.Lost:
		return store.Lost
	case exit.Cancelled:
		return store.Cancelled
	case exit.TimedOut && !smoke:
		return store.TimedOut
	case exit.Code == 0 && exit.Error == "" && !exit.TimedOut:
		return store.Succeeded
	}
	return store.Failed
}

func (r *runner) note(ctx context.Context, msg string) {
	if msg == "" {
		return
	}
	if _, err := r.e.cfg.Store.AppendEvent(ctx, store.Event{RunID: r.id, Time: r.e.cfg.Now(), Type: "note", Message: msg}); err != nil && ctx.Err() == nil {
		r.e.log.Warn("run: note", "run", r.id, "err", err)
	}
}

// stop asks the run to end; it is safe to call at any stage.
func (r *runner) stop(ctx context.Context, grace time.Duration) {
	r.mu.Lock()
	r.stopping = true
	h := r.handle
	r.mu.Unlock()
	if h != nil {
		if err := h.Stop(ctx, grace); err != nil {
			r.e.log.Warn("run: stop", "run", r.id, "err", err)
		}
	}
}

func prepareDirs(spec sandbox.Spec) error {
	if err := os.MkdirAll(spec.StateDir, 0o700); err != nil {
		return fmt.Errorf("create run state dir: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(spec.LogPath), 0o700); err != nil {
		return fmt.Errorf("create run log dir: %w", err)
	}
	return nil
}
