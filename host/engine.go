// Package host is runbox's engine: it turns requests into plans and runs,
// queues them under a parallelism limit, drives each run through its
// lifecycle on a sandbox backend, feeds output to progress plugins, asks
// classifier plugins why a run failed, and records every transition in the
// store. The daemon (host/daemon) exposes it over HTTP; nothing below host/
// imports it.
package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/runbox/runbox/internal/gpu"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sdk"
	"github.com/runbox/runbox/store"
)

// Judge is the engine's view of the plugin host: planners, classifiers and
// progress parsers. *plugins.Host satisfies it through NewJudge.
type Judge interface {
	Plan(ctx context.Context, in sdk.PlanInput) sdk.PlanOutput
	Classify(ctx context.Context, in sdk.ClassifyInput) *sdk.Failure
	NewParser() Parser
}

// Parser turns one run's output lines into progress.
type Parser interface {
	Feed(ctx context.Context, stream string, line string)
	Flush(ctx context.Context)
	// Ready waits (bounded by ctx) until the parser's plugins are loaded.
	Ready(ctx context.Context)
	State() *sdk.Progress
}

// Config wires an Engine.
type Config struct {
	Home      string // runs/ lives here
	Store     *store.Store
	Sandboxes map[string]sandbox.Sandbox
	// Missing says, for a backend this daemon has not got, why and what
	// to do (the error of a request that names it); registered beside
	// Sandboxes.
	Missing     map[string]string
	Judge       Judge // may be nil: no plans, progress or classification
	MaxParallel int   // runs at once; default runtime.NumCPU()
	// DefaultImage is used for docker runs that name no image.
	DefaultImage string
	Logger       *slog.Logger
	// Now is for tests that need a clock; default time.Now.
	Now func() time.Time
	// GPUs are this host's GPUs, which the queue reserves for the runs
	// whose admission asked (campaign.go): the same set the backends
	// that hand them out were given, which their admission checks.
	GPUs gpu.Inventory
}

// Engine runs runs. It is safe for concurrent use.
type Engine struct {
	cfg Config
	log *slog.Logger

	mu    sync.Mutex
	queue []string // queued run ids, FIFO by creation (id order)
	// unready holds queued ids whose submission is still being written
	// (its spec and record not yet on disk): each took its place in the
	// queue when its id was made, and nothing behind it starts before it
	// is ready, so runs start in the order they were created.
	unready map[string]bool
	pending map[string]*pendingRun // queued runs' full specs (secrets in memory only)
	active  map[string]*runner     // started or starting
	// unrecorded holds the ends of runs that the store refused for want
	// of space (runner.showUnrecorded), shown in its place until it
	// takes them.
	unrecorded map[string]*store.Run
	done       map[string]chan struct{}
	closed     bool

	probes probes // backends' cached health, capabilities, answers to --sandbox auto

	camp *campaigns // dependencies, sweeps, GPUs (campaign.go); under mu

	wg sync.WaitGroup
	// ctx lives as long as the engine; runners use it, not request contexts.
	ctx    context.Context
	cancel context.CancelFunc
}

type pendingRun struct {
	spec  sandbox.Spec // with real env values
	smoke *sandbox.Spec
	// prepared: the run is already in preparing (created so, or recovered).
	prepared bool
	// backend is the run's sandbox, so a prepared run starts without
	// reading its record back.
	backend string
	// snapshotFrom is, for a sweep member, the sweep's copy of the
	// workspace its own copy is made from as it starts (sweepsnap.go).
	snapshotFrom string
}

// ErrClosed is returned once the engine is shutting down.
var ErrClosed = errors.New("engine is shutting down")

// New builds an engine. Call Recover before serving requests.
func New(cfg Config) (*Engine, error) {
	if cfg.Store == nil {
		return nil, errors.New("engine: no store")
	}
	if cfg.MaxParallel <= 0 {
		cfg.MaxParallel = runtime.NumCPU()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := os.MkdirAll(filepath.Join(cfg.Home, "runs"), 0o700); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Engine{
		cfg:        cfg,
		log:        cfg.Logger,
		pending:    map[string]*pendingRun{},
		unready:    map[string]bool{},
		active:     map[string]*runner{},
		unrecorded: map[string]*store.Run{},
		done:       map[string]chan struct{}{},
		camp:       newCampaigns(cfg.GPUs),
		ctx:        ctx,
		cancel:     cancel,
	}
	if w, ok := cfg.Judge.(idleWatcher); ok {
		w.WatchIdle(func() bool {
			active, queued := e.Counts()
			return active+queued > 0
		})
	}
	return e, nil
}

// Counts reports how many runs are active (started) and queued.
func (e *Engine) Counts() (active, queued int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.active), len(e.queue)
}

// Done returns a channel closed when run id reaches a terminal state. For a
// run that already ended, or that this engine does not track, it returns nil
// and the caller should read the run from the store.
func (e *Engine) Done(id string) <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.done[id]
}

// Progress returns the live progress of an active run, if any.
func (e *Engine) Progress(id string) *sdk.Progress {
	e.mu.Lock()
	r := e.active[id]
	e.mu.Unlock()
	if r == nil {
		return nil
	}
	return r.progress()
}

// Close stops scheduling and waits for runner goroutines to let go. Runs
// themselves go on (their supervisors or containers own them); the next
// daemon re-attaches.
func (e *Engine) Close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.cancel()
	e.wg.Wait()
}

func (e *Engine) runDir(id string) string { return filepath.Join(e.cfg.Home, "runs", id) }

// track registers a done channel for a non-terminal run.
func (e *Engine) track(id string) {
	if _, ok := e.done[id]; !ok {
		e.done[id] = make(chan struct{})
	}
}

// finish closes a run's done channel (unless ended did) and frees its
// slot.
func (e *Engine) finish(id string) {
	e.mu.Lock()
	delete(e.active, id)
	delete(e.pending, id)
	e.endedLocked(id)
	e.mu.Unlock()
	e.campaignEnded(id)
	e.schedule()
}

// ended closes a run's done channel once its final state is stored: those
// waiting for it are answered then, while the runner may still be waiting
// for the backend to finish writing its own record (the slot stays taken
// until finish).
func (e *Engine) ended(id string) {
	e.mu.Lock()
	e.endedLocked(id)
	e.mu.Unlock()
}

func (e *Engine) endedLocked(id string) {
	if ch, ok := e.done[id]; ok {
		close(ch)
		delete(e.done, id)
	}
}

// admission is a submission's place in line, taken when its id is made.
type admission struct {
	id      string
	created time.Time
	// slot is set when the run can start at once (nothing queued ahead of
	// it, fewer than MaxParallel runs active): the caller creates it in
	// preparing and launches it. Otherwise the run holds its place in the
	// queue, not ready until the caller calls ready.
	slot *runner
}

// admit makes a new run id and takes its place in line under one lock,
// so that the order of ids (and creation times) is the order runs start
// in: a submission that takes longer to validate or write cannot be
// overtaken by one made after it (under 200 concurrent submissions,
// places used to be taken only once each record was synced, and runs
// started out of order). The caller must end the admission with launch,
// ready or abandon.
func (e *Engine) admit(gate bool) (*admission, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	a := &admission{id: store.NewID(), created: e.cfg.Now()}
	e.track(a.id)
	if !gate && len(e.queue) == 0 && len(e.active) < e.cfg.MaxParallel {
		a.slot = newRunner(e, a.id)
		a.slot.prepared = true
		e.active[a.id] = a.slot
		return a, nil
	}
	e.queue = append(e.queue, a.id)
	e.unready[a.id] = true
	return a, nil
}

// abandon gives back the place of a submission whose run was never
// created, and lets those behind it go on.
func (e *Engine) abandon(a *admission) {
	e.mu.Lock()
	if a.slot != nil {
		delete(e.active, a.id)
	} else {
		for i, q := range e.queue {
			if q == a.id {
				e.queue = append(e.queue[:i], e.queue[i+1:]...)
				break
			}
		}
		delete(e.unready, a.id)
	}
	delete(e.done, a.id)
	e.mu.Unlock()
	e.schedule()
}

// ready marks an admitted run that holds a place in the queue as created
// (its spec and record are on disk), so it may start in its turn.
func (e *Engine) ready(a *admission, p *pendingRun) {
	e.mu.Lock()
	if e.unready[a.id] { // else stopped meanwhile (dequeue)
		delete(e.unready, a.id)
		e.pending[a.id] = p
	}
	e.mu.Unlock()
	e.schedule()
}

// launch starts a runner in its slot.
func (e *Engine) launch(r *runner, p *pendingRun) {
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		r.start(p)
	}()
}

// enqueue adds a created run to the FIFO queue and schedules.
func (e *Engine) enqueue(id string, p *pendingRun) {
	e.mu.Lock()
	e.track(id)
	e.pending[id] = p
	e.queue = append(e.queue, id)
	e.mu.Unlock()
	e.schedule()
}

// schedule starts queued runs while there is room. A run still being
// written (unready) holds back those behind it (a few milliseconds, one
// synced write) rather than be overtaken; a run that waits for another
// run, its sweep's limit or GPUs lets those behind it by (campaign.go:
// decideLocked says who starts and why the others wait).
func (e *Engine) schedule() {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	d := e.decideLocked()
	e.groupPassLocked(d) // backendheld.go
	go1 := map[string]bool{}
	for _, id := range d.start {
		go1[id] = true
	}
	var launched []string
	keep := e.queue[:0]
	for _, id := range e.queue {
		if _, cancel := d.cancel[id]; cancel {
			delete(e.pending, id)
			continue
		}
		p := e.pending[id]
		if !go1[id] {
			if p != nil || e.unready[id] {
				keep = append(keep, id)
			}
			continue
		}
		delete(e.pending, id)
		if chain := d.chain[id]; chain != nil {
			chain(&p.spec) // backendheld.go
		}
		if devs := d.devices[id]; len(devs) > 0 {
			if g, ok := e.cfg.Sandboxes[p.backend].(sandbox.GPUGiver); ok {
				g.GiveGPUs(&p.spec, devs) // in the backend's own form
			}
			if c := e.camp.info[id]; c != nil {
				c.Devices = devs
			}
		}
		r := newRunner(e, id)
		r.prepared = p.prepared
		e.active[id] = r
		e.launch(r, p)
		launched = append(launched, id)
	}
	clear(e.queue[len(keep):])
	e.queue = keep
	e.mu.Unlock()
	for _, id := range launched {
		if devs := d.devices[id]; len(devs) > 0 {
			e.recordDevices(id, devs)
		}
	}
	for id, reason := range d.cancel {
		e.cancelQueued(id, reason)
	}
}

// dequeue removes a queued run; it reports whether the run was queued.
func (e *Engine) dequeue(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, q := range e.queue {
		if q == id {
			e.queue = append(e.queue[:i], e.queue[i+1:]...)
			delete(e.pending, id)
			delete(e.unready, id)
			return true
		}
	}
	return false
}

func (e *Engine) runner(id string) *runner {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.active[id]
}

// setUnrecorded shows run as id's end until the store takes it; nil
// forgets it.
func (e *Engine) setUnrecorded(id string, run *store.Run) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if run == nil {
		delete(e.unrecorded, id)
		return
	}
	e.unrecorded[id] = run
}

// withUnrecorded returns the end the store has not taken yet in place of
// its stored run (a copy), or run itself.
func (e *Engine) withUnrecorded(run *store.Run) *store.Run {
	if run == nil || run.State.Terminal() {
		return run
	}
	e.mu.Lock()
	u := e.unrecorded[run.ID]
	e.mu.Unlock()
	if u == nil {
		return run
	}
	c := *u
	return &c
}

// Store is the engine's store.
func (e *Engine) Store() *store.Store { return e.cfg.Store }
