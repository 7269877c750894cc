package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
)

// The sharing story as a user meets it, against one daemon that is never
// restarted: make a key, pack and sign a scaffolded classifier, trust the
// key, install the bundle, and the next run's failure is explained by it
// (status and analyze name it and its version); a group's index served
// over HTTP offers a newer version, upgrade installs it and the next run
// uses it; remove, and the next run is back to the built-ins.
func TestShareSignTrustInstallUpgradeRemove(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go toolchain to build a plugin")
	}
	e := newEnv(t)
	proj := filepath.Join(t.TempDir(), "myc")
	e.must("plugins", "new", "--kind", "classifier", "--dir", proj, "myc")
	build := func(version string) string {
		t.Helper()
		mf := filepath.Join(proj, "runbox-bundle.json")
		raw, err := os.ReadFile(mf)
		if err != nil {
			t.Fatalf("the scaffold has no bundle manifest: %v", err)
		}
		var m struct{ Version string }
		json.Unmarshal(raw, &m)
		os.WriteFile(mf, []byte(strings.Replace(string(raw), `"`+m.Version+`"`, `"`+version+`"`, 1)), 0o644)
		mk := exec.Command("make", "bundle", "KEY="+filepath.Join(e.work, "lab.pem"))
		mk.Dir = proj
		mk.Env = append(e.vars, "PATH="+filepath.Dir(runboxBin)+":"+filepath.Dir(goBin)+":/usr/bin:/bin", "GOFLAGS=")
		if out, err := mk.CombinedOutput(); err != nil {
			t.Fatalf("make bundle: %v\n%s", err, out)
		}
		return filepath.Join(proj, "myc-"+version+".tar.gz")
	}
	script := e.write("oom.sh", "#!/bin/sh\necho 'MyFramework: out of device memory while allocating 2 GiB' >&2\nexit 1\n")
	lastFailure := func() *api.Failure {
		t.Helper()
		e.run("", "run", "--sandbox", "process", "--", script)
		var list api.RunList
		if err := json.Unmarshal([]byte(e.must("ls", "--json", "-n", "1")), &list); err != nil {
			t.Fatal(err)
		}
		return e.getRun(list.Runs[0].ID).Failure
	}
	if f := lastFailure(); f == nil || f.Plugin == "myc" {
		t.Fatalf("before install: %+v", f)
	}
	daemon := e.daemonPID()

	e.must("plugins", "keygen", filepath.Join(e.work, "lab.pem"))
	v1 := build("0.1.0")
	if r := e.run("", "plugins", "install", v1); r.code == 0 || !strings.Contains(r.stderr, "untrusted key") || !strings.Contains(r.stderr, "--trust") {
		t.Fatalf("install by an untrusted key: exit %d: %s", r.code, r.stderr)
	}
	if out := e.must("plugins", "verify", v1); !strings.Contains(out, "signed by an untrusted key (SHA256:") {
		t.Errorf("verify before trust: %s", out)
	}
	e.must("plugins", "trust", "add", filepath.Join(e.work, "lab.pem.pub"), "--name", "lab")
	if out := e.must("plugins", "trust", "ls"); !strings.Contains(out, "lab") || !strings.Contains(out, "SHA256:") {
		t.Errorf("trust ls: %s", out)
	}
	if out := e.must("plugins", "verify", v1); !strings.Contains(out, "signed by trusted key lab") {
		t.Errorf("verify after trust: %s", out)
	}
	e.must("plugins", "install", v1)
	if f := lastFailure(); f == nil || f.Code != "CUDA_OOM" || f.Plugin != "myc" || f.PluginVersion != "0.1.0" {
		t.Fatalf("live run after install: %+v", f)
	}
	logf := e.write("crash.log", "MyFramework: out of device memory while allocating 2 GiB\n")
	var a api.Analysis
	if err := json.Unmarshal([]byte(e.must("analyze", "--json", "--exit-code", "1", logf)), &a); err != nil {
		t.Fatal(err)
	}
	if a.Failure == nil || a.Failure.Plugin != "myc" || a.Failure.PluginVersion != "0.1.0" {
		t.Fatalf("analyze: %+v", a.Failure)
	}

	v2 := build("0.2.0")
	b, _ := os.ReadFile(v2)
	sum := sha256.Sum256(b)
	index, _ := json.Marshal(map[string]any{"bundles": []map[string]string{{
		"name": "myc", "version": "0.2.0", "description": "MyFramework GPU memory failures",
		"url": "myc-0.2.0.tar.gz", "sha256": hex.EncodeToString(sum[:]),
	}, {
		"name": "myc", "version": "0.3.0", "description": "tampered in transit",
		"url": "myc-0.2.0.tar.gz", "sha256": strings.Repeat("ab", 32),
	}}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/index.json":
			w.Write(index)
		case "/myc-0.2.0.tar.gz":
			w.Write(b)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	e.must("plugins", "index", "add", "lab", srv.URL+"/index.json")
	if out := e.must("plugins", "search", "gpu", "memory"); !strings.Contains(out, "myc") || !strings.Contains(out, "0.3.0") {
		t.Errorf("search: %s", out)
	}
	if r := e.run("", "plugins", "upgrade"); r.code == 0 || !strings.Contains(r.stderr, "sha256") || !strings.Contains(r.stderr, "0.1.0 stays installed") {
		t.Fatalf("upgrade to a version whose digest does not match: exit %d: %s", r.code, r.stderr)
	}
	if f := lastFailure(); f == nil || f.PluginVersion != "0.1.0" {
		t.Fatalf("after a refused upgrade: %+v", f)
	}
	if out := e.must("plugins", "install", "myc@0.2.0"); !strings.Contains(out, "installed myc 0.2.0") {
		t.Errorf("install myc@0.2.0: %s", out)
	}
	if f := lastFailure(); f == nil || f.Plugin != "myc" || f.PluginVersion != "0.2.0" {
		t.Fatalf("live run after upgrade: %+v", f)
	}
	e.must("plugins", "remove", "myc")
	if f := lastFailure(); f == nil || f.Plugin == "myc" {
		t.Fatalf("live run after remove: %+v", f)
	}
	if pid := e.daemonPID(); pid != daemon {
		t.Errorf("the daemon changed (%d, then %d): the test shows nothing about live pick-up", daemon, pid)
	}
}

// Unsigned bundles install only when asked, and never when signatures
// are required.
func TestInstallUnsignedNeedsAFlag(t *testing.T) {
	e := newEnv(t)
	src := filepath.Join(e.work, "src")
	os.MkdirAll(src, 0o755)
	wasm, err := os.ReadFile("../../plugins/builtin/classify.wasm")
	if err != nil {
		t.Fatalf("built-in classifier wasm: %v", err)
	}
	os.WriteFile(filepath.Join(src, "c.wasm"), wasm, 0o644)
	os.WriteFile(filepath.Join(src, "runbox-bundle.json"), []byte(`{"name":"c","version":"1.0.0"}`), 0o644)
	out := filepath.Join(e.work, "c.tar.gz")
	e.must("plugins", "pack", src, out)
	if s := e.must("plugins", "verify", out); !strings.Contains(s, "unsigned") {
		t.Errorf("verify: %s", s)
	}
	if r := e.run("", "plugins", "install", out); r.code == 0 || !strings.Contains(r.stderr, "--allow-unsigned") {
		t.Fatalf("unsigned install without the flag: exit %d: %s", r.code, r.stderr)
	}
	e.vars = append(e.vars, "RUNBOX_REQUIRE_SIGNED=1")
	if r := e.run("", "plugins", "install", "--allow-unsigned", out); r.code == 0 || !strings.Contains(r.stderr, "signatures are required") {
		t.Fatalf("unsigned install with RUNBOX_REQUIRE_SIGNED: exit %d: %s", r.code, r.stderr)
	}
	e.vars = e.vars[:len(e.vars)-1]
	e.must("plugins", "install", "--allow-unsigned", out)
}
