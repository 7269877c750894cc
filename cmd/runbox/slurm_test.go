package main

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/internal/testwait"
)

// These tests submit real jobs to a real Slurm cluster (.ci/slurm-up.sh
// brings up a single-node one); without one they skip, or fail with
// RUNBOX_REQUIRE_SLURM=1.

// needSlurm waits (bounded) for the controller to answer: another
// package's test may be using it at that moment.
func needSlurm(t *testing.T) {
	t.Helper()
	const env = "RUNBOX_REQUIRE_SLURM"
	err := testwait.For("the Slurm controller (scontrol ping)", testwait.Budget(env), func() error {
		out, err := exec.Command("scontrol", "ping").CombinedOutput()
		if err == nil && strings.Contains(string(out), "UP") {
			return nil
		}
		return fmt.Errorf("scontrol ping: %v %s", err, strings.TrimSpace(string(out)))
	})
	if err == nil {
		return
	}
	if testwait.Required(env) {
		t.Fatalf("slurm required (%s=1): %v", env, err)
	}
	t.Skipf("no Slurm controller: %v (run .ci/slurm-up.sh as root)", err)
}

func TestSlurmRunPassesExitCodeAndOutput(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	r := e.run("", "run", "--sandbox", "slurm", "--", "sh", "-c", "echo hello from slurm; echo oops >&2; exit 4")
	if r.code != 4 || !strings.Contains(r.stdout, "hello from slurm") || !strings.Contains(r.stderr, "oops") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 4 with both streams", r.code, r.stdout, r.stderr)
	}
	if out := e.must("backends"); !strings.Contains(out, "slurm") || !strings.Contains(out, "idle") {
		t.Errorf("backends does not show Slurm's health:\n%s", out)
	}
}

func TestSlurmMemoryExceededIsOOMKilled(t *testing.T) {
	needSlurm(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 needed to allocate memory")
	}
	e := newEnv(t)
	id := strings.TrimSpace(e.must("run", "-d", "--sandbox", "slurm", "--memory", "64m", "--",
		"python3", "-c", "x = bytearray(400 << 20)"))
	e.run("", "wait", id)
	if r := e.getRun(id); r.Failure == nil || r.Failure.Code != "OOM_KILLED" {
		t.Fatalf("state %s failure %+v, want OOM_KILLED", r.State, r.Failure)
	}
}

// A job that SIGKILLs itself on a cluster that confines memory by cgroup
// ends in a state other than OUT_OF_MEMORY: KILLED, not OOM_KILLED
// (issue #24). On a cluster without cgroup memory enforcement runbox
// cannot tell, and the test says so.
func TestSlurmSelfSIGKILLIsKilledNotOOM(t *testing.T) {
	needSlurm(t)
	if out, err := exec.Command("scontrol", "show", "config").Output(); err != nil ||
		!strings.Contains(string(out), "task/cgroup") || !regexp.MustCompile(`ConstrainRAMSpace\s*=\s*yes`).Match(out) {
		t.Skip("this cluster does not confine memory by cgroup (task/cgroup, ConstrainRAMSpace=yes)")
	}
	e := newEnv(t)
	id := strings.TrimSpace(e.must("run", "-d", "--sandbox", "slurm", "--memory", "256m", "--",
		"python3", "-c", "import os; b = b'x' * (160 << 20); os.kill(os.getpid(), 9)"))
	e.run("", "wait", id)
	if r := e.getRun(id); r.Failure == nil || r.Failure.Code != "KILLED" {
		t.Fatalf("state %s failure %+v, want KILLED", r.State, r.Failure)
	}
}

func TestSlurmPendingReasonThenStop(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	id := strings.TrimSpace(e.must("run", "-d", "--sandbox", "slurm", "--grace", "1s",
		"--slurm-opt", "begin=now+1hour", "--", "true"))
	waitFor(t, func() bool { return strings.Contains(e.must("status", id), "PENDING (BeginTime)") })
	if r := e.getRun(id); r.State == api.Running {
		t.Errorf("a PENDING job shows as running: %+v", r)
	}
	ref := e.getRun(id).Ref
	job := slurmJobOf(t, id)
	if ref != "slurm:"+job {
		t.Errorf("a pending run's ref is %q, want slurm:%s (its job exists from its sbatch)", ref, job)
	}
	if st := e.must("status", id); !regexp.MustCompile(`(?m)^slurm job:\s+` + job + `$`).MatchString(st) {
		t.Errorf("status does not name job %s:\n%s", job, st)
	}
	e.must("stop", id)
	if r := e.getRun(id); r.State != api.Cancelled {
		t.Fatalf("after stop: %s (%s)", r.State, r.Reason)
	}
	waitFor(t, func() bool {
		out, _ := exec.Command("squeue", "-h", "-j", job, "-o", "%T").Output()
		return !strings.Contains(string(out), "PENDING") && !strings.Contains(string(out), "RUNNING")
	})
}

// slurmJobOf is the id of the Slurm job of run id, as squeue names it.
func slurmJobOf(t *testing.T, id string) string {
	t.Helper()
	out, err := exec.Command("squeue", "-h", "--states=all", "-n", "runbox-"+id, "-o", "%i").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("squeue for run %s: %v %q", id, err, out)
	}
	return strings.TrimSpace(string(out))
}

// A job cancelled in Slurm's queue while no daemon watched it: the next
// daemon re-attaches to it, finds it gone without ever having started,
// and ends the run saying so, its ref still naming the job.
func TestSlurmPendingJobCancelledWhileTheDaemonWasDown(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	id := strings.TrimSpace(e.must("run", "-d", "--sandbox", "slurm",
		"--slurm-opt", "begin=now+1hour", "--", "true"))
	waitFor(t, func() bool { return strings.Contains(e.must("status", id), "PENDING (BeginTime)") })
	job := slurmJobOf(t, id)
	e.killDaemon(syscall.SIGKILL)
	if out, err := exec.Command("scancel", job).CombinedOutput(); err != nil {
		t.Fatalf("scancel %s: %v %s", job, err, out)
	}
	e.run("", "wait", id) // starts the next daemon
	r := e.getRun(id)
	if !r.State.Terminal() || !strings.Contains(r.Reason, "cancelled outside runbox") || !strings.Contains(r.Reason, "before it started") {
		t.Errorf("after the restart: %s %q, want ended, cancelled outside runbox before it started", r.State, r.Reason)
	}
	if r.Ref != "slurm:"+job || r.StartedAt != nil {
		t.Errorf("ref %q started %v, want slurm:%s and no start", r.Ref, r.StartedAt, job)
	}
}

func TestSlurmBadInputIsClear(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	r := e.run("", "run", "--sandbox", "slurm", "--partition", "no-such-part", "--", "true")
	if r.code == 0 || !strings.Contains(r.stderr+r.stdout, "partition") || !strings.Contains(r.stderr+r.stdout, "SANDBOX_ERROR") {
		t.Errorf("bad partition: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	r = e.run("", "run", "--partition", "x", "--", "true")
	if r.code == 0 || !strings.Contains(r.stderr, "--sandbox slurm") {
		t.Errorf("--partition without --sandbox slurm: exit %d, stderr %s", r.code, r.stderr)
	}
}

// TestSlurmGPUsRefusedAtSubmission: a --gpus that means nothing on a
// cluster (all of them, this host's devices by name) is refused by the
// Slurm backend's admission, before any run or job exists, with the same
// words sbatch's script would have failed with at start.
func TestSlurmGPUsRefusedAtSubmission(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	for gpus, want := range map[string]string{
		"all":      "--gpus all has no meaning on a cluster: ask for a number (--gpus 2)",
		"device=0": "--gpus device=0 names this host's devices; on Slurm ask for a number",
	} {
		r := e.run("", "run", "--sandbox", "slurm", "--gpus", gpus, "--", "true")
		if r.code == 0 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr+r.stdout, "SANDBOX_ERROR") {
			t.Errorf("--gpus %s: exit %d, stdout %q stderr %q; want a refusal saying %q", gpus, r.code, r.stdout, r.stderr, want)
		}
	}
	if out := e.must("ls", "--all", "--json"); strings.Contains(out, `"id"`) {
		t.Errorf("a refused request left a run: %q", out)
	}
}

// TestSlurmProgressWhileRunning: ##PROGRESS## lines of a running job reach
// status, as for a local run.
func TestSlurmProgressWhileRunning(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	id := strings.TrimSpace(e.must("run", "-d", "--sandbox", "slurm", "--", "sh", "-c",
		`echo '##PROGRESS## {"step": 3, "total": 10, "phase": "train"}'; sleep 20`))
	waitFor(t, func() bool {
		r := e.getRun(id)
		return r.State == api.Running && r.Progress != nil && r.Progress.Step == 3 && r.Progress.Total == 10
	})
	e.must("stop", "--grace", "1s", id)
}

// TestSlurmDaemonKilledMidJob: kill -9 of the daemon while a job prints;
// the next daemon re-attaches to the job and the log holds every line once.
func TestSlurmDaemonKilledMidJob(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	id := strings.TrimSpace(e.must("run", "-d", "--sandbox", "slurm", "--", "sh", "-c",
		`for i in $(seq 1 40); do echo line $i; sleep 0.1; done`))
	waitFor(t, func() bool { return strings.Contains(e.run("", "logs", id).stdout, "line 3\n") })
	e.killDaemon(syscall.SIGKILL)
	if r := e.run("", "wait", id); r.code != 0 {
		t.Fatalf("wait after the daemon was killed: exit %d %s", r.code, r.stderr)
	}
	var want strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	if got := e.must("logs", "--stream", "stdout", id); got != want.String() {
		t.Errorf("log after re-attach = %q, want every line once", got)
	}
	if r := e.getRun(id); r.State != api.Succeeded {
		t.Errorf("state %s (%s), want succeeded", r.State, r.Reason)
	}
}
