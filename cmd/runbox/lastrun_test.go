package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
)

// progressScript prints the same three-step loss curve every time, a
// step every 0.15 s so that each line is an update of its own (as the
// dashboard's chart tests pace theirs).
const progressScript = `for i in 1 2 3; do echo "##PROGRESS## {\"step\": $i, \"total\": 3, \"loss\": $((4 - i))}"; sleep 0.15; done; echo "$0 done"`

// TestShortIDsAndLast names runs the ways people type them: the numbers
// `ls` shows, @last and @last~N, in every command that takes a run —
// status, logs, wait, retry, plot, ls --parent and stop — against a real
// daemon and store. The daemon resolves them, so each command gets the
// run the store holds at that moment.
func TestShortIDsAndLast(t *testing.T) {
	e := newEnv(t)
	if r := e.run("", "status", "@last"); r.code == 0 || !strings.Contains(r.stderr, "no runs yet") {
		t.Fatalf("@last with no runs: exit %d, stderr %q", r.code, r.stderr)
	}
	// The daemon loads the progress plugin at the first output that may
	// be progress: lines printed meanwhile are folded into one update. A
	// warm-up run loads it (run 1, or more on a loaded machine: w counts
	// them, and the runs below are numbered after them).
	w := e.progressReady()
	n := func(i int) string { return strconv.Itoa(w + i) }
	e.must("run", "--", "sh", "-c", progressScript, "first")
	e.must("run", "--", "sh", "-c", progressScript, "second")
	if r := e.run("", "run", "--", "sh", "-c", "echo third; exit 3"); r.code != 3 {
		t.Fatalf("third run: exit %d", r.code)
	}

	// ls shows the numbers, newest first.
	ls := e.must("ls")
	if !regexp.MustCompile(`(?m)^`+n(3)+` +failed`).MatchString(ls) || !regexp.MustCompile(`(?m)^`+n(1)+` +succeeded`).MatchString(ls) {
		t.Errorf("ls does not show the short ids:\n%s", ls)
	}
	// status: the number, @last, @last~N and the full id name the same runs.
	first := e.getRun(n(1))
	if first.ShortID != n(1) || e.getRun("@last~2").ID != first.ID || e.getRun(first.ID).ShortID != n(1) {
		t.Errorf("run %s, @last~2 and the full id disagree: %+v", n(1), first)
	}
	if got := e.getRun("@last"); got.ShortID != n(3) || got.State != api.Failed {
		t.Errorf("@last = %s (%s), want run %s, failed", got.ShortID, got.State, n(3))
	}
	if out := e.must("status", "@last~1"); !regexp.MustCompile(`(?m)^run: +` + n(2) + ` \(0[0-9a-z]{25}\)$`).MatchString(out) {
		t.Errorf("status @last~1 does not show run %s:\n%s", n(2), out)
	}
	if r := e.run("", "status", "@last~"+n(3)); r.code == 0 || !strings.Contains(r.stderr, "only "+n(3)+" runs") {
		t.Errorf("@last~%s of %s runs: exit %d, stderr %q", n(3), n(3), r.code, r.stderr)
	}
	// logs
	if got := e.must("logs", "@last"); got != "third\n" {
		t.Errorf("logs @last = %q", got)
	}
	if got := e.must("logs", "--stream", "stdout", "@last~1"); !strings.HasSuffix(got, "second done\n") {
		t.Errorf("logs @last~1 = %q", got)
	}
	// wait: the run's exit code, the run named by its number.
	if r := e.run("", "wait", "@last"); r.code != 3 || !strings.HasPrefix(r.stdout, n(3)+" failed") {
		t.Errorf("wait @last: exit %d, stdout %q", r.code, r.stdout)
	}
	if r := e.run("", "wait", n(2)); r.code != 0 || !strings.HasPrefix(r.stdout, n(2)+" succeeded") {
		t.Errorf("wait %s: exit %d, stdout %q", n(2), r.code, r.stdout)
	}
	// plot: the two newest runs with metrics drew the same curve.
	plot := e.must("plot", "@last~1", "@last~2", "--metric", "loss")
	if !strings.Contains(plot, "● "+n(2)) || !strings.Contains(plot, "○ "+n(1)) || !strings.Contains(plot, n(2)+" and "+n(1)+": identical values") {
		t.Errorf("plot @last~1 @last~2 does not name runs %s and %s or say they overlap:\n%s", n(2), n(1), plot)
	}
	// retry and ls --parent
	retry := strings.TrimSpace(e.must("retry", "-d", "@last"))
	e.run("", "wait", retry)
	var list api.RunList
	if err := json.Unmarshal([]byte(e.must("ls", "--json", "--parent", n(3))), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Runs) != 1 || list.Runs[0].ID != retry || list.Runs[0].ShortID != n(4) {
		t.Errorf("ls --parent %s: %+v, want the retry %s as run %s", n(3), list.Runs, retry, n(4))
	}
	if got := e.getRun("@last"); got.ID != retry {
		t.Errorf("@last after a retry is %s, want the retry %s", got.ID, retry)
	}
	// stop: a run must be named; @last is accepted.
	if r := e.run("", "stop"); r.code != 2 {
		t.Errorf("stop with no run: exit %d, want 2", r.code)
	}
	e.must("run", "-d", "--grace", "1s", "--", "sh", "-c", "echo started; sleep 300")
	waitFor(t, func() bool { return strings.Contains(e.run("", "logs", "@last").stdout, "started") })
	if st, ref := e.must("status", "@last"), e.getRun("@last").Ref; ref == "" || !strings.Contains(st, "supervisor:  pid "+ref+"\n") {
		t.Errorf("status of a running process run does not name its supervisor (ref %q):\n%s", ref, st)
	}
	if out := e.must("stop", "@last"); out != n(5)+" cancelled\n" {
		t.Errorf("stop @last printed %q, want %q", out, n(5)+" cancelled\n")
	}
	// A second stop finds it ended, and says so; its supervisor is gone.
	if out := e.must("stop", "@last"); out != n(5)+" cancelled (it had already ended: nothing to stop)\n" {
		t.Errorf("stop of an ended run printed %q", out)
	}
	if st := e.must("status", "@last"); strings.Contains(st, "supervisor:") {
		t.Errorf("status of an ended run names its supervisor:\n%s", st)
	}
}

// TestDemoRunWithoutTTY runs the demo's two run commands (Makefile, demo)
// with pipes instead of a terminal, as CI logs them: no raw ##PROGRESS##
// line reaches the output, the progress shows as plain lines, the end
// says where the full log is, and the diverging run's loss is readable
// (scientific form, not hundreds of digits).
func TestDemoRunWithoutTTY(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH (the demo needs it)")
	}
	e := newEnv(t)
	train, err := filepath.Abs("../../examples/train.py")
	if err != nil {
		t.Fatal(err)
	}
	// A warm-up run (run 1) loads the progress plugin first: on a loaded
	// machine a fresh daemon's first run can end before its progress
	// arrives, and this test is about how progress is shown, not how soon
	// the plugin loads.
	w := e.progressReady()
	r := e.run("", "run", "--name", "demo-train", "--", "python3", train, "--epochs", "3")
	if r.code != 0 {
		t.Fatalf("demo-train: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	out := r.stdout + r.stderr
	if strings.Contains(out, "##PROGRESS##") && !strings.Contains(out, "##PROGRESS## line(s) not shown") {
		t.Errorf("raw ##PROGRESS## lines in the output without a terminal:\n%s", out)
	}
	if !strings.Contains(r.stdout, "done: final loss") || !strings.Contains(r.stderr, "runbox: ▶ train epoch ") {
		t.Errorf("the output or the progress lines are missing:\n%s\n%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "the full output: runbox logs "+strconv.Itoa(w+1)) {
		t.Errorf("the end does not say where the full log is:\n%s", r.stderr)
	}
	if full := e.must("logs", "@last"); strings.Count(full, "##PROGRESS##") != 60 {
		t.Errorf("the log lost progress lines: %d of 60", strings.Count(full, "##PROGRESS##"))
	}
	r = e.run("", "run", "--name", "demo-diverge", "--", "python3", train, "--epochs", "3", "--lr", "500")
	if r.code == 0 {
		t.Fatal("the diverging run succeeded")
	}
	for _, l := range strings.Split(r.stdout+r.stderr, "\n") {
		if len(l) > 200 {
			t.Errorf("a line of %d characters: %.120s…", len(l), l)
		}
	}
	if !regexp.MustCompile(`loss: \d\.\d+e\+\d+`).MatchString(r.stdout) {
		t.Errorf("the diverging loss is not in scientific form:\n%s", r.stdout)
	}
}

// `runbox backends` lists the isolation levels --isolate can ask for on
// this host, not only the strongest ("isolation levels: full" read as if
// full were the only one).
func TestBackendsListsIsolationLevels(t *testing.T) {
	e := newEnv(t)
	out := e.must("backends")
	m := regexp.MustCompile(`(?m)^  levels it can give: (none(, \w+)*)$`).FindStringSubmatch(out)
	if m == nil || strings.Contains(out, "isolation levels:") {
		t.Fatalf("backends does not list the levels it can give:\n%s", out)
	}
	if !strings.HasSuffix(m[1], "full") && !strings.Contains(out, "not on this host: ") {
		t.Errorf("levels %q without full, and no line on why:\n%s", m[1], out)
	}
}
