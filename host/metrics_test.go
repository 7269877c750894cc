package host

import (
	"math"
	"testing"

	"github.com/runbox/runbox/sdk"
)

// newSample tells a new point of history from a repeat, NaN included: a
// loss that stays NaN over flushes is one point, not one per flush.
func TestNewSampleNonFinite(t *testing.T) {
	nan := func(step int64) *sdk.Progress {
		return &sdk.Progress{Step: step, Metrics: sdk.Metrics{"loss": math.NaN()}}
	}
	for _, c := range []struct {
		name string
		a, b *sdk.Progress
		want bool
	}{
		{"first", nil, nan(1), true},
		{"NaN again, same step", nan(1), nan(1), false},
		{"NaN at a new step", nan(1), nan(2), true},
		{"finite to NaN", &sdk.Progress{Step: 1, Metrics: sdk.Metrics{"loss": 0.5}}, nan(1), true},
		{"NaN to +Inf", nan(1), &sdk.Progress{Step: 1, Metrics: sdk.Metrics{"loss": math.Inf(1)}}, true},
		{"+Inf to -Inf", &sdk.Progress{Step: 1, Metrics: sdk.Metrics{"loss": math.Inf(1)}}, &sdk.Progress{Step: 1, Metrics: sdk.Metrics{"loss": math.Inf(-1)}}, true},
	} {
		if got := newSample(c.a, c.b); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
