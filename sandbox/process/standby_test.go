package process_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process"
	"github.com/runbox/runbox/sandbox/process/internal/protocol"
	"github.com/runbox/runbox/sandbox/process/supervisor"
	"github.com/runbox/runbox/sandbox/runlog"
)

// standbys lists the waiting standby supervisors started from this test
// binary (their argv ends in --standby) that are not in before.
func standbys(t *testing.T, before ...int) []int {
	t.Helper()
	exe, _ := os.Executable()
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) >= 3 && args[0] == exe && args[len(args)-1] == "--standby" && !contains(before, pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func contains(pids []int, pid int) bool {
	for _, p := range pids {
		if p == pid {
			return true
		}
	}
	return false
}

// standbySandbox is a sandbox with standbys, released when the test ends;
// before lists the standbys that were already there.
func standbySandbox(t *testing.T) (sb *process.Sandbox, before []int) {
	before = standbys(t)
	sb = newSandbox(process.Options{Standby: true})
	t.Cleanup(func() { sb.Close() })
	return sb, before
}

func TestStandbySupervisorRunsEachRun(t *testing.T) {
	sb, before := standbySandbox(t)
	for i := 0; i < 4; i++ {
		spec := shSpec(t, fmt.Sprintf("echo run-%d; echo err-%d >&2; exit %d", i, i, i))
		ex := wait(t, start(t, sb, spec))
		if ex.Code != i {
			t.Fatalf("run %d: exit %d", i, ex.Code)
		}
		out := streams(t, spec.LogPath)
		if string(out[runlog.Stdout]) != fmt.Sprintf("run-%d\n", i) || string(out[runlog.Stderr]) != fmt.Sprintf("err-%d\n", i) {
			t.Errorf("run %d: streams %q", i, out)
		}
		if ex.StartedAt.IsZero() || ex.Usage.WallSeconds > 30 {
			t.Errorf("run %d: usage measured from the wrong start: %+v", i, ex)
		}
	}
	// After the first run a standby waits for the next one; only one.
	waitFor(t, "a standby supervisor", func() bool { return len(standbys(t, before...)) == 1 })
	// Close lets it go.
	sb.Close()
	waitFor(t, "the standby to exit", func() bool { return len(standbys(t, before...)) == 0 })
}

func TestStandbyThatDiedIsReplaced(t *testing.T) {
	sb, before := standbySandbox(t)
	wait(t, start(t, sb, shSpec(t, "true")))
	waitFor(t, "a standby supervisor", func() bool { return len(standbys(t, before...)) == 1 })
	for _, pid := range standbys(t, before...) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	// The dead standby is noticed when handed a run, and a fresh
	// supervisor runs it instead.
	spec := shSpec(t, "echo after")
	if ex := wait(t, start(t, sb, spec)); ex.Code != 0 {
		t.Fatalf("exit %+v", ex)
	}
	if got := string(streams(t, spec.LogPath)[runlog.Stdout]); got != "after\n" {
		t.Errorf("stdout %q", got)
	}
}

func TestStandbyRunCanBeStopped(t *testing.T) {
	sb, before := standbySandbox(t)
	wait(t, start(t, sb, shSpec(t, "true")))
	waitFor(t, "a standby supervisor", func() bool { return len(standbys(t, before...)) == 1 })
	spec := shSpec(t, "echo up; sleep 300")
	h := start(t, sb, spec)
	waitFor(t, "output", func() bool { return len(streams(t, spec.LogPath)[runlog.Stdout]) > 0 })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.Stop(ctx, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if ex := wait(t, h); !ex.Cancelled {
		t.Errorf("exit %+v, want cancelled", ex)
	}
	// The standby moved its stderr to the run's supervisor.log.
	if _, err := os.Stat(filepath.Join(spec.StateDir, "supervisor.log")); err != nil {
		t.Errorf("supervisor.log: %v", err)
	}
}

// A standby whose daemon goes away exits instead of lingering.
func TestStandbyExitsWithItsDaemon(t *testing.T) {
	exe, _ := os.Executable()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ready, readyW, _ := os.Pipe()
	cmd := exec.Command(exe, supervisor.Arg, protocol.StandbyArg)
	cmd.ExtraFiles = []*os.File{readyW, r}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	readyW.Close()
	defer ready.Close()
	w.Close() // the "daemon" goes away before handing it a run
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("standby exited with %v, want 0", err)
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("standby still waiting after its daemon went away")
	}
}

// recycledStandby runs two short runs on sb so that the standby waiting
// afterwards is one that has already served a run (recycled), and returns
// its pid.
func recycledStandby(t *testing.T, sb *process.Sandbox) int {
	t.Helper()
	wait(t, start(t, sb, shSpec(t, "true"))) // no standby yet: a fresh supervisor
	waitFor(t, "a standby supervisor", func() bool { return sb.StandbyPid() != 0 })
	pid := sb.StandbyPid()
	wait(t, startOn(t, sb, shSpec(t, "true"), pid))
	waitFor(t, "the supervisor to be the standby again", func() bool { return sb.StandbyPid() == pid })
	return pid
}

// startOn starts spec and checks that the supervisor pid serves it.
func startOn(t *testing.T, sb *process.Sandbox, spec sandbox.Spec, pid int) sandbox.Handle {
	t.Helper()
	h := start(t, sb, spec)
	if h.Ref() != strconv.Itoa(pid) {
		t.Fatalf("run went to supervisor %s, want the standby %d", h.Ref(), pid)
	}
	return h
}

// A standby supervisor serves run after run; each run's record counts
// only that run's usage.
func TestStandbyServesRunAfterRun(t *testing.T) {
	sb, _ := standbySandbox(t)
	pid := recycledStandby(t, sb)
	// A run that burns CPU and touches 64 MiB, then one that does neither.
	busy := shSpec(t, `i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; dd if=/dev/zero of=/dev/null bs=64M count=1 2>/dev/null; echo busy`)
	h := startOn(t, sb, busy, pid)
	be := wait(t, h)
	if be.Code != 0 || be.Usage.CPUSeconds < 0.05 || be.Usage.PeakRSSBytes < 64<<20 {
		t.Fatalf("busy run: %+v", be)
	}
	waitFor(t, "the supervisor to be the standby again", func() bool { return sb.StandbyPid() == pid })
	quiet := shSpec(t, "echo quiet")
	h = startOn(t, sb, quiet, pid)
	qe := wait(t, h)
	if qe.Code != 0 || string(streams(t, quiet.LogPath)[runlog.Stdout]) != "quiet\n" {
		t.Fatalf("quiet run: %+v %q", qe, streams(t, quiet.LogPath))
	}
	if qe.Usage.CPUSeconds >= be.Usage.CPUSeconds || qe.Usage.PeakRSSBytes >= 32<<20 {
		t.Errorf("quiet run's usage includes the busy run's: quiet %+v, busy %+v", qe.Usage, be.Usage)
	}
	if got := string(streams(t, busy.LogPath)[runlog.Stdout]); got != "busy\n" {
		t.Errorf("busy run's log changed: %q", got)
	}
}

// A Stop that reaches a recycled supervisor after the run it was meant for
// has ended must not cancel the run the supervisor serves now: through the
// handle (which knows its run is over) or as a late SIGTERM (what Stop
// sends when it passed that check just before the run ended).
func TestLateStopSparesTheNextRun(t *testing.T) {
	sb, _ := standbySandbox(t)
	pid := recycledStandby(t, sb)
	first := shSpec(t, "true")
	hFirst := start(t, sb, first)
	wait(t, hFirst)
	waitFor(t, "the supervisor to be the standby again", func() bool { return sb.StandbyPid() == pid })

	next := shSpec(t, "echo up; while [ ! -e go ]; do sleep 0.05; done; echo done")
	h := startOn(t, sb, next, pid)
	waitFor(t, "output", func() bool { return len(streams(t, next.LogPath)[runlog.Stdout]) > 0 })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := hFirst.Stop(ctx, time.Second); err != nil {
		t.Fatalf("stop of the ended run: %v", err)
	}
	// The late SIGTERM: Stop writes the request into its run's directory,
	// then signals the supervisor.
	if err := os.WriteFile(filepath.Join(first.StateDir, "stop.json"), []byte(`{"grace":1000000000}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the late stop to be seen", func() bool {
		return strings.Contains(string(streams(t, next.LogPath)[runlog.Meta]), "ignored a stop request")
	})
	os.WriteFile(filepath.Join(next.Workdir, "go"), nil, 0o600)
	ex := wait(t, h)
	if ex.Code != 0 || ex.Cancelled {
		t.Fatalf("the next run was cancelled by a stop for the previous one: %+v", ex)
	}
	if got := string(streams(t, next.LogPath)[runlog.Stdout]); got != "up\ndone\n" {
		t.Errorf("stdout %q", got)
	}
	// A real stop of the run it serves still works, and a second SIGTERM
	// is a real one now that the late request has been answered.
	waitFor(t, "the supervisor to be the standby again", func() bool { return sb.StandbyPid() == pid })
	last := shSpec(t, "echo up; sleep 300")
	h = start(t, sb, last)
	waitFor(t, "output", func() bool { return len(streams(t, last.LogPath)[runlog.Stdout]) > 0 })
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if ex := wait(t, h); !ex.Cancelled {
		t.Errorf("kill -TERM of the supervisor: %+v, want cancelled", ex)
	}
}

// A run recovered in the process whose Sandbox started it ends when its
// record is written, though its supervisor lives on as the standby.
func TestRecoveredRunOfARecycledSupervisor(t *testing.T) {
	sb, _ := standbySandbox(t)
	pid := recycledStandby(t, sb)
	spec := shSpec(t, "while [ ! -e go ]; do sleep 0.05; done; exit 7")
	startOn(t, sb, spec, pid)
	rh, err := newSandbox(process.Options{}).Recover(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(spec.Workdir, "go"), nil, 0o600)
	if ex := wait(t, rh); ex.Code != 7 || ex.Lost {
		t.Fatalf("recovered: %+v", ex)
	}
	waitFor(t, "the supervisor to be the standby again", func() bool { return sb.StandbyPid() == pid })
	if !alive(pid) {
		t.Fatal("the supervisor exited; the test needs it recycled")
	}
}
