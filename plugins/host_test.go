package plugins

import (
	"context"
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
	p.Flush(context.Background()) // wait for loading so Feed sends full batches
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
