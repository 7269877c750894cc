package plugins

import (
	"bytes"
	"context"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/plugins/builtin"
	"github.com/runbox/runbox/sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

func TestEchoAllKinds(t *testing.T) {
	h, _ := newTestHost(t, Config{}, pluginDir(t, "echo"))
	ctx := context.Background()

	out, errs := h.Plan(ctx, sdk.PlanInput{Command: []string{"python", "train.py"}})
	if len(errs) != 0 || len(out.Notes) != 1 || out.Notes[0] != "python train.py" || out.Frameworks[0] != "echo" {
		t.Fatalf("plan = %+v, %v", out, errs)
	}
	f := h.Classify(ctx, sdk.ClassifyInput{ExitCode: 1})
	if f == nil || f.Code != sdk.CodeNonzeroExit || f.Plugin != "echo" {
		t.Fatalf("classify = %+v", f)
	}
	if f := h.Classify(ctx, sdk.ClassifyInput{ExitCode: 0}); f != nil {
		t.Fatalf("classify with nothing to say = %+v", f)
	}
	infos := h.Plugins(ctx)
	if len(infos) != 1 || infos[0].Status != StatusReady || len(infos[0].Kinds) != 3 || len(infos[0].SHA256) != 64 {
		t.Fatalf("plugins = %+v", infos)
	}
}

func TestFaults(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		cfg     Config
		call    func(h *Host) bool // reports whether the bad call got an answer
		wantLog string
	}{
		{"loop", Config{CallTimeout: 300 * time.Millisecond}, func(h *Host) bool {
			return h.Classify(ctx, sdk.ClassifyInput{ExitCode: 42}) != nil
		}, "plugin call timed out"},
		{"oom", Config{MemoryLimitPages: 1024, CallTimeout: 20 * time.Second}, func(h *Host) bool {
			_, errs := h.Plan(ctx, sdk.PlanInput{})
			return len(errs) == 0
		}, "out of memory"},
		{"panic", Config{CallTimeout: 10 * time.Second}, func(h *Host) bool {
			return h.Classify(ctx, sdk.ClassifyInput{ExitCode: 1}) != nil
		}, "panic: boom from guest"},
		{"bigout", Config{CallTimeout: 10 * time.Second}, func(h *Host) bool {
			_, errs := h.Plan(ctx, sdk.PlanInput{})
			return len(errs) == 0
		}, "plugin output too large"},
		{"badabi", Config{CallTimeout: 10 * time.Second}, func(h *Host) bool {
			return h.Classify(ctx, sdk.ClassifyInput{ExitCode: 1}) != nil
		}, "manifest declares ABI 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// echo rides along: the host must keep serving it.
			h, logs := newTestHost(t, tc.cfg, pluginDir(t, tc.name, "echo"))
			start := time.Now()
			tc.call(h)
			if time.Since(start) > 20*time.Second {
				t.Fatalf("bad plugin held the host for %v", time.Since(start))
			}
			if !strings.Contains(logs.String(), tc.wantLog) {
				t.Fatalf("log lacks %q:\n%s", tc.wantLog, logs.String())
			}
			if f := h.Classify(ctx, sdk.ClassifyInput{ExitCode: 3}); f == nil {
				t.Fatalf("host stopped working after %s", tc.name)
			}
			if out, _ := h.Plan(ctx, sdk.PlanInput{Command: []string{"x"}}); len(out.Frameworks) == 0 {
				t.Fatalf("planner echo stopped working after %s", tc.name)
			}
		})
	}
}

func TestNotWasm(t *testing.T) {
	h, logs := newTestHost(t, Config{}, "testdata/notwasm", pluginDir(t, "echo"))
	ctx := context.Background()
	if f := h.Classify(ctx, sdk.ClassifyInput{ExitCode: 1}); f == nil || f.Plugin != "echo" {
		t.Fatalf("classify = %+v", f)
	}
	if !strings.Contains(logs.String(), "plugin not loaded") || !strings.Contains(logs.String(), "notwasm/plugin.wasm") {
		t.Fatalf("log:\n%s", logs)
	}
	var failed int
	for _, i := range h.Plugins(ctx) {
		if i.Status == StatusFailed && i.LastError != "" {
			failed++
		}
	}
	if failed != 1 {
		t.Fatalf("plugins = %+v", h.Plugins(ctx))
	}
}

func TestTimeoutDiscardsInstanceAndRecovers(t *testing.T) {
	h, _ := newTestHost(t, Config{CallTimeout: 200 * time.Millisecond}, pluginDir(t, "loop"))
	ctx := context.Background()
	for range 2 {
		if f := h.Classify(ctx, sdk.ClassifyInput{ExitCode: 42}); f != nil {
			t.Fatalf("runaway classify answered %+v", f)
		}
		if f := h.Classify(ctx, sdk.ClassifyInput{ExitCode: 1}); f == nil || f.Plugin != "loop" {
			t.Fatalf("loop plugin not usable after a timeout: %+v", f)
		}
	}
}

func TestCircuitBreaker(t *testing.T) {
	h, logs := newTestHost(t, Config{FailureThreshold: 2, Cooldown: time.Hour}, pluginDir(t, "panic"))
	ctx := context.Background()
	for range 5 {
		if f := h.Classify(ctx, sdk.ClassifyInput{ExitCode: 1}); f != nil {
			t.Fatalf("got %+v", f)
		}
	}
	info := h.Plugins(ctx)[0]
	if info.Status != StatusDisabled || info.Calls != 2 || !strings.Contains(info.LastError, "boom") {
		t.Fatalf("info = %+v", info)
	}
	if n := strings.Count(logs.String(), "plugin switched off"); n != 1 {
		t.Fatalf("switched-off logged %d times:\n%s", n, logs)
	}
}

func TestPrefilterAndBatching(t *testing.T) {
	h, _ := newTestHost(t, Config{BatchLines: 100}, pluginDir(t, "echo"))
	p := h.NewParser()
	p.Ready(context.Background()) // wait for loading so Feed sends full batches
	for i := range 1000 {
		line := "ordinary log line"
		if i%4 == 0 {
			line = "epoch 1 step " + strings.Repeat("=", i%7)
		}
		p.Feed("stdout", line)
	}
	// 250 lines match the prefilter: two full batches sent by Feed.
	if s := p.State(); s == nil || s.Step != 200 {
		t.Fatalf("state before flush = %+v", s)
	}
	p.Flush(context.Background())
	s := p.State()
	if s == nil || s.Step != 250 || s.Source != "echo" || !strings.Contains(s.Message, "step") {
		t.Fatalf("state = %+v", s)
	}
	if calls := h.Plugins(context.Background())[0].Calls; calls != 3 {
		t.Fatalf("parse calls = %d, want 3 batches", calls)
	}
}

func TestBacklogBeforeLoad(t *testing.T) {
	h, _ := newTestHost(t, Config{}, pluginDir(t, "echo"))
	p := h.NewParser()
	p.Feed("stderr", "step 1") // probably before the plugin is loaded
	p.Feed("stderr", "no match")
	p.Flush(context.Background())
	if s := p.State(); s == nil || s.Step != 1 {
		t.Fatalf("state = %+v", s)
	}
}

// TestFlushAndReadyWhileLoading: with nothing fed, Flush has nothing to
// wait for and leaves the plugins loading (a run with no output ends
// without waiting on a first-ever compile); Ready waits for them. The
// cache is empty, so the built-in progress plugin takes a compile to load.
func TestFlushAndReadyWhileLoading(t *testing.T) {
	h, err := NewHost(context.Background(), Config{CacheDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	var prog *module
	for _, m := range h.modules {
		if m.kind == sdk.KindProgress {
			prog = m
		}
	}
	if prog == nil {
		t.Fatal("no built-in progress module")
	}
	p := h.NewParser()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p.Flush(ctx)
	select {
	case <-prog.ready:
		t.Fatal("Flush with nothing fed waited for the plugin to load")
	default:
	}
	p.Ready(ctx)
	select {
	case <-prog.ready:
	default:
		t.Fatal("Ready returned before the plugin was loaded")
	}
	p.Feed("stdout", "##PROGRESS## {\"step\": 3, \"total\": 9}")
	p.Flush(ctx)
	if s := p.State(); s == nil || s.Step != 3 {
		t.Fatalf("state = %+v", s)
	}
}

// testModule builds a module with one memory of 4 pages (imported when
// importMem) and the given data segments: an offset < 0 makes a passive one.
func testModule(importMem, dataCount bool, segs []testSegment) []byte {
	sec := func(out []byte, id byte, body []byte) []byte {
		out = append(out, id)
		out = appendUleb(out, uint32(len(body)))
		return append(out, body...)
	}
	out := []byte("\x00asm\x01\x00\x00\x00")
	if importMem {
		out = sec(out, 2, []byte("\x01\x03env\x03mem\x02\x00\x04"))
	} else {
		out = sec(out, 5, []byte{1, 0, 4})
	}
	if dataCount {
		out = sec(out, 12, appendUleb(nil, uint32(len(segs))))
	}
	body := appendUleb(nil, uint32(len(segs)))
	for _, s := range segs {
		if s.off < 0 {
			body = append(body, 1)
		} else {
			body = append(body, 0, 0x41)
			body = appendSleb(body, s.off)
			body = append(body, 0x0b)
		}
		body = appendUleb(body, uint32(len(s.data)))
		body = append(body, s.data...)
	}
	return sec(out, 11, body)
}

type testSegment struct {
	off  int32
	data []byte
}

// testSegments: 200 segments of 1-40 non-zero bytes with gaps of 8 bytes
// to 10 KiB between them, shuffled.
func testSegments() []testSegment {
	r := rand.New(rand.NewPCG(1, 2))
	var segs []testSegment
	off := int32(16)
	for i := range 200 {
		d := make([]byte, 1+r.IntN(40))
		for k := range d {
			d[k] = byte(1 + r.IntN(255))
		}
		segs = append(segs, testSegment{off, d})
		gap := 8 + r.IntN(64)
		if i%50 == 49 {
			gap = 10 << 10
		}
		off += int32(len(d) + gap)
	}
	r.Shuffle(len(segs), func(i, j int) { segs[i], segs[j] = segs[j], segs[i] })
	return segs
}

// initialMemory instantiates wasm (interpreted, no start function) and
// returns its memory as the data segments left it.
func initialMemory(t *testing.T, wasm []byte, withWASI bool) []byte {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	if withWASI {
		wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	}
	mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithStartFunctions())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := mod.Memory().Read(0, mod.Memory().Size())
	return bytes.Clone(b)
}

// dataSegments counts the data segments of a module.
func dataSegments(wasm []byte) uint32 {
	for i := 8; i < len(wasm); {
		size, n := uleb32(wasm[i+1:])
		if wasm[i] == 11 {
			c, _ := uleb32(wasm[i+1+n:])
			return c
		}
		i += 1 + n + int(size)
	}
	return 0
}

func TestMergeDataSegments(t *testing.T) {
	segs := testSegments()
	orig := testModule(false, false, segs)
	merged := mergeDataSegments(orig)
	if bytes.Equal(merged, orig) {
		t.Fatal("segments not merged")
	}
	if c := dataSegments(merged); c != 4 {
		// 3 gaps of 10 KiB split the 200 segments into 4 runs
		t.Errorf("merged into %d segments, want 4", c)
	}
	if !bytes.Equal(initialMemory(t, merged, false), initialMemory(t, orig, false)) {
		t.Fatal("merged module starts with other memory contents")
	}

	// What it does not fully understand stays as it is.
	overlap := append(slices.Clone(segs), testSegment{segs[0].off + 1, []byte{7}})
	passive := append(slices.Clone(segs), testSegment{-1, []byte{7}})
	for name, wasm := range map[string][]byte{
		"imported memory":    testModule(true, false, segs),
		"data count section": testModule(false, true, segs),
		"overlap":            testModule(false, false, overlap),
		"passive segment":    testModule(false, false, passive),
		"few segments":       testModule(false, false, segs[:10]),
		"not wasm":           []byte("#!/bin/sh\necho hello\n"),
	} {
		if got := mergeDataSegments(wasm); !bytes.Equal(got, wasm) {
			t.Errorf("%s: module changed", name)
		}
	}
	// Truncated or corrupt, it never panics and never grows a broken module
	// into a valid-looking one: it only ever returns its input or a merge.
	for n := range len(orig) {
		if got := mergeDataSegments(orig[:n]); !bytes.Equal(got, orig[:n]) {
			t.Fatalf("truncated to %d bytes: module changed", n)
		}
	}
}

// TestMergeDataSegmentsBuiltins: each built-in loses its tens of thousands
// of segments and starts with the same memory.
func TestMergeDataSegmentsBuiltins(t *testing.T) {
	if testing.Short() {
		t.Skip("interprets the built-ins' data segments; skipped with -short")
	}
	for _, b := range builtin.Modules() {
		t.Run(b.Name, func(t *testing.T) {
			merged := mergeDataSegments(b.Wasm)
			if n, m := dataSegments(b.Wasm), dataSegments(merged); m >= n/100 {
				t.Fatalf("%d segments merged into %d", n, m)
			}
			if !bytes.Equal(initialMemory(t, merged, true), initialMemory(t, b.Wasm, true)) {
				t.Fatal("merged module starts with other memory contents")
			}
		})
	}
}

// TestBuiltinManifests: the manifests ProgressFilter relies on are what
// the built-in modules describe.
func TestBuiltinManifests(t *testing.T) {
	h, err := NewHost(context.Background(), Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	for _, m := range h.modules {
		want, ok := builtinManifests[m.source]
		if !ok {
			continue
		}
		if !m.wait(context.Background()) {
			t.Fatalf("%s: not loaded: %v", m.source, m.loadErr)
		}
		got := m.manifest
		if got.Name != want.Name || !slices.Equal(got.Kinds, want.Kinds) ||
			!reflect.DeepEqual(got.Prefilter, want.Prefilter) ||
			!reflect.DeepEqual(got.PrefilterConfirm, want.PrefilterConfirm) {
			t.Errorf("%s describes %+v\nknown as %+v", m.source, got, *want)
		}
	}
}

func TestProgressFilter(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	h, err := NewHost(ctx, Config{Logger: quiet, MaxLineBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	may := h.ProgressFilter()
	if may == nil {
		t.Fatal("built-ins only: the filter should be known")
	}
	for _, m := range h.modules {
		if m.kind == sdk.KindProgress {
			select {
			case <-m.ready:
				t.Fatal("asking for the filter loaded the progress plugin")
			default:
			}
		}
	}
	tqdm := " 45%|████▌     | 45/100 [00:04<00:05, 10.12it/s]"
	for line, want := range map[string]bool{
		tqdm:                                 true,
		"Traceback (most recent call last):": false,
		strings.Repeat("x", 64) + tqdm:       false, // past MaxLineBytes: cut before the filter
	} {
		if got := may(line); got != want {
			t.Errorf("%q: %v, want %v", line, got, want)
		}
	}
	// Every line the filter turns away is one the plugin never gets.
	p := h.NewParser()
	p.Feed("stdout", "Traceback (most recent call last):")
	p.Flush(ctx)
	if p.State() != nil {
		t.Fatal("progress from a line the filter turned away")
	}

	// A user plugin could be a progress parser with any prefilter: unknown.
	u, _ := newTestHost(t, Config{}, pluginDir(t, "echo"))
	if u.ProgressFilter() != nil {
		t.Fatal("user plugin: filter should be unknown")
	}
	// No progress plugin at all: no line can have progress.
	n, _ := newTestHost(t, Config{})
	if f := n.ProgressFilter(); f == nil || f(tqdm) {
		t.Fatal("no plugins: every line should be turned away")
	}
}
