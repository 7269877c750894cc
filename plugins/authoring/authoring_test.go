package authoring

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runbox/runbox/plugins/internal/plugintest"
	"github.com/runbox/runbox/sdk"
)

func TestMain(m *testing.M) { plugintest.Main(m) }

// A scaffolded project builds outside this repo and passes its own fixtures.
func TestScaffoldBuildsAndPassesFixtures(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go toolchain not on PATH")
	}
	for _, kind := range []sdk.Kind{sdk.KindClassifier, sdk.KindProgress, sdk.KindPlanner} {
		t.Run(string(kind), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "my-plugin")
			if err := Scaffold(dir, kind, "my-"+string(kind), "/opt/rb/runbox"); err != nil {
				t.Fatal(err)
			}
			if mk, err := os.ReadFile(filepath.Join(dir, "Makefile")); err != nil || !strings.Contains(string(mk), "/opt/rb/runbox") {
				t.Errorf("the Makefile does not fall back to the runbox that made it: %v\n%s", err, mk)
			}
			out := filepath.Join(dir, "p.wasm")
			cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", out, ".")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("build scaffold: %v\n%s", err, b)
			}
			rep, err := RunFixtures(context.Background(), out, filepath.Join(dir, "testdata"))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Failed != 0 || rep.Passed == 0 {
				t.Fatalf("fixtures:\n%s", rep)
			}
		})
	}
}

func TestRunFixturesReportsDiff(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.input.json"), []byte(`{"exit_code":1,"limits":{}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "a.expected.json"), []byte(`{"code":"SEGFAULT","message":"exit","retryable":false,"confidence":0.5}`), 0o644)
	rep, err := RunFixtures(context.Background(), plugintest.Build(t, "panic"), dir)
	if err != nil || rep.Failed != 1 || !strings.Contains(rep.Results[0].Err, "boom from guest") {
		t.Fatalf("panic plugin: %v\n%s", err, rep)
	}
	// echo has several kinds: the fixture name carries the kind.
	os.Rename(filepath.Join(dir, "a.input.json"), filepath.Join(dir, "classifier-a.input.json"))
	os.Rename(filepath.Join(dir, "a.expected.json"), filepath.Join(dir, "classifier-a.expected.json"))
	rep, err = RunFixtures(context.Background(), plugintest.Build(t, "echo"), dir)
	if err != nil || rep.Failed != 1 {
		t.Fatalf("echo: %v\n%s", err, rep)
	}
	if d := rep.Results[0].Diff; !strings.Contains(d, `-`) || !strings.Contains(d, `"SEGFAULT"`) || !strings.Contains(d, `"NONZERO_EXIT"`) {
		t.Fatalf("diff not readable:\n%s", d)
	}
}
