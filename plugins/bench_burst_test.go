package plugins

import (
	"context"
	"fmt"
	"testing"

	"github.com/runbox/runbox/sdk"
)

// BenchmarkProgressWasmBurst: the worst case for the answers' size: every
// line a ##PROGRESS## update with metrics, fed flat out, so each full batch
// (256 lines) answers sdk.MaxUpdates updates, each with a metric map, and
// the Parser hands each to OnUpdate (a history's hook, here a counter).
//
//	go test ./plugins -run '^$' -bench 'ProgressWasmBurst' -benchtime 2s
func BenchmarkProgressWasmBurst(b *testing.B) {
	h := builtinHost(b, Config{})
	lines := make([]string, 10000)
	for i := range lines {
		lines[i] = fmt.Sprintf(`##PROGRESS## {"step": %d, "total": %d, "metrics": {"loss": %.5f, "lr": 0.001}}`, i+1, len(lines), 2/float64(i+1))
	}
	updates := 0
	for b.Loop() {
		p := h.NewParser()
		p.OnUpdate(func(sdk.Progress) { updates++ })
		// Feed in slices, as the engine's reader does, letting the plugin
		// keep up: a burst larger than the queue would drop lines.
		for k, l := range lines {
			p.Feed("stdout", l)
			if k%2048 == 2047 {
				p.Flush(context.Background())
			}
		}
		p.Flush(context.Background())
	}
	b.ReportMetric(float64(b.N*len(lines))/b.Elapsed().Seconds(), "lines/s")
	b.ReportMetric(float64(updates)/float64(b.N), "updates/run")
}
