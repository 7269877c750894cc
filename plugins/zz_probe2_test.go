package plugins

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/runbox/runbox/plugins/builtin/progress"
	"github.com/runbox/runbox/sdk"
)

func zzFiltered(n int) []string {
	var out []string
	for _, l := range progress.SyntheticMix(n) {
		for _, lit := range progress.Manifest.Prefilter {
			if strings.Contains(l, lit) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

func BenchmarkZZCall(b *testing.B) {
	filt := zzFiltered(100000)
	for _, interrupt := range []bool{true, false} {
		for _, k := range []int{0, 1, 16, 256} {
			b.Run(fmt.Sprintf("interrupt=%v/lines=%d", interrupt, k), func(b *testing.B) {
				h := builtinHost(b, Config{noInterrupt: !interrupt})
				m := h.byKind(context.Background(), sdk.KindProgress)[0]
				i := 0
				for b.Loop() {
					lines := filt[i : i+k]
					i = (i + k) % (len(filt) - 300)
					var out sdk.ParseOutput
					if _, err := h.invoke(context.Background(), m, exportParse, sdk.ParseInput{Lines: lines, Last: &sdk.Progress{Step: 3, Total: 100, Source: "tqdm", Metrics: map[string]float64{"loss": 1}}}, &out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
