package cli

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/runbox/runbox/api"
)

// sparklineLine adds the main metric's history to `runbox status`: loss
// when the run reports it, else its first metric. A run with none (or a
// daemon too old to keep history) prints nothing.
func sparklineLine(ctx context.Context, a *App, r *api.Run) []string {
	m, err := a.client().Metrics(ctx, r.ID)
	if err != nil || len(m.Series) == 0 {
		return nil
	}
	name := mainMetric(m.Names)
	for _, s := range m.Series {
		if s.Name != name || len(s.Value) == 0 {
			continue
		}
		last := fmtFloat(float64(s.Value[len(s.Value)-1])) // NaN when the loss went NaN
		return []string{fmt.Sprintf("%s:\t%s  %s (%d steps)", name, Sparkline(s.Value, 40), last, s.Total)}
	}
	return nil
}

// mainMetric is loss when the run has it, else its first metric that is
// not progress itself (clients/plot.MainMetric, kept here so the thin client
// does not link the plotting library).
func mainMetric(names []string) string {
	first := ""
	for _, n := range names {
		if n == "loss" {
			return n
		}
		if first == "" && !strings.HasPrefix(n, "progress/") {
			first = n
		}
	}
	return first
}

// Sparkline is a one-line picture of values, at most width cells: each
// cell is the mean of the finite values it covers, or "×" when it covers
// only NaN or ±Inf (a loss gone NaN must show, not vanish).
func Sparkline(values []api.Float, width int) string {
	const bars = "▁▂▃▄▅▆▇█"
	levels := []rune(bars)
	if len(values) == 0 || width <= 0 {
		return ""
	}
	n := min(width, len(values))
	cells := make([]float64, n)
	lo, hi := math.Inf(1), math.Inf(-1)
	for c := range n {
		from, to := c*len(values)/n, (c+1)*len(values)/n
		sum, k := 0.0, 0
		for _, v := range values[from:to] {
			if f := float64(v); !math.IsNaN(f) && !math.IsInf(f, 0) {
				sum += f
				k++
			}
		}
		cells[c] = math.NaN()
		if k > 0 {
			cells[c] = sum / float64(k)
			lo, hi = math.Min(lo, cells[c]), math.Max(hi, cells[c])
		}
	}
	var b strings.Builder
	for _, v := range cells {
		switch {
		case math.IsNaN(v):
			b.WriteRune('×')
		case hi == lo:
			b.WriteRune(levels[len(levels)/2])
		default:
			b.WriteRune(levels[int((v-lo)/(hi-lo)*float64(len(levels)-1)+0.5)])
		}
	}
	return b.String()
}
