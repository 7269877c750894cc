package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/runbox/runbox/api"
)

// TestFailedSmokeOutputIsReadable: a run whose smoke run failed has no
// log of its own; `runbox logs RUN` shows the smoke run's output instead,
// headed as such (the failure's suggestion sends the user there). And
// `plan --json` names the plan's id plan_id, as MCP does.
func TestFailedSmokeOutputIsReadable(t *testing.T) {
	e := newEnv(t)
	e.write("job.py", `import argparse, sys
p = argparse.ArgumentParser()
p.add_argument("--dry-run", action="store_true")
a = p.parse_args()
if a.dry_run:
    print("smoke says: data dir missing", flush=True)
    sys.exit(3)
print("full run")
`)
	out := e.must("plan", "--json", "--sandbox", "process", "--", "python3", "job.py")
	var plan api.Plan
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	_ = json.Unmarshal([]byte(out), &raw)
	if raw["plan_id"] != plan.ID || plan.ID == "" {
		t.Errorf("plan --json: plan_id %v, id %q", raw["plan_id"], plan.ID)
	}
	if plan.Result.Smoke == nil {
		t.Skipf("the planner found no smoke command: %+v", plan.Result)
	}
	if r := e.run("", "exec", "--smoke", plan.ID); r.code == 0 {
		t.Fatalf("exec --smoke of a failing smoke run: exit 0\n%s", r.stderr)
	}
	var runs []api.Run
	if err := json.Unmarshal([]byte(e.must("ls", "--json")), &runs); err != nil {
		var wrapped struct{ Runs []api.Run }
		if err2 := json.Unmarshal([]byte(e.must("ls", "--json")), &wrapped); err2 != nil {
			t.Fatal(err, err2)
		}
		runs = wrapped.Runs
	}
	if len(runs) == 0 {
		t.Fatal("no run")
	}
	r := e.run("", "logs", runs[0].ID)
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "smoke says: data dir missing") || !strings.Contains(r.stdout+r.stderr, "smoke run output") {
		t.Errorf("logs of a run whose smoke failed: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	// Its record of what ran is completed like any run's (it stayed "still
	// being completed" for good, and what changed since the run last
	// worked was read from half a record: the interpreter "removed").
	waitFor(t, func() bool {
		rec := e.getRun(runs[0].ID).Record
		return rec != nil && rec.Complete
	})
}

// TestSmokeRunLeftByAKilledDaemonIsStopped: a daemon killed (SIGKILL)
// while a run is in its smoke run leaves the smoke command going. The
// next daemon calls the run lost, and must stop that command first: it
// used to run on, writing into the log of a run already called lost. The
// run is lost as retryable (the daemon lost it, not its command), as its
// reason says "retry it".
func TestSmokeRunLeftByAKilledDaemonIsStopped(t *testing.T) {
	e := newEnv(t)
	pidFile := filepath.Join(e.work, "smoke.pid") // in the workspace: the plan may confine the run to it
	e.write("job.py", `import argparse, os, sys, time
p = argparse.ArgumentParser()
p.add_argument("--dry-run", action="store_true")
a = p.parse_args()
if a.dry_run:
    open("smoke.pid", "w").write(str(os.getpid()))
    for i in range(600):
        print("smoke step", i, flush=True)
        time.sleep(0.1)
print("full run")
`)
	var plan api.Plan
	if err := json.Unmarshal([]byte(e.must("plan", "--json", "--sandbox", "process", "--", "python3", "job.py")), &plan); err != nil {
		t.Fatal(err)
	}
	if plan.Result.Smoke == nil {
		t.Fatalf("the planner found no smoke command for --dry-run: %+v", plan.Result)
	}
	id := strings.TrimSpace(e.must("exec", "-d", "--smoke", plan.ID))
	var pid int
	waitFor(t, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && e.getRun(id).State == api.Smoke
	})
	e.killDaemon(syscall.SIGKILL)
	if syscall.Kill(pid, 0) != nil {
		t.Fatal("the smoke command died with the daemon: this test cannot tell a stop from that")
	}
	res := e.run("", "wait", "--timeout", "60s", id) // a new daemon, which recovers the run
	r := e.getRun(id)
	if r.State != api.Lost || r.Failure == nil || !r.Failure.Retryable {
		t.Fatalf("after the restart: exit %d, state %s, failure %+v", res.code, r.State, r.Failure)
	}
	waitFor(t, func() bool { return syscall.Kill(pid, 0) != nil })
}
