package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
)

// A plugin dropped into the plugins directory changes what analyze reports,
// with no rebuild of runbox: scaffold one with `runbox plugins new`, build
// it with the plain Go toolchain, copy the .wasm in, analyze again.
func TestUserPluginChangesAnalyze(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go toolchain to build a plugin")
	}
	e := newEnv(t)
	logf := e.write("crash.log", "step 10/100 loss=0.5\nMyFramework: out of device memory while allocating 2 GiB\n")

	analyze := func() api.Analysis {
		t.Helper()
		r := e.run("", "analyze", "--json", "--exit-code", "1", logf)
		if r.code != 0 {
			t.Fatalf("analyze: exit %d: %s", r.code, r.stderr)
		}
		var a api.Analysis
		if err := json.Unmarshal([]byte(r.stdout), &a); err != nil {
			t.Fatalf("analyze output %q: %v", r.stdout, err)
		}
		return a
	}
	before := analyze()
	if before.Failure == nil || before.Failure.Plugin == "myc" {
		t.Fatalf("before: %+v", before.Failure)
	}
	if before.Progress == nil || before.Progress.Step != 10 || before.Progress.Total != 100 {
		t.Errorf("before: progress %+v, want step 10/100", before.Progress)
	}

	dir := filepath.Join(t.TempDir(), "myc")
	e.must("plugins", "new", "--kind", "classifier", "--dir", dir, "myc")
	// The project's own `make test` builds it and runs its fixtures with
	// the runbox that made it, though none is on PATH (a first try).
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	mk := exec.Command("make", "test")
	mk.Dir = dir
	mk.Env = append(e.vars, "PATH="+filepath.Dir(goBin)+":/usr/bin:/bin", "GOFLAGS=")
	if out, err := mk.CombinedOutput(); err != nil || !strings.Contains(string(out), "0 failed") {
		t.Fatalf("make test in the scaffolded project: %v\n%s", err, out)
	}
	pdir := filepath.Join(e.home, "plugins")
	if err := os.MkdirAll(pdir, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "myc.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pdir, "myc.wasm"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if out := e.must("plugins", "ls"); !strings.Contains(out, "myc") {
		t.Errorf("plugins ls does not list myc:\n%s", out)
	}
	if out := e.must("plugins", "info", "runbox-progress"); !strings.Contains(out, "prefilter confirm:") || !strings.Contains(out, "prefilter:") {
		t.Errorf("plugins info does not show the prefilter:\n%s", out)
	}
	after := analyze()
	if after.Failure == nil || after.Failure.Code != "CUDA_OOM" || after.Failure.Plugin != "myc" {
		t.Fatalf("after: %+v, want CUDA_OOM from myc", after.Failure)
	}
}

func TestAnalyzeContract(t *testing.T) {
	e := newEnv(t)
	logf := e.write("ok.log", "##PROGRESS## {\"step\": 5, \"total\": 5, \"phase\": \"done\"}\n")
	r := e.run("", "analyze", "--json", "--exit-code", "0", logf)
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
		t.Fatalf("analyze --json: %q: %v", r.stdout, err)
	}
	if string(raw["failure"]) != "null" {
		t.Errorf("failure for exit 0: %s", raw["failure"])
	}
	if _, ok := raw["progress"]; !ok || string(raw["progress"]) == "null" {
		t.Errorf("progress missing: %s", r.stdout)
	}
	// stdin works too, and an OOM flag is honoured.
	r = e.run("Killed\n", "analyze", "--json", "--signal", "SIGKILL", "--oom", "-")
	var a api.Analysis
	if err := json.Unmarshal([]byte(r.stdout), &a); err != nil {
		t.Fatal(err)
	}
	if a.Failure == nil || a.Failure.Code != "OOM_KILLED" {
		t.Errorf("--oom: %+v", a.Failure)
	}
	if r := e.run("", "analyze", filepath.Join(e.work, "missing.log")); r.code == 0 || !strings.Contains(r.stderr, "no such file") {
		t.Errorf("missing file: exit %d %q", r.code, r.stderr)
	}
}
