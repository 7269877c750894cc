package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
)

// Fault: a run ends while its home's disk is full (a 24 MiB tmpfs, filled by the run itself), so the store refuses its end -> status and wait show the end from the run's exit record at once, with a note that the store could not record it (not "running", not a wait until space returns); once space returns the store records it, and it survives a daemon restart
func TestDiskFullRunEndIsShownBeforeTheStoreRecordsIt(t *testing.T) {
	e := newEnv(t)
	tmpfsHome(t, e)
	fill := filepath.Join(e.home, "fill")
	id := strings.TrimSpace(e.must("run", "-d", "--shell", "--",
		fmt.Sprintf("echo filling; dd if=/dev/zero of=%s bs=4k 2>/dev/null; exit 0", fill)))
	record := filepath.Join(e.home, "runs", id, "sandbox", "exit.json")
	deadline := time.Now().Add(time.Minute)
	for !fileExists(record) {
		if time.Now().After(deadline) {
			t.Fatalf("no exit record with the disk full (%s)", df(e.home))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("exit record written with %s", df(e.home))

	// wait answers while the disk is still full.
	start := time.Now()
	w := e.run("", "wait", "--json", "--timeout", "20s", id)
	var waited api.Run
	if err := json.Unmarshal([]byte(w.stdout), &waited); err != nil {
		t.Fatalf("wait: exit %d %q %q", w.code, w.stdout, w.stderr)
	}
	if w.code != 0 || waited.State != api.Succeeded || waited.Exit == nil || waited.Exit.Code != 0 {
		t.Fatalf("wait with the disk full: exit %d after %s, run %s (%s); want the run's own end, succeeded",
			w.code, time.Since(start).Round(time.Millisecond), waited.State, waited.Reason)
	}
	r := e.getRun(id)
	t.Logf("status with the disk full (%s): %s (%s)", df(e.home), r.State, r.Reason)
	if r.State != api.Succeeded || r.Exit == nil || r.Exit.Code != 0 || r.EndedAt == nil {
		t.Fatalf("status with the disk full: %s (%s), exit %+v; want succeeded from the exit record", r.State, r.Reason, r.Exit)
	}
	if !strings.Contains(r.Reason, "could not record") {
		t.Errorf("status with the disk full does not say the store could not record the end: %q", r.Reason)
	}
	if out := e.must("ls"); !strings.Contains(out, "succeeded") {
		t.Errorf("ls with the disk full does not show the run's end:\n%s", out)
	}

	// Space returns: the store catches up, and keeps it across a restart.
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	r = waitRun(t, e, id, func(r *api.Run) bool { return !strings.Contains(r.Reason, "could not record") })
	if r.State != api.Succeeded {
		t.Fatalf("after space returned: %s (%s)", r.State, r.Reason)
	}
	ended := *r.EndedAt
	e.killDaemon(syscall.SIGKILL)
	r = e.getRun(id)
	if r.State != api.Succeeded || r.EndedAt == nil || !r.EndedAt.Equal(ended) || strings.Contains(r.Reason, "could not record") {
		t.Fatalf("after a daemon restart: %s (%s) ended %v, want succeeded, ended %s", r.State, r.Reason, r.EndedAt, ended)
	}
}

// tmpfsHome mounts a 24 MiB tmpfs on e's home, so that a run can fill it
// (skipped where it cannot be mounted, unless RUNBOX_REQUIRE_TMPFS=1);
// the daemon is stopped before it is unmounted.
func tmpfsHome(t *testing.T, e *env) {
	t.Helper()
	if err := syscall.Mount("tmpfs", e.home, "tmpfs", 0, "size=24m"); err != nil {
		if os.Getenv("RUNBOX_REQUIRE_TMPFS") == "1" {
			t.Fatalf("mount a tmpfs home: %v", err)
		}
		t.Skipf("cannot mount a tmpfs home here (%v): set RUNBOX_REQUIRE_TMPFS=1 to make this fail", err)
	}
	t.Cleanup(func() {
		e.killDaemon(syscall.SIGTERM)
		_ = syscall.Unmount(e.home, syscall.MNT_DETACH)
	})
}
