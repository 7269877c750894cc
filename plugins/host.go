package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/runbox/runbox/plugins/internal/wasmdata"
	"github.com/runbox/runbox/plugins/prefilter"
	"github.com/runbox/runbox/sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Host loads and calls plugins. Create one per process with NewHost and
// Close it on shutdown. All methods are safe for concurrent use.
type Host struct {
	cfg     Config
	log     *slog.Logger
	rt      wazero.Runtime
	cache   wazero.CompilationCache
	ctx     context.Context // background loading; cancelled by Close
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	closed  atomic.Bool
	stateMu sync.Mutex // serialises this process's writes of StateFile

	modMu   sync.RWMutex
	modules []*module // replaced, never changed in place, by refresh
	retired []*module // replaced by refresh; drained at Close
	dirSig  uint64    // dirsSignature of cfg.Dirs when modules were found

	ruleSet ruleSet // the installed bundles' rules files (rulesfiles.go)
}

// NewHost takes the built-ins in cfg, discovers the user plugins and starts
// compiling the user ones in the background (their kinds are known only
// once described); built-ins compile lazily when their kind is first
// needed, or on Warm.
// It fails only when the runtime itself cannot be set up; a broken plugin is
// logged and reported by Plugins.
func NewHost(ctx context.Context, cfg Config) (*Host, error) {
	cfg = cfg.withDefaults()
	rc := wazero.NewRuntimeConfig().
		WithMemoryLimitPages(cfg.MemoryLimitPages).
		WithCloseOnContextDone(!cfg.noInterrupt)
	var cache wazero.CompilationCache
	if cfg.CacheDir != "" {
		c, err := wazero.NewCompilationCacheWithDir(cfg.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("compilation cache %s: %w", cfg.CacheDir, err)
		}
		cache = c
		rc = rc.WithCompilationCache(c)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("instantiate wasi: %w", err)
	}
	h := &Host{cfg: cfg, log: cfg.Logger, rt: compiler{rt}, cache: cache}
	h.ctx, h.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if len(cfg.Dirs) > 0 {
		h.dirSig = dirsSignature(cfg.Dirs) // before discover: a change in between is seen next time
	}
	for _, s := range discover(cfg) {
		h.modules = append(h.modules, h.adopt(s))
	}
	h.restoreState()
	return h, nil
}

// Warm starts compiling, in the background, the plugins of the given kinds
// (all when none given), so that the first call does not wait for them.
func (h *Host) Warm(kinds ...sdk.Kind) {
	for _, m := range h.mods() {
		if len(kinds) == 0 || m.kind == "" || contains(kinds, m.kind) {
			m.start()
		}
	}
}

// ProgressFilter returns a func that reports whether a line could be sent
// to a progress plugin at all (would pass the prefilter of one of them),
// known without loading any; nil when that cannot be known before they are
// loaded (a plugin whose kinds or prefilter only its module can tell: any
// user plugin, a built-in handed over without its manifest). A caller that
// creates its Parser only once a line passes gets the same progress as one
// that fed it every line, without loading the progress plugins for an
// output that has no progress in it.
func (h *Host) ProgressFilter() func(line string) bool {
	h.refresh()
	var filters []*prefilter.Filter
	for _, m := range h.mods() {
		if m.kind != "" && m.kind != sdk.KindProgress {
			continue
		}
		if m.known == nil || m.kind != sdk.KindProgress {
			return nil
		}
		f, _ := prefilter.Cached(m.known.Prefilter, m.known.PrefilterConfirm)
		filters = append(filters, f)
	}
	var lits []string // the rules files' progress literals
	for _, rf := range h.rules() {
		lits = append(lits, rf.Literals()...)
	}
	limit := h.cfg.MaxLineBytes
	return func(line string) bool {
		if len(line) > limit {
			line = line[:limit] // as Parser.Feed cuts it
		}
		for _, f := range filters {
			if f.Match(line) {
				return true
			}
		}
		for _, l := range lits {
			if strings.Contains(line, l) {
				return true
			}
		}
		return prefilter.Opens(line) // a table's header: its rows follow (prefilter.Rows)
	}
}

func contains(ks []sdk.Kind, k sdk.Kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// Close stops background loading, waits for it and releases the runtime and
// the compilation cache (which stays on disk).
func (h *Host) Close(ctx context.Context) error {
	if h.closed.Swap(true) {
		return nil
	}
	h.cancel()
	h.wg.Wait()
	h.modMu.RLock()
	for _, m := range append(h.retired, h.modules...) {
		m.drain()
	}
	h.modMu.RUnlock()
	err := h.rt.Close(ctx)
	if h.cache != nil {
		err = errors.Join(err, h.cache.Close(ctx))
	}
	return err
}

// byKind returns the loaded modules implementing kind, highest priority
// first, waiting for those still loading (bounded by ctx).
func (h *Host) byKind(ctx context.Context, kind sdk.Kind) []*module {
	var out []*module
	for _, m := range h.mods() {
		if m.kind != "" && m.kind != kind {
			continue
		}
		if m.wait(ctx) && m.manifest.Has(kind) && m.clash() == nil {
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].manifest.Priority > out[j].manifest.Priority })
	return out
}

// invoke runs one bounded call of export fn on m with input encoded as JSON,
// decoding the answer into out. It returns false when there was no answer.
// Failures are logged, counted by m's breaker, and returned.
func (h *Host) invoke(ctx context.Context, m *module, fn string, input, out any) (bool, error) {
	if h.closed.Load() {
		return false, errors.New("plugin host closed")
	}
	if !m.breaker.allow(time.Now()) {
		return false, fmt.Errorf("%s: %w", m.manifest.Name, ErrDisabled)
	}
	raw, err := h.invokeRaw(ctx, m, fn, input)
	if err == nil && raw != nil {
		if uerr := json.Unmarshal(raw, out); uerr != nil {
			err = fmt.Errorf("decode %s result: %w", fn, uerr)
		} else {
			// An answer the host must throw away is a failure like a
			// panic: counted by the breaker, not a success.
			err = checkAnswer(out)
		}
	}
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, ErrTimeout) {
			return false, err // the caller gave up: not the plugin's fault
		}
		h.recordFailure(m, fn, err)
		return false, fmt.Errorf("plugin %s: %s: %w", m.manifest.Name, fn, err)
	}
	if m.breaker.ok() {
		h.log.Info("plugin switched on again: its trial call succeeded", "plugin", m.manifest.Name, "source", m.source)
		h.saveOff(m, nil)
	}
	return raw != nil, nil
}

// encodedInput is an input already encoded as JSON: invokeRaw sends it as is.
type encodedInput []byte

func (h *Host) invokeRaw(ctx context.Context, m *module, fn string, input any) (json.RawMessage, error) {
	b, ok := input.(encodedInput)
	if !ok {
		var err error
		if b, err = json.Marshal(input); err != nil {
			return nil, fmt.Errorf("encode %s input: %w", fn, err)
		}
	}
	if len(b) > h.cfg.MaxInputBytes {
		return nil, fmt.Errorf("%d bytes, limit %d: %w", len(b), h.cfg.MaxInputBytes, ErrInputTooLarge)
	}
	in, err := m.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("instance: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, h.cfg.CallTimeout)
	defer cancel()
	raw, err := in.call(cctx, fn, b, h.cfg.MaxOutputBytes)
	m.release(in, err)
	return raw, err
}

func (h *Host) recordFailure(m *module, fn string, err error) {
	opened := m.breaker.fail(err, h.cfg.FailureThreshold, h.cfg.Cooldown)
	msg := "plugin call failed; instance discarded"
	if errors.Is(err, ErrInvalidAnswer) {
		msg = "plugin answer refused"
	}
	h.log.Warn(msg,
		"plugin", m.manifest.Name, "source", m.source, "call", fn, "err", err,
		"guest_output", m.logs.String())
	if opened {
		st := m.breaker.snapshot()
		h.log.Warn("plugin switched off after repeated failures",
			"plugin", m.manifest.Name, "source", m.source,
			"failures", st.consecutive, "cooldown", h.cfg.Cooldown, "retry_at", st.retryAt)
		h.saveOff(m, &offRecord{
			Source: m.source, SHA256: m.sha(), Name: m.manifest.Name,
			Reason: st.offReason, Failures: st.consecutive, Until: st.retryAt,
		})
	}
}

// compiler is the runtime a Host compiles with: modules are compiled with
// their data segments merged (wasmdata.Merge), on all cores.
type compiler struct{ wazero.Runtime }

func (c compiler) CompileModule(ctx context.Context, wasm []byte) (wazero.CompiledModule, error) {
	// Not in the cache (a first run, a new plugin): compile the functions
	// on every core rather than on one.
	ctx = experimental.WithCompilationWorkers(ctx, runtime.GOMAXPROCS(0))
	return c.Runtime.CompileModule(ctx, wasmdata.Merge(wasm))
}
