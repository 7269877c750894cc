package plugins

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

func BenchmarkZZExp(b *testing.B) {
	path := buildPlugin(b, "zzexp")
	wasm, _ := os.ReadFile(path)
	ctx := context.Background()
	for _, interrupt := range []bool{true, false} {
		rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(interrupt))
		wasi_snapshot_preview1.MustInstantiate(ctx, rt)
		mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
		if err != nil {
			b.Fatal(err)
		}
		for _, fn := range []string{"zz_nomatch", "zz_steps", "zz_prog", "zz_dec", "zz_enc"} {
			b.Run(fmt.Sprintf("%s/interrupt=%v", fn, interrupt), func(b *testing.B) {
				f := mod.ExportedFunction(fn)
				var k uint64
				for b.Loop() {
					cctx, cancel := context.WithTimeout(ctx, time.Minute)
					r, err := f.Call(cctx, 4)
					if err != nil {
						b.Fatal(err)
					}
					k = r[0]
					cancel()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/4/float64(k), "ns/unit")
				b.ReportMetric(float64(k), "units")
			})
		}
	}
}
