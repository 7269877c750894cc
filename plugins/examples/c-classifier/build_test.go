package cclassifier_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// requireCC makes a missing C toolchain a failure instead of a skip (CI
// sets it after installing clang, lld and wasi-libc from Debian).
var requireCC = os.Getenv("RUNBOX_REQUIRE_WASI_CC") == "1"

var (
	buildOnce sync.Once
	buildDir  string // holds r-julia.wasm and nothing else
	buildErr  string // why it was not built: a skip, or a failure
	buildSkip bool
)

// buildPlugin builds r-julia.wasm with the plugin's own Makefile (so the
// flags tested are the flags shipped) into a directory of its own, once
// per test binary, and returns that directory.
func buildPlugin(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		cc := os.Getenv("WASM_CC")
		if cc == "" {
			cc = "clang"
		}
		for _, tool := range []string{"make", cc} {
			if _, err := exec.LookPath(tool); err != nil {
				buildErr, buildSkip = tool+" not installed: apt-get install make clang lld wasi-libc libclang-rt-dev-wasm32 (RUNBOX_REQUIRE_WASI_CC=1 makes this a failure)", true
				return
			}
		}
		// Without wasi-libc, clang prints the bare name back.
		out, err := exec.Command(cc, "--target=wasm32-wasi", "-print-file-name=libc.a").Output()
		if err != nil || !filepath.IsAbs(strings.TrimSpace(string(out))) {
			buildErr, buildSkip = "wasi-libc not installed for "+cc+": apt-get install wasi-libc libclang-rt-dev-wasm32 lld (RUNBOX_REQUIRE_WASI_CC=1 makes this a failure)", true
			return
		}
		dir, err := os.MkdirTemp("", "r-julia-wasm-")
		if err != nil {
			buildErr = err.Error()
			return
		}
		buildDir = dir
		cmd := exec.Command("make", "-s", "WASM_CC="+cc, "WASM="+filepath.Join(dir, "r-julia.wasm"))
		if b, err := cmd.CombinedOutput(); err != nil {
			buildErr = "make: " + err.Error() + "\n" + string(b)
		}
	})
	switch {
	case buildErr != "" && buildSkip && !requireCC:
		t.Skip(buildErr)
	case buildErr != "":
		t.Fatal(buildErr)
	}
	return buildDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}
