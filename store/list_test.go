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
