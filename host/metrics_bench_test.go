package host

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/runbox/runbox/plugins/builtin/progress"
	"github.com/runbox/runbox/sdk"
	"github.com/runbox/runbox/store"
)

// BenchmarkMetricHistory100k: 100 000 ##PROGRESS## lines with three
// metrics, parsed by the default progress plugin's code (natively: in the
// daemon it runs as WebAssembly, slower, so the overhead shown here is an
// upper bound), each line its own update (the worst case for history:
// a run printing slowly enough that every line is its own batch). Side by
// side: parsing only, and parsing plus the metric history (recording each
// update, and storing the history every 1 000 updates as the runner does
// every second, plus once at the end).
func BenchmarkMetricHistory100k(b *testing.B) {
	const n = 100_000
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf(`##PROGRESS## {"step": %d, "total": %d, "metrics": {"loss": %.5f, "accuracy": %.4f, "lr": 0.001}}`, i+1, n, 2.0/float64(i+1), 1-1/float64(i+2))
	}
	ctx := context.Background()
	st, err := store.Open(b.TempDir(), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateRun(ctx, &store.Run{ID: "bench", Sandbox: "process"}); err != nil {
		b.Fatal(err)
	}
	parse := func(record func(p *sdk.Progress)) {
		var last *sdk.Progress
		for _, l := range lines {
			out := progress.Parse(sdk.ParseInput{Lines: []string{l}, Last: last})
			for _, u := range out.Updates {
				p := u
				last = &p
				record(last)
			}
		}
	}
	b.Run("parse-only", func(b *testing.B) {
		for b.Loop() {
			parse(func(*sdk.Progress) {})
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/line")
	})
	b.Run("parse+history", func(b *testing.B) {
		for b.Loop() {
			var m metricRecorder
			k := 0
			now := time.Now()
			parse(func(p *sdk.Progress) {
				m.sample("bench", p, now)
				if k++; k%1000 == 0 {
					if err := st.PutMetrics(ctx, m.hist.Clone()); err != nil {
						b.Fatal(err)
					}
				}
			})
			if err := st.PutMetrics(ctx, m.hist.Clone()); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/line")
	})
	// The history alone, on the states parsed above.
	var states []*sdk.Progress
	parse(func(p *sdk.Progress) { c := *p; states = append(states, &c) })
	b.Run("history-only", func(b *testing.B) {
		for b.Loop() {
			var m metricRecorder
			now := time.Now()
			for k, p := range states {
				m.sample("bench", p, now)
				if (k+1)%1000 == 0 {
					if err := st.PutMetrics(ctx, m.hist.Clone()); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := st.PutMetrics(ctx, m.hist.Clone()); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/line")
	})
}
