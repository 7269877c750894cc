package plugins

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Test plugins live in testdata/<case>/main.go and are built on the fly,
// once per test binary run, into a shared temp dir.
var (
	buildMu  sync.Mutex
	buildDir string
	built    = map[string]string{}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "runbox-plugins-test-")
	if err != nil {
		panic(err)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildPlugin builds testdata/<name> for wasip1 and returns the .wasm path.
func buildPlugin(t testing.TB, name string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := built[name]; ok {
		return p
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go toolchain not on PATH: cannot build test plugins")
	}
	out := filepath.Join(buildDir, name+".wasm")
	cmd := exec.Command(gobin, "build", "-buildmode=c-shared", "-trimpath", "-o", out, "./testdata/"+name)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build test plugin %s: %v\n%s", name, err, b)
	}
	built[name] = out
	return out
}

// pluginDir returns a fresh dir holding the named test plugins.
func pluginDir(t testing.TB, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		b, err := os.ReadFile(buildPlugin(t, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n+".wasm"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
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

// newTestHost starts a Host over dir with no built-ins and a captured log.
func newTestHost(t testing.TB, cfg Config, dirs ...string) (*Host, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.Dirs = dirs
	cfg.NoBuiltins = true
	h, err := NewHost(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h, logs
}
