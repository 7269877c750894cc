package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/sdk"
)

// The built-ins reach the runtime with what is known of them without
// loading them: every one its kind, the progress plugin its manifest, so
// that analyze can tell which lines could have progress in them without
// loading it (docs/RATIONALE.md, "analyze loads only what a log needs").
func TestBuiltinPlugins(t *testing.T) {
	bs := builtinPlugins()
	kinds := map[sdk.Kind]bool{}
	for _, b := range bs {
		if b.Kind == "" || len(b.Wasm) == 0 {
			t.Errorf("built-in %s: kind %q, %d bytes", b.Name, b.Kind, len(b.Wasm))
		}
		kinds[b.Kind] = true
	}
	for _, k := range []sdk.Kind{sdk.KindPlanner, sdk.KindProgress, sdk.KindClassifier} {
		if !kinds[k] {
			t.Errorf("no built-in %s", k)
		}
	}
	ctx := context.Background()
	h, err := plugins.NewHost(ctx, plugins.Config{Builtins: bs, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	may := h.ProgressFilter()
	if may == nil {
		t.Fatal("the progress built-in came without its manifest: its filter is unknown")
	}
	if !may(" 45%|████▌     | 45/100 [00:04<00:05, 10.12it/s]") || may("Traceback (most recent call last):") {
		t.Fatal("the progress filter does not tell a tqdm line from a traceback")
	}
}
