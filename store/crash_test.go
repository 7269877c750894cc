//go:build unix

package store

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestCrashDurability kills a writer with SIGKILL mid-stream; every write
// it reported as returned must be there after reopening.
func TestCrashDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=crash", "RUNBOX_STORE_TEST_DIR="+dir)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]State{}
	var order []string
	sc := bufio.NewScanner(stdout)
	n := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[0] != "ack" {
			t.Fatalf("helper said %q", sc.Text())
		}
		if _, seen := acked[f[1]]; !seen {
			order = append(order, f[1])
		}
		acked[f[1]] = State(f[2])
		if n++; n == 300 {
			// Kill while it is writing; lines already in the pipe were
			// acknowledged before the kill and are still read below.
			_ = cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	_ = cmd.Wait()
	if n < 300 {
		t.Fatalf("helper died after %d acks", n)
	}

	s := openTest(t, dir)
	ctx := context.Background()
	rank := map[State]int{Queued: 0, Preparing: 1, Running: 2, Succeeded: 3}
	for _, id := range order {
		r, err := s.GetRun(ctx, id)
		if err != nil {
			t.Fatalf("acked run %s lost: %v", id, err)
		}
		if rank[r.State] < rank[acked[id]] {
			t.Fatalf("run %s is %s, but %s was acknowledged", id, r.State, acked[id])
		}
		evs, err := s.Events(ctx, id, 0, 0)
		if err != nil || len(evs) < rank[acked[id]]+1 {
			t.Fatalf("run %s: %d events for acked state %s (%v)", id, len(evs), acked[id], err)
		}
	}
	all, err := s.ListRuns(ctx, Filter{})
	if err != nil || len(all) < len(order) {
		t.Fatalf("list after crash: %d runs, %d acked (%v)", len(all), len(order), err)
	}
	t.Logf("%d acks over %d runs survived SIGKILL", n, len(order))
}

// A writer killed mid-stream while Pebble rotates and recycles WALs leaves
// a torn tail, never damage: the store opens with no false alarm.
func TestCrashWithRotatingWALsIsNotDamage(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	dir := t.TempDir()
	for round := 0; round < 3; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=crash-rotate", "RUNBOX_STORE_TEST_DIR="+dir)
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		n := 0
		for ; sc.Scan(); n++ {
			if n == 1500 {
				_ = cmd.Process.Signal(syscall.SIGKILL)
			}
		}
		_ = cmd.Wait()
		if n < 1500 {
			t.Fatalf("round %d: the writer died after %d acks", round, n)
		}
		if _, bad, err := checkWALs(dir); err != nil || bad != nil {
			t.Fatalf("round %d: a crash read as damage: %v %v", round, bad, err)
		}
	}
	s, err := Open(dir, Options{MemTableSize: 64 << 10})
	if err != nil {
		t.Fatalf("open after crashes: %v", err)
	}
	defer s.Close()
	if chk, err := s.Check(context.Background()); err != nil || !chk.OK() {
		t.Fatalf("check after crashes: %v %v", chk, err)
	}
}
