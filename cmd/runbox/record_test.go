package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/internal/testwait"
)

// Tests of the record of what ran, through the real CLI and daemon: a real
// git repository as the workspace, a real interpreter whose packages
// include a distribution the test installs and upgrades (a dist-info
// directory on PYTHONPATH), real runs.

// gitWork makes the env's workspace a git repository with files committed.
func (e *env) gitWork(files map[string]string) {
	e.t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		e.t.Skip("git is not installed")
	}
	for name, content := range files {
		e.write(name, content)
	}
	e.git("init", "-q", "-b", "main")
	e.git("add", ".")
	e.git("commit", "-q", "-m", "init")
}

func (e *env) git(args ...string) {
	e.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", e.work}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// fakeDist installs (or replaces) a distribution in a site directory.
func fakeDist(t *testing.T, site, name, version string) {
	t.Helper()
	ents, _ := os.ReadDir(site)
	for _, ent := range ents {
		if strings.HasPrefix(ent.Name(), name+"-") {
			os.RemoveAll(filepath.Join(site, ent.Name()))
		}
	}
	dir := filepath.Join(site, name+"-"+version+".dist-info")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n\n"
	if err := os.WriteFile(filepath.Join(dir, "METADATA"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	// The listing cache follows the directory's mtime: make it move even
	// on a coarse clock.
	later := time.Now().Add(time.Duration(len(version)) * time.Second)
	os.Chtimes(site, later, later)
}

func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
}

// completeRecord waits (bounded) until a run's record has its slow part.
func (e *env) completeRecord(id string) *api.Run {
	e.t.Helper()
	var r *api.Run
	err := testwait.For("run "+id+"'s record to be completed", 60*time.Second, func() error {
		r = e.getRun(id)
		if r.Record == nil || !r.Record.Complete {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func kindsAndNames(cs []api.Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Kind+" "+c.Name)
	}
	slices.Sort(out)
	return out
}

// A run, an edit and a package upgrade, a second run: runbox diff names
// exactly those, and nothing else.
func TestDiffNamesTheEditAndThePackage(t *testing.T) {
	needPython(t)
	e := newEnv(t)
	e.gitWork(map[string]string{"train.py": "print('epoch 1')\n"})
	site := t.TempDir()
	fakeDist(t, site, "fakepkg", "1.0")
	e.must("run", "--env", "PYTHONPATH="+site, "--", "python3", "train.py", "--lr", "0.1")
	first := e.completeRecord("1")
	if c := first.Record.Code; c == nil || c.Branch != "main" || c.Dirty {
		t.Fatalf("first run's code: %+v", c)
	}
	if first.Record.Interpreter == nil || first.Record.Interpreter.Packages["fakepkg"] != "1.0" {
		t.Fatalf("first run's interpreter: %+v", first.Record.Interpreter)
	}
	e.write("train.py", "print('epoch 1')\nprint('epoch 2')\n")
	fakeDist(t, site, "fakepkg", "2.0")
	e.must("run", "--env", "PYTHONPATH="+site, "--", "python3", "train.py", "--lr", "0.1")
	e.completeRecord("2")

	var d api.RunDiff
	if err := json.Unmarshal([]byte(e.must("diff", "--json", "1", "@last")), &d); err != nil {
		t.Fatal(err)
	}
	want := []string{"code train.py", "package fakepkg", "script train.py"}
	if got := kindsAndNames(d.Changes); !slices.Equal(got, want) {
		t.Fatalf("diff names %v, want exactly %v\n%+v", got, want, d.Changes)
	}
	if d.Changes[0].Kind != "package" || d.Changes[0].A != "1.0" || d.Changes[0].B != "2.0" {
		t.Fatalf("the package change is not first or not 1.0 → 2.0: %+v", d.Changes[0])
	}
	out := e.must("diff", "1", "2")
	if !strings.Contains(out, "package fakepkg: 1.0 → 2.0 (upgraded)") || !strings.Contains(out, "code train.py") {
		t.Fatalf("diff text:\n%s", out)
	}
	if out := e.must("diff", "--patch", "1", "2"); !strings.Contains(out, "+print('epoch 2')") || !strings.Contains(out, "run 1: no uncommitted change") {
		t.Fatalf("diff --patch does not show the edit:\n%s", out)
	}
	// A run with itself: nothing differs; the full id and a prefix work.
	full := first.ID
	if out := e.must("diff", full, full[:10]); !strings.Contains(out, "nothing recorded differs") {
		t.Fatalf("a run with itself:\n%s", out)
	}
}

// A run that fails after the same command succeeded shows what changed
// since: the edit; and says plainly when nothing recorded differs.
func TestSinceItLastWorked(t *testing.T) {
	needPython(t)
	e := newEnv(t)
	flag := filepath.Join(t.TempDir(), "fail-now")
	e.gitWork(map[string]string{"train.py": "import os, sys\nsys.exit(3 if os.path.exists(" + quotePy(flag) + ") else 0)\n"})
	e.must("run", "--", "python3", "train.py")
	e.completeRecord("1")

	// The cause outside what runbox records (a file elsewhere): nothing differs.
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "run", "--", "python3", "train.py"); r.code != 3 {
		t.Fatalf("second run exit %d", r.code)
	}
	r := e.completeRecord("2")
	if r.SinceWorked == nil || r.SinceWorked.ShortID != "1" || len(r.SinceWorked.Changes) != 0 ||
		!strings.Contains(r.SinceWorked.Summary[0], "nothing recorded differs") {
		t.Fatalf("since it last worked, nothing differs: %+v", r.SinceWorked)
	}

	// Now an edit of the script: it is what changed since run 1 worked.
	os.Remove(flag)
	e.write("train.py", "import sys\nraise SystemExit('broken by an edit')\n")
	if r := e.run("", "run", "--", "python3", "train.py"); r.code == 0 {
		t.Fatal("the edited script succeeded")
	}
	r = e.completeRecord("3")
	if r.SinceWorked == nil || r.SinceWorked.ShortID != "1" {
		t.Fatalf("no since-it-last-worked: %+v", r.SinceWorked)
	}
	if got := kindsAndNames(r.SinceWorked.Changes); !slices.Equal(got, []string{"code train.py", "script train.py"}) {
		t.Fatalf("what changed: %v", got)
	}
	out := e.must("status", "3")
	if !strings.Contains(out, "since it last worked:") || !strings.Contains(out, "train.py") {
		t.Fatalf("status does not say what changed:\n%s", out)
	}
	// A run that succeeded has no such list.
	if r := e.getRun("1"); r.SinceWorked != nil {
		t.Fatalf("a success has a since-it-last-worked: %+v", r.SinceWorked)
	}
}

// A run's uncommitted changes are read once it has started, from the
// workspace, and a short run's only after it ended: an edit made right
// after it (an agent's next step) was recorded as what it ran, and the
// next failure's "since it last worked" missed the edit. The files
// changed after the run started are named, and the comparison says its
// record may hold later edits.
func TestAnEditRightAfterARunIsNamedInItsRecord(t *testing.T) {
	e := newEnv(t)
	e.gitWork(map[string]string{"job.sh": "echo v1\n"})
	e.must("run", "--", "sh", "job.sh")
	e.write("job.sh", "echo v2; exit 3\n") // right after it ended: before its record was read
	r1 := e.completeRecord("1")
	if c := r1.Record.Code; c == nil || !slices.Equal(c.ChangedAfterStart, []string{"job.sh"}) {
		t.Fatalf("run 1's recorded code: %+v", c)
	}
	if r := e.run("", "run", "--", "sh", "job.sh"); r.code != 3 {
		t.Fatalf("second run exit %d", r.code)
	}
	r2 := e.completeRecord("2")
	if c := r2.Record.Code; c == nil || len(c.ChangedAfterStart) != 0 {
		t.Fatalf("run 2's recorded code: %+v", c)
	}
	if sw := r2.SinceWorked; sw == nil || !strings.Contains(strings.Join(sw.Summary, "\n"), "run 1's uncommitted changes were read after it started, and job.sh changed since") {
		t.Fatalf("since it last worked: %+v", r2.SinceWorked)
	}
}

func quotePy(s string) string { b, _ := json.Marshal(s); return string(b) }

// --snapshot runs the code as it was when the run was submitted, though the
// file is edited while the run waits in the queue; a run without it runs
// the edit. The copy is removed when the run ends.
func TestSnapshotRunsCodeAsSubmitted(t *testing.T) {
	e := newEnv(t, "RUNBOX_MAX_PARALLEL=1")
	e.gitWork(map[string]string{"job.sh": "echo version-1\n"})
	gate := filepath.Join(t.TempDir(), "go")
	blocker := strings.TrimSpace(e.must("run", "-d", "--", "sh", "-c", "while [ ! -e "+gate+" ]; do sleep 0.05; done"))
	snap := strings.TrimSpace(e.must("run", "-d", "--snapshot", "--", "sh", "job.sh"))
	plain := strings.TrimSpace(e.must("run", "-d", "--", "sh", "job.sh"))
	if r := e.getRun(snap); r.State != api.Queued {
		t.Fatalf("the snapshot run is %s, not waiting", r.State)
	}
	e.write("job.sh", "echo version-2\n")
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{blocker, snap, plain} {
		e.must("wait", id)
	}
	if out := e.must("logs", snap); strings.TrimSpace(out) != "version-1" {
		t.Fatalf("the snapshot run ran %q, want the code as submitted (version-1)", out)
	}
	if out := e.must("logs", plain); strings.TrimSpace(out) != "version-2" {
		t.Fatalf("the run without a snapshot ran %q (version-2 expected: proves the edit landed before it ran)", out)
	}
	r := e.getRun(snap)
	if r.Record == nil || r.Record.Snapshot == nil || r.Record.Snapshot.Files != 1 {
		t.Fatalf("record of the snapshot: %+v", r.Record)
	}
	if r.Spec.Workdir != e.work {
		t.Fatalf("the run's workdir is %s, want the workspace %s", r.Spec.Workdir, e.work)
	}
	if _, err := os.Stat(r.Record.Snapshot.Dir); !os.IsNotExist(err) {
		t.Fatalf("the copy is still there after the run: %v", err)
	}
}

// The machine's use is sampled: a run that holds 200 MiB shows it as the
// peak of its sys/ memory.
func TestSysMetricsShowPeak(t *testing.T) {
	needPython(t)
	e := newEnv(t)
	e.must("run", "--", "python3", "-c", "import time\nb = b'x' * (200 << 20)\ntime.sleep(3)\n")
	r := e.getRun("1")
	if r.Machine == nil || r.Machine.Samples < 2 {
		t.Fatalf("machine: %+v", r.Machine)
	}
	if r.Machine.PeakRSSBytes < 195<<20 || r.Machine.PeakRSSBytes > 400<<20 {
		t.Fatalf("peak rss %d MiB, want about 200", r.Machine.PeakRSSBytes>>20)
	}
	out := e.must("status", "1")
	if !strings.Contains(out, "machine:") || !strings.Contains(out, "peak") {
		t.Fatalf("status does not show the machine:\n%s", out)
	}
}

// runbox compare: one row per run, only the params that differ, sorted by
// best loss.
func TestCompareRuns(t *testing.T) {
	e := newEnv(t)
	e.progressReady()
	e.write("train.sh", `for i in 1 2 3; do echo "##PROGRESS## {\"step\": $i, \"total\": 3, \"metrics\": {\"loss\": $(echo "$2 $i" | awk '{print $1/$2}')}}"; done`+"\n")
	for _, lr := range []string{"3", "1", "2"} {
		e.must("run", "--label", "exp=a", "--", "sh", "train.sh", "--lr", lr, "--epochs", "3")
	}
	var c api.Comparison
	err := testwait.For("the runs' metrics", 30*time.Second, func() error {
		if err := json.Unmarshal([]byte(e.must("compare", "--json", "--label", "exp=a")), &c); err != nil {
			return err
		}
		for _, r := range c.Rows {
			if r.Metrics["loss"].Best == nil {
				return errors.New("a run has no loss yet")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// --lr is the script's $2 here... the params are --lr and --epochs.
	if !slices.Equal(c.Params, []string{"lr"}) || c.Sort != "best:loss" || len(c.Rows) != 3 {
		t.Fatalf("comparison params %v sort %q rows %d", c.Params, c.Sort, len(c.Rows))
	}
	var order []string
	for _, r := range c.Rows {
		order = append(order, r.Params["lr"])
	}
	if !slices.Equal(order, []string{"1", "2", "3"}) {
		t.Fatalf("rows by best loss: lr %v", order)
	}
	out := e.must("compare", "1", "2", "3", "--all-params")
	if !strings.Contains(out, "epochs") || !strings.Contains(out, "loss best(min)") {
		t.Fatalf("compare --all-params:\n%s", out)
	}
}

// A plan's experience summary names what the failures had that the
// successes did not: here the package version that breaks the script.
func TestPlanExperienceNamesThePackage(t *testing.T) {
	needPython(t)
	e := newEnv(t)
	e.gitWork(map[string]string{"train.py": "import importlib.metadata as m, sys\nsys.exit(0 if m.version('fakepkg') == '1.0' else 2)\n"})
	site := t.TempDir()
	fakeDist(t, site, "fakepkg", "1.0")
	e.must("run", "--env", "PYTHONPATH="+site, "--", "python3", "train.py")
	e.completeRecord("1")
	fakeDist(t, site, "fakepkg", "2.0")
	for _, n := range []string{"2", "3"} {
		if r := e.run("", "run", "--env", "PYTHONPATH="+site, "--", "python3", "train.py"); r.code != 2 {
			t.Fatalf("run %s with fakepkg 2.0: exit %d %s", n, r.code, r.stderr)
		}
		e.completeRecord(n)
	}
	var p api.Plan
	if err := json.Unmarshal([]byte(e.must("plan", "--json", "--", "python3", "train.py")), &p); err != nil {
		t.Fatal(err)
	}
	want := "the last 2 failure(s) had fakepkg 2.0, the 1 success(es) 1.0"
	if p.Experience == nil || !slices.Contains(p.Experience.Changes, want) {
		t.Fatalf("experience %+v, want %q", p.Experience, want)
	}
	r := e.getRun("3")
	if r.SinceWorked == nil || len(r.SinceWorked.Changes) == 0 || r.SinceWorked.Changes[0].Kind != "package" {
		t.Fatalf("since it last worked: %+v", r.SinceWorked)
	}
}

// The record keeps the run's explicit variables with secret values
// redacted, as the store does: a plain value is there (the same path
// reaches the record), a secret's is not, in status or in a diff; the
// remote's credentials are gone.
func TestRecordRedactsSecrets(t *testing.T) {
	e := newEnv(t)
	e.gitWork(map[string]string{"job.sh": "true\n"})
	e.git("remote", "add", "origin", "https://bob:ghp_remotetoken0123456789@example.com/x.git")
	e.must("run", "--env", "PLAIN=visible-value", "--env", "API_TOKEN=s3cr3t-value-1", "--", "sh", "job.sh")
	e.must("run", "--env", "PLAIN=visible-value-2", "--env", "API_TOKEN=s3cr3t-value-2", "--", "sh", "job.sh")
	e.completeRecord("1")
	e.completeRecord("2")
	status := e.must("status", "--json", "1")
	if !strings.Contains(status, "PLAIN=visible-value") {
		t.Fatalf("the plain value is not in the record: the test proves nothing\n%s", status)
	}
	diff := e.must("diff", "--json", "1", "2")
	if !strings.Contains(diff, "visible-value-2") {
		t.Fatalf("the diff does not show the plain change:\n%s", diff)
	}
	for _, out := range []string{status, e.must("status", "--json", "2"), diff, e.must("diff", "1", "2")} {
		for _, secret := range []string{"s3cr3t-value", "ghp_remotetoken", "bob:"} {
			if strings.Contains(out, secret) {
				t.Fatalf("%q is in the output:\n%s", secret, out)
			}
		}
	}
	if r := e.getRun("1"); r.Record.Code == nil || r.Record.Code.Remote != "https://example.com/x.git" {
		t.Fatalf("remote: %+v", r.Record.Code)
	}
}

// A broken interpreter (here a python3 that runs scripts but fails the
// probe runbox makes) does not stop the run: it runs, and its record says
// why it has no packages.
func TestBrokenInterpreterStillRuns(t *testing.T) {
	bin := t.TempDir()
	py := "#!/bin/sh\ncase \"$1\" in -c) echo 'Fatal Python error: init_fs_encoding' >&2; exit 1;; esac\necho ran \"$1\"\n"
	if err := os.WriteFile(filepath.Join(bin, "python3"), []byte(py), 0o755); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, "PATH="+bin+":"+os.Getenv("PATH"))
	e.write("train.py", "print('x')\n")
	if out := e.must("run", "--", "python3", "train.py"); strings.TrimSpace(out) != "ran train.py" {
		t.Fatalf("the run printed %q", out)
	}
	r := e.completeRecord("1")
	in := r.Record.Interpreter
	if in == nil || in.Packages != nil || !strings.Contains(in.Note, "did not run") || !strings.Contains(in.Note, "init_fs_encoding") {
		t.Fatalf("interpreter in the record: %+v", in)
	}
	if r.Record.Code != nil || !slices.ContainsFunc(r.Record.Notes, func(n string) bool { return strings.Contains(n, "not in a git repository") }) {
		t.Fatalf("a workspace outside git: code %+v notes %v", r.Record.Code, r.Record.Notes)
	}
}
