package plugins

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/plugins/internal/plugintest"
	"github.com/runbox/runbox/sdk"
)

// These tests provoke broken plugins for real (plugins/testdata/hang loops
// in every call, initloop in its _initialize) and check that the other
// plugins' answers still come. Where a bound is asserted, it is far below
// the broken plugin's own deadline (a minute), so the test tells "waited
// for the broken plugin" from "did not", not how fast anything is.

func progressLine(step, total int) string {
	return fmt.Sprintf(`##PROGRESS## {"step": %d, "total": %d}`, step, total)
}

// within runs fn and fails the test when it has not returned after d.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s still blocked after %v: it waits for the broken plugin", what, d)
	}
}

// Fault: a progress plugin whose parse never returns, asked first -> Feed never blocks; the built-in's progress arrives within a Flush bound far below the hang's deadline
func TestFaultHangingProgressPlugin(t *testing.T) {
	h, _ := newTestHost(t, Config{Builtins: builtins(), CallTimeout: time.Minute}, pluginDir(t, "hang"))
	ctx := context.Background()
	p := h.NewParser()
	p.Ready(ctx)
	const n = 600 // two full batches, and some left for Flush
	within(t, 20*time.Second, "Feed", func() {
		for i := 1; i <= n; i++ {
			p.Feed("stdout", progressLine(i, n))
		}
	})
	within(t, 20*time.Second, "Flush", func() {
		fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		p.Flush(fctx)
	})
	var s *sdk.Progress
	within(t, 20*time.Second, "State", func() { s = p.State() })
	if s == nil || s.Step != n || s.Total != n || s.Source != "runbox" {
		t.Fatalf("state = %+v, want the built-in's step %d/%d", s, n, n)
	}
}

// Fault: a progress plugin that times out repeatedly -> switched off; shown off with why and retry time, also to another process (state file); the built-in's progress complete
func TestFaultHangingProgressSwitchedOff(t *testing.T) {
	state := filepath.Join(t.TempDir(), "plugin-state.json")
	cfg := Config{
		Builtins: builtins(), StateFile: state,
		CallTimeout: 200 * time.Millisecond, FailureThreshold: 2, Cooldown: time.Hour,
	}
	dir := pluginDir(t, "hang")
	h, logs := newTestHost(t, cfg, dir)
	ctx := context.Background()
	p := h.NewParser()
	p.Ready(ctx)
	step := 0
	for !strings.Contains(logs.String(), "plugin switched off") {
		if step > 100 {
			t.Fatalf("not switched off after %d flushes:\n%s", step, logs)
		}
		step++
		p.Feed("stdout", progressLine(step, 1000))
		p.Flush(ctx) // waits for the hang's call deadline each time
	}
	step++
	p.Feed("stdout", progressLine(step, 1000))
	p.Flush(ctx)
	if s := p.State(); s == nil || s.Step != int64(step) {
		t.Fatalf("state = %+v, want step %d", s, step)
	}
	check := func(h *Host) {
		t.Helper()
		for _, i := range h.Plugins(ctx) {
			if i.Name != "hang" {
				if i.Status != StatusReady {
					t.Errorf("%s: status %s", i.Name, i.Status)
				}
				continue
			}
			if i.Status != StatusOff || !strings.Contains(i.OffReason, "timed out") || i.RetryAt == nil ||
				i.RetryAt.Before(time.Now().Add(50*time.Minute)) || i.RetryAt.After(time.Now().Add(time.Hour)) {
				t.Errorf("hang = status %s, off_reason %q, retry_at %v: want off, timed out, in about an hour", i.Status, i.OffReason, i.RetryAt)
			}
		}
	}
	check(h)
	other, _ := newTestHost(t, cfg, dir)
	check(other)
}

// Fault: a classifier that never returns, asked first, caller deadline below its call deadline -> the healthy classifier's answer is returned
func TestFaultHangingClassifier(t *testing.T) {
	h, _ := newTestHost(t, Config{CallTimeout: time.Minute}, pluginDir(t, "hang"), pluginDir(t, "echo"))
	h.Plugins(context.Background()) // both loaded: the deadline below is the calls'
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var f *sdk.Failure
	within(t, 20*time.Second, "Classify", func() { f = h.Classify(ctx, sdk.ClassifyInput{ExitCode: 1}) })
	if f == nil || f.Plugin != "echo" || f.Code != sdk.CodeNonzeroExit {
		t.Fatalf("classify = %+v, want echo's answer", f)
	}
}

// Fault: a planner that never returns, asked first, caller deadline below its call deadline -> the healthy planner's plan is returned, the hang's error reported
func TestFaultHangingPlanner(t *testing.T) {
	h, _ := newTestHost(t, Config{CallTimeout: time.Minute}, pluginDir(t, "hang"), pluginDir(t, "echo"))
	h.Plugins(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var out sdk.PlanOutput
	var errs []error
	within(t, 20*time.Second, "Plan", func() { out, errs = h.Plan(ctx, sdk.PlanInput{Command: []string{"x"}}) })
	if len(out.Frameworks) != 1 || out.Frameworks[0] != "echo" || len(errs) != 1 || !strings.Contains(errs[0].Error(), "hang") {
		t.Fatalf("plan = %+v, errs %v: want echo's plan and hang's error", out, errs)
	}
}

// Fault: a progress plugin whose _initialize never returns, still loading -> the built-in's progress arrives within a Flush bound far below the load deadline
func TestFaultInitLoopProgress(t *testing.T) {
	cfg := Config{Builtins: builtins(), LoadTimeout: 10 * time.Minute, InitTimeout: 10 * time.Minute}
	h, _ := newTestHost(t, cfg, pluginDir(t, "initloop"))
	p := h.NewParser()
	for i := 1; i <= 5; i++ {
		p.Feed("stdout", progressLine(i, 10))
	}
	// The built-in loaded (it may be compiling; initloop's _initialize
	// goes on far longer), one Flush bounded well below initloop's
	// deadline brings its progress.
	for _, m := range h.modules {
		if m.builtin && !m.wait(context.Background()) {
			t.Fatalf("%s: %v", m.source, m.loadErr)
		}
	}
	within(t, 20*time.Second, "Flush", func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		p.Flush(ctx)
	})
	if s := p.State(); s == nil || s.Step != 5 || s.Source != "runbox" {
		t.Fatalf("state = %+v, want the built-in's step 5", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, i := range h.Plugins(ctx) {
		if strings.HasSuffix(i.Source, "initloop.wasm") && i.Status != StatusPending {
			t.Errorf("initloop is %s, want still pending (loading)", i.Status)
		}
	}
}

// Fault: a plugin whose _initialize never returns -> its load is cut at LoadTimeout; it shows failed with why, and the classifier beside it answers
func TestFaultInitLoopLoadBounded(t *testing.T) {
	ctx := context.Background()
	echo := pluginDir(t, "echo")
	// echo from the compilation cache, so that it loads well within the
	// short load deadline below.
	warm, _ := newTestHost(t, Config{CacheDir: plugintest.CacheDir(t)}, echo)
	warm.Plugins(ctx)
	cfg := Config{CacheDir: plugintest.CacheDir(t), LoadTimeout: 3 * time.Second, InitTimeout: time.Hour}
	h, logs := newTestHost(t, cfg, pluginDir(t, "initloop"), echo)
	var f *sdk.Failure
	within(t, 30*time.Second, "Classify", func() { f = h.Classify(ctx, sdk.ClassifyInput{ExitCode: 1}) })
	if f == nil || f.Plugin != "echo" {
		t.Fatalf("classify = %+v, want echo's answer", f)
	}
	var infos []Info
	within(t, 30*time.Second, "Plugins", func() { infos = h.Plugins(ctx) })
	for _, i := range infos {
		if strings.HasSuffix(i.Source, "initloop.wasm") && (i.Status != StatusFailed || !strings.Contains(i.LastError, "load timed out")) {
			t.Errorf("initloop = %s %q, want failed: load timed out", i.Status, i.LastError)
		}
	}
	if !strings.Contains(logs.String(), "plugin not loaded") {
		t.Errorf("log:\n%s", logs)
	}
}
