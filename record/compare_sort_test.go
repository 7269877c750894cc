package record

import (
	"errors"
	"strings"
	"testing"
)

// An unknown sort column is refused, naming the valid ones; a known one
// is taken.
func TestCheckSort(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	rows := []Row{
		{RunID: "a", Params: map[string]string{"lr": "0.1"}, Metrics: map[string]Metric{"loss": {Last: 0.5, Best: f(0.4)}, "speed": {Last: 3}}},
		{RunID: "b", Params: map[string]string{"lr": "0.2"}},
	}
	for _, tc := range []struct {
		sort, want string // want "": accepted
	}{
		{"", ""}, {"created", ""}, {"-duration", ""}, {"state", ""}, {"param:lr", ""}, {"best:loss", ""}, {"-last:speed", ""},
		{"bogus", "want one of created, duration"},
		{"best:nosuch", `no run has metric "nosuch" (the runs' metrics: loss, speed)`},
		{"last:nosuch", `no run has metric "nosuch"`},
		{"param:nosuch", `no run has param "nosuch" (the runs' params: lr)`},
		{"best:speed", "pass --goal speed=min or max"},
		{"created:x", "want one of"},
		{"param", "want one of"},
	} {
		err := CheckSort(rows, CompareOptions{Sort: tc.sort})
		var bad *BadSort
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("sort %q refused: %v", tc.sort, err)
		case tc.want != "" && (!errors.As(err, &bad) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("sort %q: got %v, want %q", tc.sort, err, tc.want)
		}
	}
	// --goal makes best of a metric of unknown goal a column.
	if err := CheckSort(rows, CompareOptions{Sort: "best:speed", Goals: map[string]Goal{"speed": Max}}); err != nil {
		t.Errorf("best:speed with a goal: %v", err)
	}
}
