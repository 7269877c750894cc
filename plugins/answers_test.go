package plugins

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/sdk"
)

// checkAnswer refuses what a run must throw away, NaN included.
func TestCheckAnswer(t *testing.T) {
	for _, tc := range []struct {
		f    sdk.Failure
		want string // "" = accepted
	}{
		{sdk.Failure{Code: sdk.CodeCUDAOOM, Confidence: 0.9}, ""},
		{sdk.Failure{Code: sdk.CodeCUDAOOM, Confidence: 0}, ""},
		{sdk.Failure{Code: sdk.CodeCUDAOOM, Confidence: 1}, ""},
		{sdk.Failure{Code: sdk.CodeCUDAOOM, Confidence: 5}, "outside 0..1"},
		{sdk.Failure{Code: sdk.CodeCUDAOOM, Confidence: -0.1}, "outside 0..1"},
		{sdk.Failure{Code: sdk.CodeCUDAOOM, Confidence: math.NaN()}, "outside 0..1"},
		{sdk.Failure{Code: sdk.CodeCUDAOOM, Confidence: math.Inf(1)}, "outside 0..1"},
		{sdk.Failure{Code: "BOGUS", Confidence: 0.5}, "unknown failure code"},
	} {
		err := checkAnswer(&tc.f)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalidAnswer)) {
			t.Errorf("checkAnswer(%+v) = %v, want %q", tc.f, err, tc.want)
		}
	}
}

// A classifier's answer outside the contract (confidence above 1 or below
// 0, an unknown code) is refused and logged: the valid answer beside it
// wins.
func TestClassifyRefusesInvalidAnswers(t *testing.T) {
	h, logs := newTestHost(t, Config{}, pluginDir(t, "liar", "echo"))
	ctx := context.Background()
	for _, tc := range []struct {
		exit int
		log  string
	}{
		{50, "confidence 5 is outside 0..1"},
		{51, `unknown failure code \"BOGUS\"`},
		{52, "confidence -0.5 is outside 0..1"},
	} {
		f := h.Classify(ctx, sdk.ClassifyInput{ExitCode: tc.exit})
		if f == nil || f.Plugin != "echo" || f.Confidence != 0.5 {
			t.Errorf("exit %d: classify = %+v, want echo's answer", tc.exit, f)
		}
		if !strings.Contains(logs.String(), tc.log) {
			t.Errorf("exit %d: log lacks %q:\n%s", tc.exit, tc.log, logs)
		}
	}
}

// A plugin that keeps giving invalid answers is switched off like one that
// keeps failing.
func TestInvalidAnswersTripBreaker(t *testing.T) {
	h, logs := newTestHost(t, Config{FailureThreshold: 3, Cooldown: time.Hour}, pluginDir(t, "liar"))
	ctx := context.Background()
	for range 3 {
		if f := h.Classify(ctx, sdk.ClassifyInput{ExitCode: 51}); f != nil {
			t.Fatalf("classify = %+v, want nothing", f)
		}
	}
	if !strings.Contains(logs.String(), "plugin switched off") {
		t.Errorf("log:\n%s", logs)
	}
	infos := h.Plugins(ctx)
	if len(infos) != 1 || infos[0].Status != StatusOff || !strings.Contains(infos[0].OffReason, "unknown failure code") {
		t.Fatalf("plugins = %+v, want liar off for its unknown code", infos)
	}
}

// The guest's own message (an _initialize panic's, a call's) is in the
// error the user sees, and ls's fields are one line.
func TestGuestMessageInErrors(t *testing.T) {
	ctx := context.Background()
	h, _ := newTestHost(t, Config{MemoryLimitPages: 1024, CallTimeout: 20 * time.Second, FailureThreshold: 1, Cooldown: time.Hour},
		pluginDir(t, "initpanic", "oom"))
	_, errs := h.Plan(ctx, sdk.PlanInput{})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `guest said "fatal error: out of memory"`) {
		t.Errorf("plan errors %v: want the guest's fatal error", errs)
	}
	for _, i := range h.Plugins(ctx) {
		var want, got string
		switch {
		case strings.HasSuffix(i.Source, "initpanic.wasm"):
			want, got = "sdk: Register called twice", i.LastError
		case strings.HasSuffix(i.Source, "oom.wasm"):
			want, got = "fatal error: out of memory", i.OffReason
		}
		if !strings.Contains(got, want) || strings.Contains(got, "\n") || strings.Contains(i.LastError, "\n") {
			t.Errorf("%s: status %s, why %q: want one line naming %q", i.Source, i.Status, got, want)
		}
		if i.Detail == "" {
			t.Errorf("%s: no detail", i.Source)
		}
	}
}

// A user plugin named like a built-in is not loaded: it must not answer
// as the built-in.
func TestUserPluginNamedLikeBuiltinRefused(t *testing.T) {
	h, _ := newTestHost(t, Config{Builtins: builtins()}, pluginDir(t, "impostor"))
	ctx := context.Background()
	if f := h.Classify(ctx, sdk.ClassifyInput{ExitCode: 1}); f != nil && f.Message == "impostor" {
		t.Fatalf("classify = %+v: the impostor answered", f)
	}
	n := 0
	for _, i := range h.Plugins(ctx) {
		if strings.HasSuffix(i.Source, "impostor.wasm") {
			if i.Status != StatusFailed || !strings.Contains(i.LastError, "built-in") {
				t.Errorf("impostor: %s %q, want failed: name of a built-in", i.Status, i.LastError)
			}
			continue
		}
		if i.Name == "runbox-classify" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d plugins named runbox-classify, want the built-in alone", n)
	}
}
