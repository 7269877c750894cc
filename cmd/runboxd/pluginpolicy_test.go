package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/cmd/internal/cli"
	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/plugins/bundle"
)

// buildEcho builds the test plugin plugins/testdata/echo (a user plugin
// named echo, of every kind) for wasip1.
func buildEcho(t *testing.T) []byte {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go toolchain not on PATH")
	}
	_, self, _, _ := runtime.Caller(0)
	out := filepath.Join(t.TempDir(), "echo.wasm")
	cmd := exec.Command(gobin, "build", "-buildmode=c-shared", "-trimpath", "-o", out, "./echo")
	cmd.Dir = filepath.Join(filepath.Dir(self), "..", "..", "plugins", "testdata")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build echo: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pluginHome is a fresh RUNBOX_HOME (config, plugins, cache, state).
func pluginHome(t *testing.T) string {
	home := t.TempDir()
	t.Setenv("RUNBOX_HOME", home)
	t.Setenv("RUNBOX_PLUGINS", "")
	t.Setenv("RUNBOX_REQUIRE_SIGNED", "")
	return home
}

// installUnsigned puts an unsigned bundle NAME holding wasm as echo.wasm
// in the plugins directory, as install --allow-unsigned does.
func installUnsigned(t *testing.T, home, name string, wasm []byte) {
	t.Helper()
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "echo.wasm"), wasm, 0o644)
	os.WriteFile(filepath.Join(src, bundle.ManifestFile), []byte(`{"name":"`+name+`","version":"0.1.0"}`), 0o644)
	if _, err := bundle.Pack(src, filepath.Join(home, "plugins", name), nil); err != nil {
		t.Fatal(err)
	}
}

// stdout runs f and returns what it printed.
func stdout(t *testing.T, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); done <- b }()
	ferr := f()
	os.Stdout = old
	w.Close()
	return string(<-done), ferr
}

func lsJSON(t *testing.T) []plugins.Info {
	t.Helper()
	out, err := stdout(t, func() error {
		return pluginsLs(context.Background(), &cli.App{G: &cli.Globals{JSON: true}}, &cli.PluginsLsCmd{})
	})
	if err != nil {
		t.Fatal(err)
	}
	var infos []plugins.Info
	if err := json.Unmarshal([]byte(out), &infos); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return infos
}

// require_signed (the variable, or config.json) holds when plugins load:
// an unsigned bundle installed before and a loose module are refused,
// saying why; the built-ins load.
func TestRequireSignedRefusesAtLoad(t *testing.T) {
	echo := buildEcho(t)
	for _, tc := range []struct{ name, env, config, want string }{
		{"env", "1", "", "RUNBOX_REQUIRE_SIGNED is set"},
		{"config", "", `{"require_signed": true}`, "require_signed is set in "},
		{"off", "", `{"require_signed": false}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := pluginHome(t)
			t.Setenv("RUNBOX_REQUIRE_SIGNED", tc.env)
			if tc.config != "" {
				os.WriteFile(filepath.Join(home, "config.json"), []byte(tc.config), 0o644)
			}
			installUnsigned(t, home, "my-errors", echo)
			os.WriteFile(filepath.Join(home, "plugins", "loose.wasm"), echo, 0o644)
			// loose.wasm and the bundle's echo are both named echo: with
			// the policy off they are failed for that instead.
			users := 0
			for _, i := range lsJSON(t) {
				if i.Builtin {
					if i.Status != plugins.StatusReady {
						t.Errorf("built-in %s: %s %s", i.Source, i.Status, i.LastError)
					}
					continue
				}
				users++
				switch {
				case tc.want != "" && (i.Status != plugins.StatusRefused || !strings.Contains(i.LastError, tc.want)):
					t.Errorf("%s: %s %q, want refused: %s", i.Source, i.Status, i.LastError, tc.want)
				case tc.want == "" && i.Status == plugins.StatusRefused:
					t.Errorf("%s refused with the policy off: %s", i.Source, i.LastError)
				}
			}
			if users != 2 {
				t.Errorf("%d user plugins listed, want 2", users)
			}
		})
	}
}

// plugins info NAME shows every plugin so named (two that share a name
// are both failed) and the last error whole, not its first line only.
func TestPluginsInfoAllMatchesAndDetail(t *testing.T) {
	echo := buildEcho(t)
	home := pluginHome(t)
	installUnsigned(t, home, "my-errors", echo)
	installUnsigned(t, home, "other-bundle", echo)
	info := func() string {
		out, err := stdout(t, func() error {
			return pluginsInfo(context.Background(), &cli.App{G: &cli.Globals{}}, &cli.PluginsInfoCmd{Name: "echo"})
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	out := info()
	p1 := filepath.Join(home, "plugins", "my-errors", "echo.wasm")
	p2 := filepath.Join(home, "plugins", "other-bundle", "echo.wasm")
	sources := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "source:" {
			sources[f[1]] = true
		}
	}
	if strings.Count(out, "name:") != 2 || !sources[p1] || !sources[p2] ||
		strings.Count(out, "not used: two plugins are named echo: "+p1+", "+p2+"; remove one") != 2 {
		t.Errorf("plugins info echo with two so named:\n%s", out)
	}

	// One left, switched off by a daemon for a failure whose text goes
	// on over lines (a wasm stack): info shows all of it.
	os.RemoveAll(filepath.Join(home, "plugins", "other-bundle"))
	sum := sha256.Sum256(echo)
	reason := "plugin call failed: guest said \"panic: boom\": wasm error: unreachable\nwasm stack trace:\n\techo.parse(i32,i32) i32\n\truntime.gopanic"
	state := map[string]any{"off": []map[string]any{{
		"source": p1, "sha256": hex.EncodeToString(sum[:]), "name": "echo", "reason": reason,
		"consecutive_failures": 3, "until": time.Now().Add(time.Hour),
	}}}
	b, _ := json.Marshal(state)
	os.WriteFile(filepath.Join(home, "plugin-state.json"), b, 0o644)
	out = info()
	for _, l := range strings.Split(reason, "\n") {
		if !strings.Contains(out, strings.TrimSpace(l)) {
			t.Errorf("plugins info lacks %q of the last error:\n%s", l, out)
		}
	}
}
