package plugins

import (
	"context"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/sdk"
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
	if info.Status != StatusOff || info.Calls != 2 || !strings.Contains(info.LastError, "boom") {
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
	// 250 lines match the prefilter: two full batches sent as Feed fills
	// them (by the plugin's sender, Feed does not wait), the rest on Flush.
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
	h, err := NewHost(context.Background(), Config{Builtins: builtins(), CacheDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
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

// TestBuiltinManifests: the manifests ProgressFilter relies on are what
// the built-in modules describe.
func TestBuiltinManifests(t *testing.T) {
	h, err := NewHost(context.Background(), Config{Builtins: builtins(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	checked := 0
	for _, m := range h.modules {
		want := m.known
		if want == nil {
			continue
		}
		checked++
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
	if checked == 0 {
		t.Fatal("no built-in comes with its manifest")
	}
}

func TestProgressFilter(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	h, err := NewHost(ctx, Config{Builtins: builtins(), Logger: quiet, MaxLineBytes: 64})
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
	// A built-in progress plugin handed over without its manifest: unknown.
	var bare []Builtin
	for _, b := range builtins() {
		b.Manifest = nil
		bare = append(bare, b)
	}
	hb, err := NewHost(ctx, Config{Builtins: bare, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer hb.Close(ctx)
	if hb.ProgressFilter() != nil {
		t.Fatal("built-in without its manifest: filter should be unknown")
	}
	// No progress plugin at all: no line can have progress.
	n, _ := newTestHost(t, Config{})
	if f := n.ProgressFilter(); f == nil || f(tqdm) {
		t.Fatal("no plugins: every line should be turned away")
	}
}
