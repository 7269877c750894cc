package cclassifier_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// guest calls the plugin's exports directly, with wazero configured as
// plugins.NewHost configures it (memory limit, close on context done).
// It exists because the host only ever sends what encoding/json accepts:
// to hand the C parser bytes that are not JSON, the test has to be the
// host.
type guest struct{ mod api.Module }

func newGuest(t testing.TB, wasmPath string) *guest {
	t.Helper()
	ctx := context.Background()
	wasm, err := os.ReadFile(wasmPath)
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithMemoryLimitPages(2048).WithCloseOnContextDone(true))
	t.Cleanup(func() { rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		t.Fatal(err)
	}
	return &guest{mod: mod}
}

// classify sends input through runbox_alloc and runbox_classify as ABI v1
// says and returns the envelope the guest wrote, as written.
func (g *guest) classify(ctx context.Context, input []byte) (string, error) {
	res, err := g.mod.ExportedFunction("runbox_alloc").Call(ctx, uint64(len(input)))
	if err != nil {
		return "", fmt.Errorf("alloc: %w", err)
	}
	ptr := uint32(res[0])
	if ptr == 0 || !g.mod.Memory().Write(ptr, input) {
		return "", fmt.Errorf("alloc returned %#x for %d bytes", ptr, len(input))
	}
	res, err = g.mod.ExportedFunction("runbox_classify").Call(ctx, uint64(ptr), uint64(len(input)))
	if err != nil {
		return "", fmt.Errorf("classify: %w", err)
	}
	out, ok := g.mod.Memory().Read(uint32(res[0]>>32), uint32(res[0]))
	if !ok || res[0] == 0 {
		return "", fmt.Errorf("answer %#x outside memory", res[0])
	}
	return string(out), nil
}
