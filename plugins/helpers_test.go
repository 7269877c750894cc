package plugins

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/runbox/runbox/plugins/builtin"
	"github.com/runbox/runbox/plugins/internal/plugintest"
)

func TestMain(m *testing.M) { plugintest.Main(m) }

var pluginDir = plugintest.Dir

// builtins are the embedded plugins as runboxd hands them to a Host.
func builtins() []Builtin {
	var out []Builtin
	for _, m := range builtin.Modules() {
		out = append(out, Builtin{Name: m.Name, Kind: m.Kind, Wasm: m.Wasm, Manifest: m.Manifest()})
	}
	return out
}

// newTestHost starts a Host over dirs with a captured log and, unless cfg
// names one, the test binary's compilation cache (each module compiles
// once per binary, not once per test) and a load deadline long enough
// for a compile under -race.
func newTestHost(t testing.TB, cfg Config, dirs ...string) (*Host, *plugintest.LogBuffer) {
	t.Helper()
	if cfg.CacheDir == "" {
		cfg.CacheDir = plugintest.CacheDir(t)
	}
	if cfg.LoadTimeout == 0 {
		cfg.LoadTimeout = 5 * time.Minute // compiling under -race takes minutes
	}
	logs := &plugintest.LogBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.Dirs = dirs
	h, err := NewHost(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h, logs
}
