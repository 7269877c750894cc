package cclassifier_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkClassify4MiB: one call with a 3.8 MiB stderr tail and no match
// (the worst case: every rule searches to the start of its window), the
// guest called directly so the host's JSON encoding is not counted.
func BenchmarkClassify4MiB(b *testing.B) {
	g := newGuest(b, filepath.Join(buildPlugin(b), "r-julia.wasm"))
	noise := strings.Repeat("epoch 3 step 1200 loss 0.3172 lr 1e-4 caf\u00e9\n", 85_000)
	in, err := json.Marshal(map[string]any{"exit_code": 1, "stderr_tail": noise})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		out, err := g.classify(context.Background(), in)
		if err != nil || out != `{"result":null}` {
			b.Fatalf("%.200s, %v", out, err)
		}
	}
}
