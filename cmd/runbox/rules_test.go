package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A team's rules file, end to end through the CLI and a live run:
// `plugins new --rules` scaffolds it, `plugins test` passes its fixtures,
// it is signed, packed and installed, and the next run of the daemon that
// was already up shows the file's progress format and failure signature
// (the host reads installed rules files again when the plugins directory
// changes). Before the install the same run gets neither.
func TestRulesFileInALiveRun(t *testing.T) {
	e := newEnv(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "labx")
	e.must("plugins", "new", "--rules", "--dir", dir, "labx")
	if out := e.must("plugins", "test", filepath.Join(dir, "labx.rules.json"), filepath.Join(dir, "testdata")); !strings.Contains(out, "2 passed") {
		t.Fatalf("plugins test on the scaffold: %s", out)
	}
	script := e.write("train.sh", "echo starting\necho 'ROUND 3/10 lr=0.1 loss=0.52'\necho 'ROUND 4/10 lr=0.1 loss=0.48'\n"+
		"echo 'ERROR: scratch quota exceeded for user lab7' >&2\nexit 1\n")
	live := func() (step, total int64, code, plugin string) {
		t.Helper()
		id := strings.TrimSpace(e.must("run", "-d", "--", "sh", script))
		if r := e.run("", "wait", "--timeout", "60s", id); r.code == 0 {
			t.Fatalf("wait: the run should have failed: %s %s", r.stdout, r.stderr)
		}
		r := e.getRun(id)
		if r.Progress != nil {
			step, total = r.Progress.Step, r.Progress.Total
		}
		if r.Failure != nil {
			code, plugin = r.Failure.Code, r.Failure.Plugin
		}
		return
	}
	step, total, code, plugin := live()
	t.Logf("before the install: step %d/%d, %s from %q", step, total, code, plugin)
	if plugin == "rules:labx" || code == "DISK_FULL" || step == 4 && total == 10 {
		t.Fatalf("before the install: step %d/%d, %s from %q", step, total, code, plugin)
	}

	key := filepath.Join(tmp, "team.pem")
	e.must("plugins", "keygen", key)
	tgz := filepath.Join(tmp, "labx.tar.gz")
	e.must("plugins", "pack", "--key", key, dir, tgz)
	e.must("plugins", "install", "--trust", key+".pub", tgz)

	step, total, code, plugin = live()
	if step != 4 || total != 10 {
		t.Errorf("after the install: progress %d/%d, want the rules file's 4/10", step, total)
	}
	if code != "DISK_FULL" || plugin != "rules:labx" {
		t.Errorf("after the install: %s from %q, want DISK_FULL from rules:labx", code, plugin)
	}
}
