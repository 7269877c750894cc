package process

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/internal/proc"
	"github.com/runbox/runbox/sandbox/process/internal/protocol"
	"github.com/runbox/runbox/sandbox/process/supervisor"
)

// A daemon killed between writing a run's spec and a supervisor taking it
// leaves a spec and no pid file. That window is microseconds wide and
// cannot be hit on purpose, so these tests lay out the state it leaves by
// hand (with the real protocol) and recover it for real.

func unclaimedRun(t *testing.T) (sandbox.Spec, string) {
	t.Helper()
	dir := t.TempDir()
	spec := sandbox.Spec{RunID: "r1", Command: []string{"true"}, Workdir: dir, StateDir: filepath.Join(dir, "state"), LogPath: filepath.Join(dir, "output.log")}
	if err := os.MkdirAll(spec.StateDir, protocol.DirMode); err != nil {
		t.Fatal(err)
	}
	if err := protocol.WriteJSON(filepath.Join(spec.StateDir, protocol.SpecFile), protocol.Boot{Spec: spec}, false); err != nil {
		t.Fatal(err)
	}
	return spec, spec.StateDir
}

// Nobody claimed it: no supervisor has the run or ever will, so it is not
// found (the engine starts it again from its queued spec), and its spec is
// taken back so that a late supervisor cannot run it too.
func TestRecoverUnclaimedSpecIsNotFound(t *testing.T) {
	spec, dir := unclaimedRun(t)
	_, err := New(Options{}).Recover(context.Background(), spec)
	if !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatalf("recover: %v, want ErrNotFound (start it again)", err)
	}
	if protocol.Exists(filepath.Join(dir, protocol.SpecFile)) || !protocol.Exists(filepath.Join(dir, protocol.TakenFile)) {
		t.Error("the unclaimed spec is still there for a late supervisor to run, or not marked taken back")
	}
	// A late supervisor (its daemon handed the run over as it died) finds
	// it taken back: it runs nothing and records nothing.
	exe, _ := os.Executable()
	out, err := exec.Command(exe, supervisor.Arg, dir).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "taken back") {
		t.Errorf("a late supervisor: %v %s, want it to leave the run alone", err, out)
	}
	if protocol.Exists(filepath.Join(dir, protocol.ExitFile)) || protocol.Exists(filepath.Join(dir, protocol.PidFile)) {
		t.Error("a late supervisor recorded the run it was not to run")
	}
}

// A supervisor holds the claim: it is taking the run this moment, so
// Recover waits for its pid file and follows it.
func TestRecoverClaimedSpecWaitsForItsSupervisor(t *testing.T) {
	spec, dir := unclaimedRun(t)
	release, err := protocol.Claim(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	go func() {
		time.Sleep(300 * time.Millisecond)
		st, _ := proc.StartTime(sleep.Process.Pid)
		protocol.WriteJSON(filepath.Join(dir, protocol.PidFile), protocol.PidRecord{Pid: sleep.Process.Pid, Start: st}, false)
	}()
	h, err := New(Options{}).Recover(context.Background(), spec)
	if err != nil {
		t.Fatalf("recover: %v, want the run followed", err)
	}
	if h.Ref() != strconv.Itoa(sleep.Process.Pid) {
		t.Errorf("recovered handle follows %s, want the supervisor %d", h.Ref(), sleep.Process.Pid)
	}
	select {
	case <-h.(*handle).done:
		t.Fatal("the recovered run counts as ended while its supervisor lives")
	default:
	}
}
