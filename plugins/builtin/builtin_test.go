package builtin

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestEmbeddedMatchSources rebuilds each built-in from its sources and
// checks the committed .wasm is byte-for-byte what they build to. On
// failure run `make builtin-plugins` (plugins/builtin/Makefile.inc).
func TestEmbeddedMatchSources(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH: cannot check the embedded plugins against their sources")
	}
	if testing.Short() {
		t.Skip("rebuilds three wasm modules; skipped with -short")
	}
	tmp := t.TempDir()
	for _, m := range Modules() {
		t.Run(m.Name, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(m.Name, "wasm", "main.go")); err != nil {
				t.Skipf("no source %s/wasm/main.go yet", m.Name)
			}
			out := filepath.Join(tmp, m.Name+".wasm")
			args := append([]string{"build"}, BuildFlags...)
			args = append(args, "-o", out, "./plugins/builtin/"+m.Name+"/wasm")
			cmd := exec.Command(gobin, args...)
			cmd.Dir = filepath.Join("..", "..")
			cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=")
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("build: %v\n%s", err, b)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, m.Wasm) {
				t.Fatalf("plugins/builtin/%s.wasm is stale (%d bytes embedded, %d built): run make builtin-plugins", m.Name, len(m.Wasm), len(got))
			}
		})
	}
}
