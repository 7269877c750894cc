package cli

import (
	"math"
	"testing"

	"github.com/runbox/runbox/api"
)

func TestSparkline(t *testing.T) {
	nan, inf := api.Float(math.NaN()), api.Float(math.Inf(1))
	tests := []struct {
		name   string
		values []api.Float
		width  int
		want   string
	}{
		{"falling", []api.Float{8, 4, 0}, 10, "█▅▁"},
		{"non-finite", []api.Float{1, nan, 2, inf}, 10, "▁×█×"},
		{"NaN left out of a cell's mean", []api.Float{0, 0, nan, 10}, 2, "▁█"},
		{"flat", []api.Float{3, 3}, 10, "▅▅"},
		{"averaged to width", []api.Float{0, 0, 10, 10}, 2, "▁█"},
		{"empty", nil, 10, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sparkline(tt.values, tt.width); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
	if got := mainMetric([]string{"acc", "loss"}); got != "loss" {
		t.Fatalf("main metric %q", got)
	}
	if got := mainMetric([]string{"progress/percent", "tokens_per_sec"}); got != "tokens_per_sec" {
		t.Fatalf("main metric %q", got)
	}
}
