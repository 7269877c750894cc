package store

import (
	"context"
	"github.com/cockroachdb/pebble/v2"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sdk"
)

// seed creates runs r0..r9 one minute apart, newest last:
// r0-r3 succeeded, r4-r5 failed, r6 running, r7-r9 queued; r2, r4 and r5
// are retries of r1; r6-r9 belong to plan "p1".
func seed(t *testing.T, s *Store) (base time.Time) {
	t.Helper()
	ctx := context.Background()
	base = time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	for i := 0; i < 10; i++ {
		r := &Run{ID: "r" + string(rune('0'+i)), CreatedAt: base.Add(time.Duration(i) * time.Minute)}
		if i == 2 || i == 4 || i == 5 {
			r.ParentID = "r1"
		}
		if i >= 6 {
			r.PlanID = "p1"
		}
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		var to []State
		switch {
		case i <= 3:
			to = []State{Running, Succeeded}
		case i <= 5:
			to = []State{Running, Failed}
		case i == 6:
			to = []State{Preparing, Running}
		}
		for _, st := range to {
			if _, err := s.Transition(ctx, r.ID, st, "", nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	return base
}

func TestListRuns(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	base := seed(t, s)
	at := func(min int) time.Time { return base.Add(time.Duration(min) * time.Minute) }
	tests := []struct {
		name string
		f    Filter
		want string
	}{
		{"all newest first", Filter{}, "r9 r8 r7 r6 r5 r4 r3 r2 r1 r0"},
		{"limit", Filter{Limit: 3}, "r9 r8 r7"},
		{"state", Filter{States: []State{Succeeded}}, "r3 r2 r1 r0"},
		{"states merged", Filter{States: []State{Failed, Running}}, "r6 r5 r4"},
		{"states merged limit", Filter{States: []State{Succeeded, Failed}, Limit: 3}, "r5 r4 r3"},
		{"duplicate states", Filter{States: []State{Failed, Failed}}, "r5 r4"},
		{"no such state", Filter{States: []State{Lost}}, ""},
		{"parent", Filter{ParentID: "r1"}, "r5 r4 r2"},
		{"parent and state", Filter{ParentID: "r1", States: []State{Failed}}, "r5 r4"},
		{"plan", Filter{PlanID: "p1"}, "r9 r8 r7 r6"},
		{"plan and state", Filter{PlanID: "p1", States: []State{Queued}, Limit: 2}, "r9 r8"},
		{"since", Filter{Since: at(7)}, "r9 r8 r7"},
		{"before", Filter{Before: at(2)}, "r1 r0"},
		{"window", Filter{Since: at(3), Before: at(6)}, "r5 r4 r3"},
		{"window and state", Filter{Since: at(1), Before: at(5), States: []State{Succeeded}}, "r3 r2 r1"},
		{"parent window", Filter{ParentID: "r1", Since: at(3)}, "r5 r4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs, err := s.ListRuns(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(runs); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
	active, err := s.ActiveRuns(ctx)
	if err != nil || ids(active) != "r9 r8 r7 r6" {
		t.Fatalf("active: %q, %v", ids(active), err)
	}
	kids, err := s.Children(ctx, "r1")
	if err != nil || ids(kids) != "r5 r4 r2" {
		t.Fatalf("children: %q, %v", ids(kids), err)
	}
	// Index entries move with the run: no stale state entries remain.
	n := 0
	_ = s.reader(ctx, func(db *pebble.DB) error {
		it, _ := db.NewIter(nil)
		defer it.Close()
		for ok := it.SeekGE([]byte(idxState)); ok && strings.HasPrefix(string(it.Key()), idxState); ok = it.Next() {
			n++
		}
		return nil
	})
	if n != 10 {
		t.Fatalf("%d state index entries, want 10", n)
	}
}

func ids(runs []*Run) string {
	var out []string
	for _, r := range runs {
		out = append(out, r.ID)
	}
	return strings.Join(out, " ")
}

func TestExperience(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type outcome struct {
		state State
		code  string
		wall  float64
		rss   uint64
	}
	// Oldest first. The newest (queued) run is not terminal and is skipped.
	outcomes := []outcome{
		{Succeeded, "", 100, 1 << 30}, // beyond limit 6 below
		{Succeeded, "", 10, 1 << 20},
		{Failed, "CUDA_OOM", 5, 8 << 30},
		{Succeeded, "", 30, 2 << 20},
		{TimedOut, "TIMEOUT", 60, 3 << 20},
		{Cancelled, "CANCELLED", 1, 0},
		{Failed, "CUDA_OOM", 7, 4 << 20},
		{Queued, "", 0, 0},
	}
	for i, o := range outcomes {
		r := &Run{CreatedAt: base.Add(time.Duration(i) * time.Hour), Fingerprint: "fp-train"}
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		if o.state == Queued {
			continue
		}
		_, err := s.Transition(ctx, r.ID, o.state, "", func(r *Run) {
			r.Exit = &sandbox.Exit{Usage: sandbox.Usage{WallSeconds: o.wall, PeakRSSBytes: o.rss}}
			if o.code != "" {
				r.Failure = &sdk.Failure{Code: o.code, Message: o.code + " msg"}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateRun(ctx, &Run{Fingerprint: "other", State: Succeeded}); err != nil {
		t.Fatal(err)
	}
	exp, err := s.Experience(ctx, "fp-train", 6)
	if err != nil {
		t.Fatal(err)
	}
	if exp.Runs != 6 || exp.Succeeded != 2 || exp.Failed != 3 {
		t.Fatalf("counts: %+v", exp)
	}
	if exp.FailureCodes["CUDA_OOM"] != 2 || exp.FailureCodes["TIMEOUT"] != 1 || exp.FailureCodes["CANCELLED"] != 1 {
		t.Fatalf("codes: %v", exp.FailureCodes)
	}
	if exp.MedianDurationSeconds != 20 { // succeeded runs: 10 and 30
		t.Fatalf("median = %v, want 20", exp.MedianDurationSeconds)
	}
	if exp.MaxPeakRSSBytes != 8<<30 {
		t.Fatalf("max rss = %d", exp.MaxPeakRSSBytes)
	}
	if exp.LastFailure == nil || exp.LastFailure.Code != "CUDA_OOM" {
		t.Fatalf("last failure: %+v", exp.LastFailure)
	}
	none, err := s.Experience(ctx, "never-seen", 0)
	if err != nil || none.Runs != 0 {
		t.Fatalf("unknown fingerprint: %+v, %v", none, err)
	}
	long := strings.Repeat("x", 300) + "\x00"
	if err := s.CreateRun(ctx, &Run{Fingerprint: long, State: Failed}); err != nil {
		t.Fatal(err)
	}
	if e, err := s.Experience(ctx, long, 0); err != nil || e.Runs != 1 || e.Failed != 1 {
		t.Fatalf("long fingerprint: %+v, %v", e, err)
	}
}

// TestExperiencePeakOnlyFromRunsThatTellTheNeed: a plan sizes the next
// run's memory limit from MaxPeakRSSBytes, so a peak from a run that
// stopped before its command's need (a failed smoke run, an early
// failure, a cancelled or lost run) must not set it alone: a limit of
// 1.5× a smoke run's 13 MiB got the fixed run OOM-killed.
func TestExperiencePeakOnlyFromRunsThatTellTheNeed(t *testing.T) {
	type past struct {
		state State
		code  string
		rss   uint64
	}
	for _, tc := range []struct {
		name string
		runs []past
		want uint64
	}{
		{"failed smoke run alone", []past{{Failed, "SMOKE_FAILED", 13 << 20}}, 0},
		{"early failure alone", []past{{Failed, "FILE_NOT_FOUND", 9 << 20}}, 0},
		{"cancelled and lost alone", []past{{Cancelled, "CANCELLED", 20 << 20}, {Lost, "", 30 << 20}}, 0},
		{"succeeded", []past{{Succeeded, "", 600 << 20}, {Failed, "SMOKE_FAILED", 13 << 20}}, 600 << 20},
		{"timed out", []past{{TimedOut, "TIMEOUT", 700 << 20}}, 700 << 20},
		{"OOM-killed", []past{{Failed, "OOM_KILLED", 256 << 20}}, 256 << 20},
		{"a larger failed run raises a told peak", []past{{Succeeded, "", 100 << 20}, {Failed, "CUDA_OOM", 8 << 30}}, 8 << 30},
		{"a larger smoke run does not", []past{{Succeeded, "", 100 << 20}, {Failed, "SMOKE_FAILED", 8 << 30}}, 100 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := openTest(t, t.TempDir())
			for _, p := range tc.runs {
				r := &Run{Fingerprint: "fp"}
				if err := s.CreateRun(ctx, r); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Transition(ctx, r.ID, p.state, "", func(r *Run) {
					r.Exit = &sandbox.Exit{Usage: sandbox.Usage{WallSeconds: 1, PeakRSSBytes: p.rss}}
					if p.code != "" {
						r.Failure = &sdk.Failure{Code: p.code}
					}
				}); err != nil {
					t.Fatal(err)
				}
			}
			exp, err := s.Experience(ctx, "fp", 0)
			if err != nil {
				t.Fatal(err)
			}
			if exp.Runs != len(tc.runs) || exp.MaxPeakRSSBytes != tc.want {
				t.Fatalf("runs %d, max peak %d MiB; want %d runs, %d MiB", exp.Runs, exp.MaxPeakRSSBytes>>20, len(tc.runs), tc.want>>20)
			}
		})
	}
}

// The run a failure is compared with ("since it last worked") is the
// newest success in the failed run's own workspace; only when there is
// none there, the newest anywhere (the same script name in another
// project, which the diff then names first).
func TestLastSucceededPrefersTheSameWorkspace(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(i int, workdir string, st State) *Run {
		r := &Run{CreatedAt: base.Add(time.Duration(i) * time.Minute), Fingerprint: "fp", Spec: sandbox.Spec{Workdir: workdir}}
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Transition(ctx, r.ID, st, "", nil); err != nil {
			t.Fatal(err)
		}
		return r
	}
	here := mk(1, "/p/a", Succeeded)
	mk(2, "/p/b", Succeeded)
	elsewhere := mk(3, "/p/b", Succeeded)
	mk(4, "/p/a", Failed)
	late := base.Add(time.Hour)
	for _, tc := range []struct {
		workdir string
		want    *Run
	}{{"/p/a", here}, {"/p/b", elsewhere}, {"/p/c", elsewhere}} {
		got, err := s.LastSucceeded(ctx, "fp", late, tc.workdir, 100)
		if err != nil || got == nil || got.ID != tc.want.ID {
			t.Errorf("from %s: %+v %v, want run %s", tc.workdir, got, err, tc.want.ID)
		}
	}
	if got, err := s.LastSucceeded(ctx, "fp", base, "/p/a", 100); err != nil || got != nil {
		t.Errorf("before every run: %+v %v", got, err)
	}
}
