package sdk

import (
	"reflect"
	"testing"
)

// Folding a batch's updates into one must leave the host's state exactly as
// merging them one by one would.
func TestCollapsedIsEquivalent(t *testing.T) {
	start := Progress{Step: 3, Total: 10, Phase: "train", Metrics: map[string]float64{"acc": 0.5}}
	out := ParseOutput{Updates: []Progress{
		{Step: 4, Metrics: map[string]float64{"loss": 1.5}},
		{Epoch: 2, EpochTotal: 5, Phase: "eval", Source: "keras"},
		{Step: 1, Total: 20, Percentage: 5, Metrics: map[string]float64{"loss": 1.2}, Message: "m"},
		{Rate: 3.5, RateUnit: "it/s", ETASeconds: 12},
	}}
	one, two := start, start
	one.Metrics, two.Metrics = map[string]float64{"acc": 0.5}, map[string]float64{"acc": 0.5}
	for _, u := range out.Updates {
		one.Merge(u)
	}
	c := out.Collapsed()
	if len(c.Updates) != 1 {
		t.Fatalf("%d updates after collapsing", len(c.Updates))
	}
	two.Merge(c.Updates[0])
	if !reflect.DeepEqual(one, two) {
		t.Errorf("sequential %+v\ncollapsed  %+v", one, two)
	}
	if got := (ParseOutput{}).Collapsed(); len(got.Updates) != 0 {
		t.Errorf("empty output collapsed to %+v", got)
	}
}

// Thinning a batch's updates keeps one per step or metric change, folds
// the rest into the next kept one, bounds them to MaxUpdates (the last
// always kept), and leaves the host's state as merging them all would.
func TestThinned(t *testing.T) {
	steps := func(n int, metric bool) []Progress {
		var us []Progress
		for i := 1; i <= n; i++ {
			u := Progress{Step: int64(i), Total: int64(n)}
			if metric {
				u.Metrics = map[string]float64{"loss": 1 / float64(i)}
			}
			us = append(us, u)
		}
		return us
	}
	withMessages := []Progress{
		{Step: 1, Metrics: map[string]float64{"loss": 3}},
		{Message: "loading"},
		{Phase: "eval"},
		{Step: 2, Metrics: map[string]float64{"acc": 0.5}},
		{ETASeconds: 4},
	}
	tests := []struct {
		name      string
		in        []Progress
		wantSteps []int64 // Step of each update answered
	}{
		{"empty", nil, nil},
		{"one", []Progress{{Message: "m"}}, []int64{0}},
		{"every step kept", steps(5, true), []int64{1, 2, 3, 4, 5}},
		{"messages folded into the next step", withMessages, []int64{1, 2, 0}},
		{"same step, no metrics: folded", []Progress{{Step: 3}, {Step: 3, Message: "a"}, {Step: 3, Message: "b"}}, []int64{3, 3}},
		{"thinned evenly", steps(256, true), func() []int64 {
			var w []int64
			for j := 1; j <= MaxUpdates; j++ {
				w = append(w, int64(j*256/MaxUpdates))
			}
			return w
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := ParseOutput{Updates: tt.in}.Thinned()
			var got []int64
			for _, u := range out.Updates {
				got = append(got, u.Step)
			}
			if !reflect.DeepEqual(got, tt.wantSteps) {
				t.Fatalf("steps %v, want %v", got, tt.wantSteps)
			}
			start := Progress{Step: 1, Phase: "train", Metrics: map[string]float64{"x": 1}}
			one, two := start, start
			one.Metrics, two.Metrics = map[string]float64{"x": 1}, map[string]float64{"x": 1}
			for _, u := range tt.in {
				one.Merge(u)
			}
			for _, u := range out.Updates {
				two.Merge(u)
			}
			if !reflect.DeepEqual(one, two) {
				t.Errorf("merged one by one %+v\nthinned          %+v", one, two)
			}
		})
	}
}
