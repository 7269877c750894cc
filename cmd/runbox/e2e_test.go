package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox/process/supervisor"
	"github.com/runbox/runbox/sandbox/runlog"
)

func TestRunExitCodePassthrough(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		cmd   string
		code  int
		state api.State
	}{
		{"exit 0", 0, api.Succeeded},
		{"exit 3", 3, api.Failed},
		{"exit 42", 42, api.Failed},
		{"kill -SEGV $$", 139, api.Failed},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			r := e.run("", "run", "--shell", "--", tc.cmd)
			if r.code != tc.code {
				t.Fatalf("exit code %d, want %d (stderr %q)", r.code, tc.code, r.stderr)
			}
		})
	}
	var list api.RunList
	if err := json.Unmarshal([]byte(e.must("ls", "--json", "-a")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Runs) != 4 {
		t.Fatalf("%d runs listed, want 4", len(list.Runs))
	}
	// Newest first.
	if got := list.Runs[0].Spec.Command; got[len(got)-1] != "kill -SEGV $$" {
		t.Errorf("newest run is %v", got)
	}
	if f := list.Runs[0].Failure; f == nil || f.Code != "SEGFAULT" {
		t.Errorf("segfault run classified as %+v", f)
	}
}

// A command that cannot start fails as in a shell (127, 126), and an
// attached terminal is told why once, then the classified failure.
func TestRunOfACommandThatCannotStart(t *testing.T) {
	e := newEnv(t)
	notExec := e.write("data.txt", "")
	if err := os.Chmod(notExec, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cmd  string
		code int
		says string
	}{
		{"no-such-command-here", 127, "runbox: no-such-command-here: command not found"},
		{notExec, 126, "runbox: " + notExec + ": permission denied"},
	} {
		r := e.run("", "run", "--sandbox", "process", "--", tc.cmd)
		if r.code != tc.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", tc.cmd, r.code, tc.code, r.stderr)
		}
		if n := strings.Count(r.stderr, tc.says); n != 1 {
			t.Errorf("%s: stderr says %q %d times, want once:\n%s", tc.cmd, tc.says, n, r.stderr)
		}
	}
}

// A live run's suggestions name the run where a classifier wrote RUN,
// so that the command can be copied; a saved log's analysis has no run
// and keeps RUN.
func TestFailureSuggestionsNameTheRun(t *testing.T) {
	e := newEnv(t)
	e.run("", "run", "--sandbox", "process", "--shell", "--", "echo nothing useful; exit 3")
	r := e.getRun("@last")
	if r.Failure == nil || !slices.Contains(r.Failure.Suggestions, "Read the end of the log (`runbox logs "+r.ShortID+"`) for the program's own error message.") {
		t.Errorf("run %s's failure %+v: want `runbox logs %s` in its suggestions", r.ShortID, r.Failure, r.ShortID)
	}
	out := e.run("", "analyze", "--exit-code", "3", e.write("saved.log", "nothing useful\n")).stdout
	if !strings.Contains(out, "`runbox logs RUN`") {
		t.Errorf("analyze of a saved log:\n%s\nwant `runbox logs RUN`", out)
	}
}

func TestRunStreamsOutputAndStdin(t *testing.T) {
	e := newEnv(t)
	r := e.run("line one\nline two\n", "run", "--stdin", "-", "--", "sh", "-c", "cat; echo to-stderr >&2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r.stdout != "line one\nline two\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "to-stderr") {
		t.Errorf("stderr %q lacks the child's stderr", r.stderr)
	}
	in := e.write("input.txt", "from a file\n")
	r = e.run("", "run", "--stdin", in, "--", "cat")
	if r.stdout != "from a file\n" {
		t.Errorf("stdin file: stdout %q", r.stdout)
	}
}

func TestRunEnv(t *testing.T) {
	e := newEnv(t, "RB_INHERITED=from-shell", "RB_SECRET_TOKEN=hunter2")
	r := e.run("", "run", "-e", "RB_SET=given", "--", "sh", "-c", `echo "$RB_INHERITED/$RB_SET/$RB_SECRET_TOKEN"`)
	if strings.TrimSpace(r.stdout) != "from-shell/given/hunter2" {
		t.Errorf("inherited env: %q", r.stdout)
	}
	r = e.run("", "run", "--clean-env", "--env-allow", "RB_INHERITED", "-e", "RB_SET=given", "--", "/usr/bin/env")
	got := strings.Fields(r.stdout)
	if strings.Contains(r.stdout, "RB_SECRET_TOKEN") || !strings.Contains(r.stdout, "RB_INHERITED=from-shell") || !strings.Contains(r.stdout, "RB_SET=given") {
		t.Errorf("clean env: %v", got)
	}
	// A secret given on the command line is never stored in clear.
	r = e.run("", "run", "-d", "-e", "API_TOKEN=s3cr3t", "--", "true")
	id := strings.TrimSpace(r.stdout)
	e.must("wait", id)
	b, _ := json.Marshal(e.getRun(id))
	if strings.Contains(string(b), "s3cr3t") {
		t.Errorf("secret stored in clear: %s", b)
	}
}

func TestUnknownIDsAndBadFlags(t *testing.T) {
	e := newEnv(t)
	e.must("run", "--", "true") // start the daemon
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "01nosuchrun"}, `run "01nosuchrun" not found`},
		{[]string{"wait", "zzz"}, "not found"},
		{[]string{"stop", "zzz"}, "not found"},
		{[]string{"logs", "zzz"}, "not found"},
		{[]string{"retry", "zzz"}, "not found"},
		{[]string{"run", "--memory", "lots", "--", "true"}, "--memory"},
		{[]string{"run", "--sandbox", "vm", "--", "true"}, "--sandbox"},
		{[]string{"run", "--timeout", "soon", "--", "true"}, "--timeout"},
		{[]string{"run"}, "no command"},
		{[]string{"run", "--no-such-flag", "--", "true"}, "unknown flag --no-such-flag"},
		{[]string{"plan", "--sandbox", "process", "--bogus"}, "unknown flag --bogus"},
		{[]string{"ls", "--state", "bogus"}, `--state "bogus": a run's state is one of queued`},
		{[]string{"frobnicate"}, "unexpected argument"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := e.run("", tc.args...)
			if r.code == 0 {
				t.Fatalf("exit 0, want failure")
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q does not say %q", r.stderr, tc.want)
			}
			if lines := strings.Count(strings.TrimSpace(r.stderr), "\n"); lines > 0 && !strings.Contains(r.stderr, "Usage") {
				t.Errorf("want one clear line, got %d:\n%s", lines+1, r.stderr)
			}
		})
	}
}

func TestDaemonThatCannotStart(t *testing.T) {
	e := newEnv(t)
	// The home is a file, so the daemon cannot create its store.
	f := filepath.Join(e.work, "not-a-dir")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	e.vars = append(e.vars, "RUNBOX_HOME="+filepath.Join(f, "home"), "RUNBOX_SOCKET="+filepath.Join(e.home, "s.sock"))
	r := e.run("", "run", "--", "true")
	if r.code == 0 {
		t.Fatal("run succeeded without a daemon")
	}
	if !strings.Contains(r.stderr, "daemon") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
		t.Errorf("want one line about the daemon, got %q", r.stderr)
	}
}

// runbox alone (runboxd not installed beside it nor on PATH): the commands
// it runs itself still work as far as they can, and those that need
// runboxd say so in one line naming what to install.
func TestRunboxWithoutRunboxd(t *testing.T) {
	e := newEnv(t)
	lone := filepath.Join(t.TempDir(), "runbox")
	b, err := os.ReadFile(runboxBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	var vars []string
	for _, v := range e.vars {
		if !strings.HasPrefix(v, "PATH=") {
			vars = append(vars, v)
		}
	}
	vars = append(vars, "PATH=/usr/bin:/bin")
	for _, args := range [][]string{{"analyze", "-"}, {"plugins", "ls"}, {"ls"}} {
		cmd := exec.Command(lone, args...)
		cmd.Env = vars
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if err == nil {
			t.Fatalf("runbox %v succeeded without runboxd", args)
		}
		msg := strings.TrimSpace(stderr.String())
		if !strings.Contains(msg, "runboxd not found") || !strings.Contains(msg, "go install") || strings.Contains(msg, "\n") {
			t.Errorf("runbox %v: want one line naming runboxd and how to install it, got %q", args, msg)
		}
	}
	if out, err := exec.Command(lone, "version").Output(); err != nil || !strings.HasPrefix(string(out), "runbox ") {
		t.Errorf("version without runboxd: %q, %v", out, err)
	}
}

// Process runs are supervised by the thin runbox binary, not by the much
// larger runboxd: a supervisor lives as long as its run.
func TestSupervisorIsTheThinBinary(t *testing.T) {
	e := newEnv(t)
	id := strings.TrimSpace(e.must("run", "-d", "--", "sleep", "30"))
	defer e.must("stop", id)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if r := e.getRun(id); r.State == api.Running {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	ents, _ := os.ReadDir("/proc")
	found := false
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !bytes.Contains(cmdline, []byte("__supervise")) {
			continue
		}
		environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if !bytes.Contains(environ, []byte("RUNBOX_HOME="+e.home+"\x00")) {
			continue
		}
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if err != nil {
			t.Fatal(err)
		}
		if exe != runboxBin {
			t.Errorf("supervisor %d runs %s, want %s", pid, exe, runboxBin)
		}
		found = true
	}
	if !found {
		t.Fatal("no supervisor process found for this home")
	}
}

func TestLogsReplaceInvalidUTF8AndKeepBytes(t *testing.T) {
	e := newEnv(t)
	r := e.run("", "run", "-d", "--", "printf", `ok \377\376 done\n`)
	id := strings.TrimSpace(r.stdout)
	e.must("wait", id)
	shown := e.must("logs", id)
	if shown != "ok \uFFFD\uFFFD done\n" {
		t.Errorf("logs shows %q", shown)
	}
	raw := e.must("logs", "--raw", id)
	if raw != "ok \xff\xfe done\n" {
		t.Errorf("logs --raw shows %q", raw)
	}
	var stored []byte
	if err := runlog.ReadAll(e.logPath(id), func(rec runlog.Record) error {
		if rec.Stream == runlog.Stdout {
			stored = append(stored, rec.Data...)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if string(stored) != "ok \xff\xfe done\n" {
		t.Errorf("stored %q", stored)
	}
}

func TestLogsTailAndStreams(t *testing.T) {
	e := newEnv(t)
	id := strings.TrimSpace(e.must("run", "-d", "--setup", "echo preparing", "--", "sh", "-c", "for i in 1 2 3 4 5; do echo out$i; done; echo bad >&2"))
	e.must("wait", id)
	if got := e.must("logs", "--stream", "stdout", "--tail", "2", id); got != "out4\nout5\n" {
		t.Errorf("tail 2 of stdout: %q", got)
	}
	if got := e.must("logs", "--stream", "stderr", id); got != "bad\n" {
		t.Errorf("stderr: %q", got)
	}
	if got := e.must("logs", "--stream", "setup-stdout", id); got != "preparing\n" {
		t.Errorf("setup output: %q", got)
	}
	if got := e.must("logs", "--stream", "stdout", id); strings.Contains(got, "preparing") {
		t.Errorf("setup output mixed into stdout: %q", got)
	}
}

func TestStopEndsTheRun(t *testing.T) {
	e := newEnv(t)
	id := strings.TrimSpace(e.must("run", "-d", "--grace", "1s", "--", "sh", "-c", "echo started; sleep 300"))
	waitFor(t, func() bool { return strings.Contains(e.run("", "logs", id).stdout, "started") })
	e.must("stop", id)
	r := e.getRun(id)
	if r.State != api.Cancelled || r.Failure == nil || r.Failure.Code != "CANCELLED" {
		t.Fatalf("after stop: state %s failure %+v", r.State, r.Failure)
	}
	if res := e.run("", "wait", id); res.code != 130 {
		t.Errorf("wait exit code %d, want 130", res.code)
	}
}

func TestTimeoutMarksTimedOut(t *testing.T) {
	e := newEnv(t)
	r := e.run("", "run", "--timeout", "1s", "--grace", "500ms", "--", "sleep", "60")
	if r.code != 124 {
		t.Fatalf("exit %d, want 124 (stderr %s)", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "TIMEOUT") {
		t.Errorf("stderr does not name TIMEOUT: %s", r.stderr)
	}
}

func TestMemoryLimitIsOOMKilled(t *testing.T) {
	e := newEnv(t)
	r := e.run("", "run", "--memory", "64m", "--", "python3", "-c", "b = bytearray(512 << 20); print(len(b))")
	if r.code == 0 {
		t.Fatalf("a 512 MiB allocation passed a 64 MiB limit")
	}
	var list api.RunList
	if err := json.Unmarshal([]byte(e.must("ls", "--json", "-n", "1")), &list); err != nil {
		t.Fatal(err)
	}
	run := list.Runs[0]
	if run.Failure == nil || run.Failure.Code != "OOM_KILLED" {
		t.Fatalf("failure %+v, want OOM_KILLED", run.Failure)
	}
}

// A run that kills itself with SIGKILL while holding most of its memory
// limit (issue #24): the supervisor read its memory cgroup's OOM counter
// and found no kill, so the failure is KILLED with that evidence, not
// OOM_KILLED, which the memory alone would suggest. Where no memory
// cgroup is writable the watchdog enforces the limit and nothing is
// checked: the test skips.
func TestSelfSIGKILLIsKilledNotOOM(t *testing.T) {
	if mode := supervisor.MemoryLimitMode(); mode == "rss watchdog" {
		t.Skipf("no writable memory cgroup here (memory limits: %s)", mode)
	}
	e := newEnv(t)
	e.run("", "run", "--memory", "256m", "--", "python3", "-c", "import os; b = b'x' * (160 << 20); os.kill(os.getpid(), 9)")
	var list api.RunList
	if err := json.Unmarshal([]byte(e.must("ls", "--json", "-n", "1")), &list); err != nil {
		t.Fatal(err)
	}
	run := list.Runs[0]
	if run.Failure == nil || run.Failure.Code != "KILLED" || !strings.Contains(strings.Join(run.Failure.Evidence, " ")+run.Failure.Message, "no OOM kill") {
		t.Fatalf("failure %+v, want KILLED naming no OOM kill", run.Failure)
	}
}

// A daemon killed with SIGKILL mid-run loses nothing: the run goes on under
// its supervisor, the next daemon re-attaches, and the log holds exactly
// what the child wrote.
func TestDaemonKill9MidRun(t *testing.T) {
	e := newEnv(t)
	script := e.write("emit.sh", `#!/bin/sh
i=0
while [ $i -lt 400 ]; do
  echo "line $i $(printf '%040d' $i)"
  [ $((i % 50)) -eq 0 ] && echo "err $i" >&2
  i=$((i+1))
  sleep 0.005
done
`)
	id := strings.TrimSpace(e.must("run", "-d", "--", "sh", script))
	waitFor(t, func() bool { return strings.Contains(e.run("", "logs", id).stdout, "line 50 ") })
	old := e.daemonPID()
	e.killDaemon(syscall.SIGKILL)
	if syscall.Kill(old, 0) == nil {
		t.Fatal("daemon survived SIGKILL")
	}
	// The next command starts a new daemon, which re-attaches.
	res := e.run("", "wait", "--timeout", "60s", id)
	if res.code != 0 {
		t.Fatalf("wait after restart: exit %d %s %s", res.code, res.stdout, res.stderr)
	}
	if e.daemonPID() == old {
		t.Fatal("no new daemon")
	}
	var want, wantErr bytes.Buffer
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&want, "line %d %040d\n", i, i)
		if i%50 == 0 {
			fmt.Fprintf(&wantErr, "err %d\n", i)
		}
	}
	if got := e.must("logs", "--stream", "stdout", id); got != want.String() {
		t.Errorf("stdout after restart differs: %d bytes, want %d", len(got), want.Len())
	}
	if got := e.must("logs", "--stream", "stderr", id); got != wantErr.String() {
		t.Errorf("stderr after restart: %q", got)
	}
	if r := e.getRun(id); r.State != api.Succeeded {
		t.Errorf("state %s", r.State)
	}
}

func TestHundredConcurrentRunsThroughTheQueue(t *testing.T) {
	e := newEnv(t, "RUNBOX_MAX_PARALLEL=4")
	const n = 100
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := e.run("", "run", "-d", "--", "sh", "-c", fmt.Sprintf("echo run-%d", i))
			if r.code != 0 {
				errs <- r.stderr
				return
			}
			ids[i] = strings.TrimSpace(r.stdout)
		}(i)
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Fatalf("submit failed: %s", msg)
	}
	for i, id := range ids {
		e.must("wait", "--timeout", "120s", id)
		if got := e.must("logs", id); got != fmt.Sprintf("run-%d\n", i) {
			t.Fatalf("run %d log %q", i, got)
		}
	}
	var list api.RunList
	if err := json.Unmarshal([]byte(e.must("ls", "--json", "-a", "--state", "succeeded")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Runs) != n {
		t.Fatalf("%d succeeded runs, want %d", len(list.Runs), n)
	}
	// The limit held: no more than 4 runs overlapped.
	type span struct{ start, end time.Time }
	var spans []span
	for _, r := range list.Runs {
		spans = append(spans, span{*r.StartedAt, *r.EndedAt})
	}
	for _, s := range spans {
		overlap := 0
		for _, o := range spans {
			if !o.start.After(s.start) && o.end.After(s.start) {
				overlap++
			}
		}
		if overlap > 4 {
			t.Fatalf("%d runs were running at %s, limit 4", overlap, s.start)
		}
	}
}

func TestLargeOutputThroughAttachedRun(t *testing.T) {
	e := newEnv(t)
	// 64 MiB through the whole stack (the sandbox tests push 1 GiB).
	r := e.run("", "run", "--", "sh", "-c", "head -c 67108864 /dev/urandom | od -An -tx1 -v | head -c 67108864")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if len(r.stdout) != 64<<20 {
		t.Fatalf("attached stdout %d bytes, want %d", len(r.stdout), 64<<20)
	}
	var list api.RunList
	if err := json.Unmarshal([]byte(e.must("ls", "--json", "-n", "1")), &list); err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if err := runlog.ReadAll(e.logPath(list.Runs[0].ID), func(rec runlog.Record) error {
		if rec.Stream == runlog.Stdout {
			h.Write(rec.Data)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, want := h.Sum(nil), sha256.Sum256([]byte(r.stdout)); !bytes.Equal(got, want[:]) {
		t.Error("stored log differs from what was streamed")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Ctrl-C on an attached run stops the run (and says so) rather than
// leaving it behind, and the CLI exits 130.
func TestCtrlCStopsAttachedRun(t *testing.T) {
	e := newEnv(t)
	cmd := exec.Command(runboxBin, "run", "--grace", "1s", "--", "sh", "-c", "echo ready; sleep 300")
	cmd.Env, cmd.Dir = e.vars, e.work
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return strings.Contains(out.String(), "ready") })
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130; stderr %q", err, errb.String())
	}
	if !strings.Contains(errb.String(), "stopping run") {
		t.Errorf("stderr does not say the run is being stopped: %q", errb.String())
	}
	var list api.RunList
	if err := json.Unmarshal([]byte(e.must("ls", "--json", "-n", "1")), &list); err != nil {
		t.Fatal(err)
	}
	if st := list.Runs[0].State; st != api.Cancelled {
		t.Errorf("run state %s, want cancelled", st)
	}
}

// syncBuffer is a bytes.Buffer safe to read while a process writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestStallTimeoutStopsASilentRun(t *testing.T) {
	e := newEnv(t)
	r := e.run("", "run", "--stall-timeout", "2s", "--grace", "500ms", "--", "sh", "-c", "echo started; sleep 120")
	if r.code == 0 || !strings.Contains(r.stderr, "STALLED") {
		t.Fatalf("exit %d, stderr %q; want a STALLED failure", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "started") {
		t.Errorf("stdout %q", r.stdout)
	}
	// The message names the window the user set, not the run's whole time.
	if !strings.Contains(r.stderr, "nothing for 2 s (--stall-timeout)") {
		t.Errorf("the stall is not reported as the 2 s window: %q", r.stderr)
	}
}

func TestRetryKeepsLineage(t *testing.T) {
	e := newEnv(t)
	e.write("flaky.sh", "#!/bin/sh\n[ \"$ATTEMPT_OK\" = 1 ] && { echo fixed; exit 0; }\necho 'ModuleNotFoundError: No module named '\"'\"'yaml'\"'\"'' >&2\nexit 1\n")
	r := e.run("", "run", "-d", "--", "sh", "flaky.sh")
	first := strings.TrimSpace(r.stdout)
	if res := e.run("", "wait", first); res.code != 1 {
		t.Fatalf("first run exit %d", res.code)
	}
	if f := e.getRun(first).Failure; f == nil || f.Code != "MODULE_NOT_FOUND" {
		t.Fatalf("first run failure %+v", f)
	}
	// The retry reruns the same command with an override, linked to the first.
	r = e.run("", "retry", "-e", "ATTEMPT_OK=1", first)
	if r.code != 0 || r.stdout != "fixed\n" {
		t.Fatalf("retry: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	var list api.RunList
	if err := json.Unmarshal([]byte(e.must("ls", "--json", "--parent", first)), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Runs) != 1 {
		t.Fatalf("%d retries of %s listed, want 1", len(list.Runs), first)
	}
	retry := list.Runs[0]
	if retry.ParentRunID != first || retry.Attempt != 2 || retry.State != api.Succeeded {
		t.Errorf("retry: parent %s attempt %d state %s", retry.ParentRunID, retry.Attempt, retry.State)
	}
	if strings.Join(retry.Spec.Command, " ") != "sh flaky.sh" {
		t.Errorf("retry command %v", retry.Spec.Command)
	}
}

// The daemon dying under an attached client gives one clear line that the
// run goes on (its supervisor owns it), and the next command re-attaches.
func TestAttachedClientWhenDaemonDies(t *testing.T) {
	e := newEnv(t)
	cmd := exec.Command(runboxBin, "run", "--", "sh", "-c", "echo ready; sleep 2; echo finished; exit 3")
	cmd.Env, cmd.Dir = e.vars, e.work
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return strings.Contains(out.String(), "ready") })
	e.killDaemon(syscall.SIGKILL)
	// The client follows the run through the next daemon, which it starts:
	// every byte once, and the run's own exit code at the end.
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("attached client ended with %v, want the run's exit code 3; stderr %q", err, errb.String())
	}
	if got := out.String(); got != "ready\nfinished\n" {
		t.Errorf("attached output across the daemon's death: %q, want every line once", got)
	}
	var list api.RunList
	if err := json.Unmarshal([]byte(e.must("ls", "--json", "-n", "1")), &list); err != nil {
		t.Fatal(err)
	}
	if got := e.must("logs", list.Runs[0].ID); got != "ready\nfinished\n" {
		t.Errorf("log after the daemon died: %q", got)
	}
}

// Clients that find no daemon all race to start one; the losers' daemons
// exit on the home lock and those clients must wait for the winner's socket
// rather than fail. Fresh homes make the window (store creation, recovery)
// as wide as it gets.
func TestConcurrentClientsStartOneDaemon(t *testing.T) {
	for round := 0; round < 4; round++ {
		e := newEnv(t)
		const n = 16
		var wg sync.WaitGroup
		errs := make(chan string, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r := e.run("", "ls", "--json"); r.code != 0 {
					errs <- r.stderr
				}
			}()
		}
		wg.Wait()
		close(errs)
		for msg := range errs {
			t.Fatalf("round %d: a client failed: %s", round, msg)
		}
		pid := e.daemonPID()
		if pid <= 0 || syscall.Kill(pid, 0) != nil {
			t.Fatalf("round %d: no live daemon owns the home (pid %d)", round, pid)
		}
	}
}
