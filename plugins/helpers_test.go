package plugins

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/runbox/runbox/plugins/builtin"
	"github.com/runbox/runbox/plugins/internal/plugintest"
)

func TestMain(m *testing.M) { plugintest.Main(m) }

var (
	buildPlugin = plugintest.Build
	pluginDir   = plugintest.Dir
)

// builtins are the embedded plugins as runboxd hands them to a Host.
func builtins() []Builtin {
	var out []Builtin
	for _, m := range builtin.Modules() {
		out = append(out, Builtin{Name: m.Name, Kind: m.Kind, Wasm: m.Wasm, Manifest: m.Manifest()})
	}
	return out
}

// logBuffer is a goroutine-safe log sink.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// newTestHost starts a Host over dirs with no built-ins and a captured log.
func newTestHost(t testing.TB, cfg Config, dirs ...string) (*Host, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.Dirs = dirs
	h, err := NewHost(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h, logs
}
