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

	"github.com/runbox/runbox/sandbox/process"
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
	cmd := exec.Command(exe, "__supervise", "--standby")
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
