package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/runbox/runbox/internal/tail"
	"github.com/runbox/runbox/sdk"
	"github.com/tetratelabs/wazero"
)

// Status of a plugin as Plugins reports it.
type Status string

// Plugin statuses.
const (
	StatusPending Status = "pending" // not loaded yet: loading, or loaded lazily
	StatusReady   Status = "ready"   // compiled, described, serving calls
	StatusFailed  Status = "failed"  // could not be loaded: never called
	StatusOff     Status = "off"     // switched off by the circuit breaker until Info.RetryAt
	// StatusRefused: not loaded because Config.RequireSigned refuses it
	// (Info.LastError says why): never run.
	StatusRefused Status = "refused"
)

// module is one plugin file: its bytes, its compiled form once ready, its
// pool of instances and its breaker.
type module struct {
	h       *Host
	source  string // file path, or "builtin:NAME"
	builtin bool
	refused bool          // refused by Config.RequireSigned (loadErr says why)
	kind    sdk.Kind      // known before compiling (built-ins); "" = unknown
	known   *sdk.Manifest // the manifest known before compiling (built-ins)
	wasm    []byte
	sha     func() string // hex sha256 of wasm, computed when first asked
	logs    *tail.Buffer  // the guest's stdout/stderr: head and tail

	once     sync.Once
	ready    chan struct{} // closed when loading finished (ok or not)
	compiled wazero.CompiledModule
	manifest sdk.Manifest
	loadErr  error

	pool    chan *instance // idle instances
	slots   chan struct{}  // one token per live instance
	breaker breaker
}

func newModule(h *Host, s source) *module {
	wasm := s.wasm
	return &module{
		h: h, source: s.path, builtin: s.builtin, refused: s.refused, kind: s.kind, known: s.known, wasm: wasm,
		// Lazily: hashing every module on each start costs analyze ~5 ms,
		// and only plugins ls/info show it.
		sha: sync.OnceValue(func() string {
			sum := sha256.Sum256(wasm)
			return hex.EncodeToString(sum[:])
		}),
		logs:  tail.NewHeadTail(h.cfg.LogBytes),
		ready: make(chan struct{}),
		pool:  make(chan *instance, h.cfg.PoolSize),
		slots: make(chan struct{}, h.cfg.MaxInstances),
	}
}

// start begins loading in the background; it is idempotent.
func (m *module) start() {
	m.once.Do(func() {
		m.h.wg.Add(1)
		go func() {
			defer m.h.wg.Done()
			defer close(m.ready)
			l, err := m.loadBounded()
			if err != nil {
				m.loadErr = err
				m.h.log.Warn("plugin not loaded", "plugin", m.source, "err", err, "guest_output", m.logs.String())
				m.breaker.fail(err, 0, 0)
				return
			}
			m.compiled, m.manifest = l.compiled, l.manifest
			m.release(l.first, nil)
			m.h.log.Debug("plugin loaded", "plugin", l.manifest.Name, "version", l.manifest.Version, "source", m.source, "took", l.took)
		}()
	})
}

// wait starts loading if needed and waits for it; ok is false when the
// module could not be loaded or ctx ended first. Loading is bounded by
// LoadTimeout, so neither waits longer than that.
func (m *module) wait(ctx context.Context) bool {
	m.start()
	select {
	case <-m.ready:
		return m.loadErr == nil
	case <-ctx.Done():
		return false
	}
}

// loadResult is what a successful load yields.
type loadResult struct {
	compiled wazero.CompiledModule
	manifest sdk.Manifest
	first    *instance
	took     time.Duration
}

// loadBounded runs load under LoadTimeout. The deadline interrupts a
// guest's _initialize or describe (close on context done); compiling does
// not stop midway, so a compile that outlives the deadline is abandoned
// and what it yields released when it ends.
func (m *module) loadBounded() (loadResult, error) {
	ctx, cancel := context.WithTimeout(m.h.ctx, m.h.cfg.LoadTimeout)
	type result struct {
		l   loadResult
		err error
	}
	res := make(chan result, 1)
	m.h.wg.Add(1) // under start's count: Close waits for this one too
	go func() {
		defer m.h.wg.Done()
		l, err := m.load(ctx)
		res <- result{l, err}
	}()
	var r result
	select {
	case r = <-res:
		cancel()
	case <-ctx.Done():
		go func() {
			defer cancel()
			if late := <-res; late.err == nil {
				late.l.first.close()
				_ = late.l.compiled.Close(context.Background())
			}
		}()
		r.err = ctx.Err()
	}
	if r.err != nil && m.h.ctx.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return loadResult{}, fmt.Errorf("%w after %v (compile, _initialize, describe): %w", ErrLoadTimeout, m.h.cfg.LoadTimeout, r.err)
	}
	return r.l, r.err
}

// load compiles the module, checks its ABI and reads its manifest through a
// first instance, which the caller keeps in the pool.
func (m *module) load(ctx context.Context) (loadResult, error) {
	t0 := time.Now()
	compiled, err := m.h.rt.CompileModule(ctx, m.wasm)
	if err != nil {
		return loadResult{}, fmt.Errorf("compile %s: %w", m.source, err)
	}
	fail := func(in *instance, err error) (loadResult, error) {
		if in != nil {
			in.close()
		}
		_ = compiled.Close(context.Background())
		return loadResult{}, err
	}
	ictx, icancel := context.WithTimeout(ctx, m.h.cfg.InitTimeout)
	in, err := newInstance(ictx, m.h.rt, compiled, m.logs)
	icancel()
	if err != nil {
		return fail(nil, err)
	}
	cctx, cancel := context.WithTimeout(ctx, m.h.cfg.CallTimeout)
	defer cancel()
	v, err := in.abiVersion(cctx)
	if err != nil {
		return fail(in, fmt.Errorf("abi version: %w", err))
	}
	if v != sdk.ABIVersion {
		return fail(in, fmt.Errorf("module reports ABI %d, host speaks %d: %w", v, sdk.ABIVersion, ErrABI))
	}
	man, err := in.describe(cctx, m.h.cfg.MaxOutputBytes)
	if err != nil {
		return fail(in, fmt.Errorf("describe: %w", err))
	}
	if err := checkManifest(man, in); err != nil {
		return fail(in, err)
	}
	if err := m.checkName(man.Name); err != nil {
		return fail(in, err)
	}
	return loadResult{compiled: compiled, manifest: man, first: in, took: time.Since(t0)}, nil
}

// ErrNameTaken is a user plugin whose manifest names a built-in.
var ErrNameTaken = errors.New("plugin name taken by a built-in")

// checkName refuses a user plugin named like a built-in (runbox or
// runbox-*, reserved, or a built-in's own name): it would answer
// as the built-in ("by runbox-classify 9.9.9") and plugins info could not
// tell them apart.
func (m *module) checkName(name string) error {
	if m.builtin {
		return nil
	}
	// The built-ins are named runbox-NAME; most describe themselves only
	// once loaded, so the prefix is reserved rather than each name looked
	// up (which would load every built-in whenever a user plugin loads).
	if name == "runbox" || strings.HasPrefix(name, "runbox-") {
		return fmt.Errorf("manifest name %q: names runbox and runbox-* are the built-in plugins'; rename the plugin (sdk.Manifest.Name) and rebuild it: %w", name, ErrNameTaken)
	}
	for _, b := range m.h.cfg.Builtins {
		if b.Manifest != nil && name == b.Manifest.Name {
			return fmt.Errorf("manifest name %q is a built-in plugin's; rename the plugin (sdk.Manifest.Name) and rebuild it: %w", name, ErrNameTaken)
		}
	}
	return nil
}

func checkManifest(man sdk.Manifest, in *instance) error {
	if man.Name == "" {
		return fmt.Errorf("manifest has no name: %w", ErrABI)
	}
	if man.ABI != 0 && man.ABI != sdk.ABIVersion {
		return fmt.Errorf("manifest declares ABI %d, host speaks %d: %w", man.ABI, sdk.ABIVersion, ErrABI)
	}
	for _, k := range man.Kinds {
		exp := exportFor(k)
		if exp == "" {
			return fmt.Errorf("manifest lists unknown kind %q: %w", k, ErrABI)
		}
		if in.fns[exp] == nil {
			return fmt.Errorf("manifest lists kind %s but %s is not exported: %w", k, exp, ErrABI)
		}
	}
	return nil
}

func exportFor(k sdk.Kind) string {
	switch k {
	case sdk.KindPlanner:
		return exportPlan
	case sdk.KindClassifier:
		return exportClassify
	case sdk.KindProgress:
		return exportParse
	}
	return ""
}

// instantiate makes a new instance under InitTimeout. The caller holds a slot.
func (m *module) instantiate(ctx context.Context) (*instance, error) {
	ictx, cancel := context.WithTimeout(ctx, m.h.cfg.InitTimeout)
	defer cancel()
	return newInstance(ictx, m.h.rt, m.compiled, m.logs)
}

// acquire returns an idle instance or a new one, waiting while MaxInstances
// are busy.
func (m *module) acquire(ctx context.Context) (*instance, error) {
	select {
	case m.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case in := <-m.pool:
		return in, nil
	default:
	}
	in, err := m.instantiate(ctx)
	if err != nil {
		<-m.slots
		return nil, err
	}
	return in, nil
}

// release returns in to the pool, or closes it after an error, past the
// memory threshold or when the pool is full.
func (m *module) release(in *instance, callErr error) {
	defer func() {
		select {
		case <-m.slots:
		default: // load's first instance held no slot
		}
	}()
	if callErr != nil || in.memBytes() > m.h.cfg.RecycleBytes || m.h.closed.Load() {
		in.close()
		return
	}
	select {
	case m.pool <- in:
	default:
		in.close()
	}
}

// drain closes the idle instances.
func (m *module) drain() {
	for {
		select {
		case in := <-m.pool:
			in.close()
		default:
			return
		}
	}
}

// loaded reports, without waiting, whether m finished loading successfully.
func (m *module) loaded() bool {
	select {
	case <-m.ready:
		return m.loadErr == nil
	default:
		return false
	}
}

// ErrNameClash is a user plugin whose manifest name another loaded user
// plugin has too.
var ErrNameClash = errors.New("plugin name not unique")

// clash returns, for a loaded user plugin that another loaded user plugin
// of the host is named like, why neither is used; nil otherwise. It is
// decided once both are loaded (no load waits for another), the same for
// each of them: both are failed, rather than one picked by which loaded
// first.
func (m *module) clash() error {
	if m.builtin || !m.loaded() {
		return nil
	}
	name := m.manifest.Name
	srcs := []string{m.source}
	for _, o := range m.h.mods() {
		if o == m || o.builtin || o.source == m.source || !o.loaded() || o.manifest.Name != name {
			continue
		}
		srcs = append(srcs, o.source)
	}
	if len(srcs) < 2 {
		return nil
	}
	sort.Strings(srcs)
	n := "two"
	if len(srcs) > 2 {
		n = strconv.Itoa(len(srcs))
	}
	return fmt.Errorf("%s plugins are named %s: %s; remove one (runbox plugins remove BUNDLE, or delete the file) or rename its plugin (sdk.Manifest.Name): %w",
		n, name, strings.Join(srcs, ", "), ErrNameClash)
}
