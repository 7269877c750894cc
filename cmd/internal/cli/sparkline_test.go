package cli

import "testing"

func TestSparkline(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	tests := []struct {
		name   string
		values []*float64
		width  int
		want   string
	}{
		{"falling", []*float64{v(8), v(4), v(0)}, 10, "█▅▁"},
		{"gap", []*float64{v(1), nil, v(2)}, 10, "▁ █"},
		{"flat", []*float64{v(3), v(3)}, 10, "▅▅"},
		{"averaged to width", []*float64{v(0), v(0), v(10), v(10)}, 2, "▁█"},
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
