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

// plugins test refuses the answers a run throws away, with the reason,
// and names the guest's own message when it cannot load.
func TestRunFixturesChecksAnswersLikeARun(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ in, want string }{
		"conf5":   {`{"exit_code":50,"limits":{}}`, `{"code":"CUDA_OOM","message":"always me","retryable":false,"confidence":5}`},
		"unknown": {`{"exit_code":51,"limits":{}}`, `{"code":"BOGUS","message":"made up","retryable":false,"confidence":0.9}`},
		"nothing": {`{"exit_code":1,"limits":{}}`, `null`},
	} {
		os.WriteFile(filepath.Join(dir, name+".input.json"), []byte(c.in), 0o644)
		os.WriteFile(filepath.Join(dir, name+".expected.json"), []byte(c.want), 0o644)
	}
	rep, err := RunFixtures(context.Background(), plugintest.Build(t, "liar"), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"conf5": "outside 0..1", "unknown": `unknown failure code "BOGUS"`, "nothing": ""}
	for _, r := range rep.Results {
		if w := want[r.Name]; (w == "") != r.OK || !strings.Contains(r.Err, w) {
			t.Errorf("%s: ok %v, err %q: want %q", r.Name, r.OK, r.Err, w)
		}
	}
	_, err = RunFixtures(context.Background(), plugintest.Build(t, "initpanic"), dir)
	if err == nil || !strings.Contains(err.Error(), "sdk: Register called twice") {
		t.Errorf("initpanic: %v, want the guest's panic message", err)
	}
}

// A fresh scaffold vets and unit-tests natively (docs/PLUGINS.md §7): its
// code is not behind a wasip1 build tag, so a test file of the author's
// sees it.
func TestScaffoldVetsAndTestsNatively(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go toolchain not on PATH")
	}
	for _, kind := range []sdk.Kind{sdk.KindClassifier, sdk.KindProgress, sdk.KindPlanner} {
		t.Run(string(kind), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "my-plugin")
			name := "my-" + string(kind)
			if err := Scaffold(dir, kind, name, "/opt/rb/runbox"); err != nil {
				t.Fatal(err)
			}
			test := `package main

import (
	"testing"

	"github.com/runbox/runbox/sdk"
)

func TestRegistered(t *testing.T) {
	if p := sdk.Registered(); p == nil || p.Manifest.Name != "` + name + `" {
		t.Fatalf("registered %+v", p)
	}
}
`
			if kind == sdk.KindClassifier {
				test += `
func TestClassify(t *testing.T) {
	f, err := classify(sdk.ClassifyInput{ExitCode: 1, StderrTail: "MyFramework: out of device memory"})
	if err != nil || f == nil || f.Code != sdk.CodeCUDAOOM {
		t.Fatalf("classify = %+v, %v", f, err)
	}
}
`
			}
			if err := os.WriteFile(filepath.Join(dir, "c_test.go"), []byte(test), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"vet", "./..."}, {"test", "-count=1", "./..."}} {
				cmd := exec.Command("go", args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "CGO_ENABLED=0")
				if b, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
				}
			}
		})
	}
}
