// Package plugintest holds what the tests of the plugin packages share: it
// builds the test plugins of plugins/testdata (each plugins/testdata/NAME
// is a wasip1 reactor module, built once per test binary into a temporary
// directory), gives them a compilation cache directory for the test
// binary, and a log sink for the hosts they open.
package plugintest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	mu    sync.Mutex
	dir   string
	built = map[string]string{}
)

// Main runs the tests with a directory for the built plugins and the
// compilation cache, and removes it afterwards: call it from TestMain.
func Main(m *testing.M) {
	d, err := os.MkdirTemp("", "runbox-plugintest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	dir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// CacheDir is a wazero compilation cache shared by the test binary's
// hosts, so that each module compiles once per binary.
func CacheDir(t testing.TB) string {
	t.Helper()
	if dir == "" {
		t.Fatal("plugintest.CacheDir needs plugintest.Main in TestMain")
	}
	return filepath.Join(dir, "wazero")
}

// Build builds plugins/testdata/NAME (or this package's testdata/NAME)
// for wasip1 and returns the .wasm path.
// It skips the test when the Go toolchain is not on PATH.
func Build(t testing.TB, name string) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[name]; ok {
		return p
	}
	if dir == "" {
		t.Fatal("plugintest.Build needs plugintest.Main in TestMain")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go toolchain not on PATH: cannot build test plugins")
	}
	_, self, _, _ := runtime.Caller(0)
	out := filepath.Join(dir, name+".wasm")
	cmd := exec.Command(gobin, "build", "-buildmode=c-shared", "-trimpath", "-o", out, "./"+name)
	cmd.Dir = filepath.Join(filepath.Dir(self), "..", "..", "testdata")
	if _, err := os.Stat(filepath.Join(cmd.Dir, name)); err != nil {
		// The plugins that break the rules of plugin answers and names.
		cmd.Dir = filepath.Join(filepath.Dir(self), "testdata")
	}
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build test plugin %s: %v\n%s", name, err, b)
	}
	built[name] = out
	return out
}

// Dir returns a fresh directory holding the named test plugins as NAME.wasm.
func Dir(t testing.TB, names ...string) string {
	t.Helper()
	d := t.TempDir()
	for _, n := range names {
		b, err := os.ReadFile(Build(t, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, n+".wasm"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// LogBuffer is a log sink safe for concurrent use (a host logs from its
// background loads).
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p; it never fails.
func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns what was logged.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
