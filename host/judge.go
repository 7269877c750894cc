package host

import (
	"context"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/sdk"
)

// PluginJudge is the Judge backed by WebAssembly plugins. It opens the
// plugin host on first use and, when told how to see that the engine is
// idle (WatchIdle), closes it again after idleAfter without use, returning
// the compiled code and instances to the OS: an idle daemon then holds no
// plugin memory, and the next run reloads from the compilation cache.
type PluginJudge struct {
	open      func(context.Context) (*plugins.Host, error)
	idleAfter time.Duration
	log       *slog.Logger

	mu      sync.Mutex
	h       *plugins.Host
	lastUse time.Time
	stop    chan struct{}
	once    sync.Once
}

// NewPluginJudge returns a judge that opens plugin hosts with open.
func NewPluginJudge(open func(context.Context) (*plugins.Host, error), idleAfter time.Duration, log *slog.Logger) *PluginJudge {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &PluginJudge{open: open, idleAfter: idleAfter, log: log, stop: make(chan struct{})}
}

// host returns the open plugin host, opening it if needed; nil (logged)
// when plugins cannot be loaded — runs go on without them.
func (j *PluginJudge) host(ctx context.Context) *plugins.Host {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lastUse = time.Now()
	if j.h != nil {
		return j.h
	}
	h, err := j.open(ctx)
	if err != nil {
		j.log.Warn("plugins unavailable; runs go on without plans, progress or classification", "err", err)
		return nil
	}
	j.h = h
	return h
}

// Warm starts compiling the given kinds in the background.
func (j *PluginJudge) Warm(kinds ...sdk.Kind) {
	if h := j.host(context.Background()); h != nil {
		h.Warm(kinds...)
	}
}

// Plan implements Judge.
func (j *PluginJudge) Plan(ctx context.Context, in sdk.PlanInput) sdk.PlanOutput {
	h := j.host(ctx)
	if h == nil {
		return sdk.PlanOutput{}
	}
	out, _ := h.Plan(ctx, in) // failures are logged by the plugin host
	return out
}

// Classify implements Judge.
func (j *PluginJudge) Classify(ctx context.Context, in sdk.ClassifyInput) *sdk.Failure {
	h := j.host(ctx)
	if h == nil {
		return nil
	}
	// The NaN-loss rule (a loss that progress saw go NaN when the output
	// shows nothing better) is the classifier's own since issue #24, so
	// that analyze and make eval explain what a live run does.
	return h.Classify(ctx, in)
}

// NewParser implements Judge.
func (j *PluginJudge) NewParser() Parser {
	h := j.host(context.Background())
	if h == nil {
		return noParser{}
	}
	return pluginParser{h.NewParser()}
}

// Plugins describes the loaded plugins.
func (j *PluginJudge) Plugins(ctx context.Context) []plugins.Info {
	h := j.host(ctx)
	if h == nil {
		return nil
	}
	return h.Plugins(ctx)
}

// WatchIdle closes the plugin host once busy has reported false and the
// judge has not been used for idleAfter. It returns at once; Close stops it.
func (j *PluginJudge) WatchIdle(busy func() bool) {
	if j.idleAfter <= 0 {
		return
	}
	go func() {
		t := time.NewTicker(j.idleAfter / 2)
		defer t.Stop()
		for {
			select {
			case <-j.stop:
				return
			case <-t.C:
				j.trim(busy)
			}
		}
	}()
}

func (j *PluginJudge) trim(busy func() bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h == nil || busy() || time.Since(j.lastUse) < j.idleAfter {
		return
	}
	_ = j.h.Close(context.Background())
	j.h = nil
	debug.FreeOSMemory()
	j.log.Debug("plugins: idle, unloaded")
}

// Close stops the idle watch and closes the plugin host.
func (j *PluginJudge) Close() {
	j.once.Do(func() { close(j.stop) })
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h != nil {
		_ = j.h.Close(context.Background())
		j.h = nil
	}
}

type pluginParser struct{ p *plugins.Parser }

func (p pluginParser) Feed(_ context.Context, stream, line string) { p.p.Feed(stream, line) }
func (p pluginParser) Flush(ctx context.Context)                   { p.p.Flush(ctx) }
func (p pluginParser) Ready(ctx context.Context)                   { p.p.Ready(ctx) }
func (p pluginParser) State() *sdk.Progress                        { return p.p.State() }

// OnUpdate lets the metric history see every update (metrics.go).
func (p pluginParser) OnUpdate(fn func(sdk.Progress)) { p.p.OnUpdate(fn) }

type noParser struct{}

func (noParser) Feed(context.Context, string, string) {}
func (noParser) Flush(context.Context)                {}
func (noParser) Ready(context.Context)                {}
func (noParser) State() *sdk.Progress                 { return nil }

// idleWatcher is implemented by judges that can release resources when the
// engine is idle (PluginJudge).
type idleWatcher interface {
	WatchIdle(busy func() bool)
}
