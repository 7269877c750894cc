package slurm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/runlog"
)

// These tests run real jobs on a real Slurm cluster (.ci/slurm-up.sh).

func TestExitCodeAndOutput(t *testing.T) {
	sb := needSlurm(t)
	spec := testSpec(t, `echo "out $SECRET_TOKEN"; echo err >&2; pwd; exit 3`)
	spec.Env = append(spec.Env, "SECRET_TOKEN=hunter2")
	h := start(t, sb, spec)
	e := wait(t, h, time.Minute)
	if e.Code != 3 || e.Error != "" || e.Cancelled || e.OOMKilled || e.TimedOut {
		t.Fatalf("exit = %+v, want code 3 and nothing else", e)
	}
	got := streams(t, spec.LogPath)
	if want := "out hunter2\n" + spec.Workdir + "\n"; got[runlog.Stdout] != want {
		t.Errorf("stdout = %q, want %q", got[runlog.Stdout], want)
	}
	if got[runlog.Stderr] != "err\n" {
		t.Errorf("stderr = %q, want %q", got[runlog.Stderr], "err\n")
	}
	// The secret reached the job through sbatch's environment, never a file.
	b, err := os.ReadFile(spec.StateDir + "/" + scriptFile)
	if err != nil || strings.Contains(string(b), "hunter2") {
		t.Errorf("batch script holds the secret or is missing (%v):\n%s", err, b)
	}
}

// A job's assets are in its workspace when its command starts, as a
// process run's are: a file (and a link, kept a link) at its
// destination, a directory's contents under its own. Before, a Slurm job
// took --asset and ignored it. An asset that cannot be placed ends the
// job before its command, saying which.
func TestAssetsArePlacedInTheWorkspace(t *testing.T) {
	sb := needSlurm(t)
	src := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(src+"/weights.bin", []byte("w1"), 0o644))
	must(os.MkdirAll(src+"/data/train", 0o755))
	must(os.WriteFile(src+"/data/train/a.csv", []byte("x,y\n"), 0o644))
	must(os.Symlink("a.csv", src+"/data/train/latest.csv"))
	spec := testSpec(t, `cat models/weights.bin; echo; cat inputs/train/a.csv; readlink inputs/train/latest.csv`)
	spec.Assets = []sandbox.Asset{{Src: src + "/weights.bin", Dst: "models/weights.bin"}, {Src: src + "/data", Dst: "inputs"}}
	e := wait(t, start(t, sb, spec), time.Minute)
	got := streams(t, spec.LogPath)
	if e.Code != 0 || got[runlog.Stdout] != "w1\nx,y\na.csv\n" {
		t.Fatalf("exit %+v, stdout %q, stderr %q: want the assets in the workspace", e, got[runlog.Stdout], got[runlog.Stderr])
	}

	gone := testSpec(t, `echo ran`)
	gone.Assets = []sandbox.Asset{{Src: src + "/missing", Dst: "m"}}
	e = wait(t, start(t, sb, gone), time.Minute)
	got = streams(t, gone.LogPath)
	if e.Code != 125 || got[runlog.Stdout] != "" || !strings.Contains(got[runlog.Stderr], "runbox: asset "+src+"/missing could not be placed in the workspace") {
		t.Errorf("a missing asset: exit %+v, stdout %q, stderr %q; want 125 before the command, naming the asset", e, got[runlog.Stdout], got[runlog.Stderr])
	}
}

func TestSetupFailureEndsWithItsCode(t *testing.T) {
	sb := needSlurm(t)
	spec := testSpec(t, `echo main`)
	spec.Setup = []string{"echo preparing", "echo broken >&2; exit 7"}
	e := wait(t, start(t, sb, spec), time.Minute)
	if !e.SetupFailed || e.Code != 7 {
		t.Fatalf("exit = %+v, want setup failed with code 7", e)
	}
	got := streams(t, spec.LogPath)
	if got[runlog.SetupStdout] != "preparing\n" || got[runlog.SetupStderr] != "broken\n" || got[runlog.Stdout] != "" {
		t.Errorf("streams = %q", got)
	}
}

func TestMemoryExceededIsOOMKilled(t *testing.T) {
	sb := needSlurm(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 needed to allocate memory")
	}
	spec := testSpec(t, `echo allocating; python3 -c "x = bytearray(400 << 20); import time; time.sleep(5)"`)
	spec.Limits.MemoryBytes = 64 << 20
	e := wait(t, start(t, sb, spec), 2*time.Minute)
	if !e.OOMKilled || e.Code == 0 || e.Cancelled {
		t.Fatalf("exit = %+v, want OOMKilled", e)
	}
	if out := streams(t, spec.LogPath)[runlog.Stdout]; !strings.Contains(out, "allocating") {
		t.Errorf("stdout = %q, want the output before the kill", out)
	}
}

func TestTimeLimitIsTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for Slurm's one-minute time limit")
	}
	sb := needSlurm(t)
	spec := testSpec(t, `echo started; sleep 300`)
	spec.Timeout = 30 * time.Second // Slurm rounds up to --time=1
	e := wait(t, start(t, sb, spec), 3*time.Minute)
	if !e.TimedOut || e.Cancelled || e.Code == 0 {
		t.Fatalf("exit = %+v, want TimedOut", e)
	}
}

func TestStopCancelsJobAndProcesses(t *testing.T) {
	sb := needSlurm(t)
	n := 3000 + rand.IntN(5000)
	// The job ignores SIGTERM: Stop must escalate after the grace.
	spec := testSpec(t, fmt.Sprintf(`trap "" TERM; echo ready; sleep %d; echo never`, n))
	h := start(t, sb, spec)
	eventually(t, 30*time.Second, "the job's first output", func() bool {
		return strings.Contains(streams(t, spec.LogPath)[runlog.Stdout], "ready")
	})
	marker := fmt.Sprintf("sleep\x00%d", n)
	if !procWith(marker) {
		t.Fatalf("the job's sleep %d is not running", n)
	}
	if err := h.Stop(context.Background(), time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}
	e := wait(t, h, time.Minute)
	if !e.Cancelled {
		t.Fatalf("exit = %+v, want Cancelled", e)
	}
	eventually(t, 30*time.Second, "job and processes gone", func() bool {
		return !liveJob(t, h.Ref()) && !procWith(marker)
	})
	if err := h.Stop(context.Background(), 0); err != nil {
		t.Errorf("stopping an ended run: %v", err)
	}
}

func TestPendingReasonAndQueueTimeout(t *testing.T) {
	sb := needSlurm(t)
	spec := testSpec(t, `echo never`)
	spec.Slurm = &sandbox.SlurmSpec{Options: map[string]string{"begin": "now+1hour"}, QueueTimeout: 3 * time.Second}
	h := start(t, sb, spec)
	q, ok := h.(sandbox.Queued)
	if !ok {
		t.Fatal("a Slurm handle must be a sandbox.Queued")
	}
	reasons := make(chan string, 16)
	go q.Started(context.Background(), func(r string) { reasons <- r })
	select {
	case r := <-reasons:
		if !strings.Contains(r, "PENDING (BeginTime)") {
			t.Errorf("first reason = %q, want the PENDING reason", r)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no reason reported for a pending job")
	}
	e := wait(t, h, time.Minute)
	if e.Cancelled || !strings.Contains(e.Error, "--queue-timeout") || !strings.Contains(e.Error, "BeginTime") {
		t.Fatalf("exit = %+v, want a queue-timeout error naming the reason", e)
	}
	eventually(t, 10*time.Second, "pending job cancelled", func() bool { return !liveJob(t, h.Ref()) })
}

func TestBadPartitionIsRefused(t *testing.T) {
	sb := needSlurm(t)
	spec := testSpec(t, `true`)
	spec.Slurm = &sandbox.SlurmSpec{Partition: "no-such-partition"}
	_, err := sb.Start(context.Background(), spec)
	if err == nil || !strings.Contains(err.Error(), "sbatch refused the job") || !strings.Contains(err.Error(), "partition") {
		t.Fatalf("err = %v, want sbatch's refusal naming the partition", err)
	}
	if strings.Contains(err.Error(), "sbatch: sbatch:") {
		t.Errorf("err = %v: sbatch named twice", err)
	}
}

func TestOutputFollowedWhileRunning(t *testing.T) {
	sb := needSlurm(t)
	spec := testSpec(t, `echo "##PROGRESS## 1/2"; sleep 3; echo "##PROGRESS## 2/2"`)
	h := start(t, sb, spec)
	eventually(t, 30*time.Second, "the first progress line while the job runs", func() bool {
		return strings.Contains(streams(t, spec.LogPath)[runlog.Stdout], "##PROGRESS## 1/2")
	})
	select {
	case <-h.(*handle).done:
		t.Fatal("the run had ended before its first line was in the log")
	default:
	}
	wait(t, h, time.Minute)
	if out := streams(t, spec.LogPath)[runlog.Stdout]; out != "##PROGRESS## 1/2\n##PROGRESS## 2/2\n" {
		t.Errorf("stdout = %q", out)
	}
}

// TestRecoverAfterKill: the process that submitted the job is SIGKILLed
// mid-job; Recover in another process re-attaches by the submit record
// and the log ends up with every line exactly once.
func TestRecoverAfterKill(t *testing.T) {
	sb := needSlurm(t)
	spec := testSpec(t, `for i in $(seq 1 30); do echo line $i; sleep 0.1; done`)
	b, _ := json.Marshal(spec)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+string(b))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the job's first lines", func() bool {
		return strings.Contains(streams(t, spec.LogPath)[runlog.Stdout], "line 3\n")
	})
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	h, err := sb.Recover(context.Background(), spec)
	if err != nil {
		t.Fatalf("recover: %v", err)
	}
	e := wait(t, h, time.Minute)
	if e.Code != 0 || e.Error != "" {
		t.Fatalf("exit = %+v", e)
	}
	var want strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	if got := streams(t, spec.LogPath)[runlog.Stdout]; got != want.String() {
		t.Errorf("stdout after recovery = %q, want every line once", got)
	}
	// A second Recover sees the recorded exit.
	h2, err := sb.Recover(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if e2 := wait(t, h2, time.Second); e2.Code != e.Code {
		t.Errorf("recorded exit = %+v, want %+v", e2, e)
	}
}

func TestRecoverWithoutRecordIsNotFound(t *testing.T) {
	spec := testSpec(t, `true`)
	_, err := New(Options{}).Recover(context.Background(), spec)
	if !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
}

func TestHealthShowsPartitionsAndIdleNodes(t *testing.T) {
	sb := needSlurm(t)
	h := sb.Health(context.Background())
	if h.Info["partitions"] == "" || h.Info["idle_nodes"] == "" || h.Version == "" {
		t.Fatalf("health = %+v, want partitions, idle nodes and version", h)
	}
}

// TestRequeuedJobFollowedToTheEnd: a running job requeued for real
// (scontrol requeue, what preemption with requeue does) runs again under
// the same id; the run follows it to the new attempt's end, with the
// first attempt's output kept and the second's appended.
func TestRequeuedJobFollowedToTheEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("Slurm holds a requeued job for about two minutes")
	}
	sb := needSlurm(t)
	spec := testSpec(t, `echo "attempt ${SLURM_RESTART_COUNT:-0}"; [ "${SLURM_RESTART_COUNT:-0}" -ge 1 ] && exit 5; sleep 300`)
	h := start(t, sb, spec)
	eventually(t, 30*time.Second, "the first attempt's output", func() bool {
		return strings.Contains(streams(t, spec.LogPath)[runlog.Stdout], "attempt 0")
	})
	id := strings.TrimPrefix(h.Ref(), "slurm:")
	if out, err := exec.Command("scontrol", "requeue", id).CombinedOutput(); err != nil {
		t.Fatalf("scontrol requeue: %v %s", err, out)
	}
	e := wait(t, h, 3*time.Minute)
	if e.Code != 5 || e.Error != "" {
		t.Fatalf("exit = %+v, want the second attempt's code 5", e)
	}
	if out := streams(t, spec.LogPath)[runlog.Stdout]; out != "attempt 0\nattempt 1\n" {
		t.Errorf("stdout = %q, want both attempts in order", out)
	}
	if meta := streams(t, spec.LogPath)[runlog.Meta]; !strings.Contains(meta, "requeued 1 time") {
		t.Errorf("the log does not say the job was requeued: %q", meta)
	}
}
