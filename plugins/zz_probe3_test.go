package plugins

import (
	"context"
	"fmt"
	"testing"

	"github.com/runbox/runbox/sdk"
)

func BenchmarkZZTrivial(b *testing.B) {
	for _, interrupt := range []bool{true, false} {
		h := builtinHost(b, Config{noInterrupt: !interrupt})
		m := h.byKind(context.Background(), sdk.KindProgress)[0]
		in, _ := m.acquire(context.Background())
		b.Run(fmt.Sprintf("abi/interrupt=%v", interrupt), func(b *testing.B) {
			for b.Loop() {
				in.abiVersion(context.Background())
			}
		})
		b.Run(fmt.Sprintf("alloc/interrupt=%v", interrupt), func(b *testing.B) {
			for b.Loop() {
				in.alloc.Call(context.Background(), 100)
			}
		})
		b.Run(fmt.Sprintf("describe/interrupt=%v", interrupt), func(b *testing.B) {
			for b.Loop() {
				in.describe(context.Background(), 1<<20)
			}
		})
	}
}
