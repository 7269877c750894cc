package wasmdata_test

import (
	"bytes"
	"testing"

	"github.com/runbox/runbox/plugins/builtin"
	"github.com/runbox/runbox/plugins/internal/wasmdata"
)

// TestMergeBuiltins: each built-in loses its tens of thousands
// of segments and starts with the same memory.
func TestMergeBuiltins(t *testing.T) {
	if testing.Short() {
		t.Skip("interprets the built-ins' data segments; skipped with -short")
	}
	for _, b := range builtin.Modules() {
		t.Run(b.Name, func(t *testing.T) {
			merged := wasmdata.Merge(b.Wasm)
			if n, m := wasmdata.DataSegments(b.Wasm), wasmdata.DataSegments(merged); m >= n/100 {
				t.Fatalf("%d segments merged into %d", n, m)
			}
			if !bytes.Equal(wasmdata.InitialMemory(t, merged, true), wasmdata.InitialMemory(t, b.Wasm, true)) {
				t.Fatal("merged module starts with other memory contents")
			}
		})
	}
}
