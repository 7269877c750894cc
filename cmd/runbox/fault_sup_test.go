//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
)

// Fault: kill -9 of a detached run's supervisor (daemon up, or down and restarted) -> run lost, its background processes killed, the reason counts them
func TestFaultSupervisorKilled(t *testing.T) {
	for _, tc := range []struct {
		name    string
		restart bool // the daemon is down when the supervisor dies
	}{
		{name: "daemon up"},
		{name: "daemon restarted", restart: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			id := strings.TrimSpace(e.must("run", "-d", "--shell", "--", "sleep 401 & sleep 501 & wait"))
			r := waitRun(t, e, id, func(r *api.Run) bool { return r.State == api.Running && r.Ref != "" })
			sup, err := strconv.Atoi(r.Ref)
			if err != nil {
				t.Fatalf("ref %q: %v", r.Ref, err)
			}
			var sleeps []int
			deadline := time.Now().Add(30 * time.Second)
			for len(sleeps) < 2 && time.Now().Before(deadline) {
				sleeps = sessionSleeps(sup)
				time.Sleep(20 * time.Millisecond)
			}
			if len(sleeps) != 2 {
				t.Fatalf("found %d sleeps of supervisor %d, want 2", len(sleeps), sup)
			}
			t.Cleanup(func() {
				for _, p := range sleeps {
					syscall.Kill(p, syscall.SIGKILL)
				}
			})
			if tc.restart {
				e.killDaemon(syscall.SIGKILL)
			}
			if err := syscall.Kill(sup, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			// status starts a new daemon when the old one is gone; it
			// recovers the run from its state directory.
			r = waitRun(t, e, id, func(r *api.Run) bool { return r.State == api.Lost })
			if !strings.Contains(r.Reason, "ended 2 leftover process(es)") {
				t.Errorf("reason %q does not say the 2 sleeps were ended", r.Reason)
			}
			for _, p := range sleeps {
				if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p)); err == nil && !bytes.Contains(b, []byte(") Z")) {
					t.Errorf("sleep pid %d outlived its lost run", p)
				}
			}
		})
	}
}

// waitRun polls the run's status until cond holds. A failed run is
// classified by the plugins, compiled cold in each fresh home: that may
// take minutes on a loaded machine.
func waitRun(t *testing.T, e *env, id string, cond func(*api.Run) bool) *api.Run {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		r := e.getRun(id)
		if cond(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s stuck: %s (%s)", id, r.State, r.Reason)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sessionSleeps lists the sleep processes in the session of sup (the
// supervisor leads its own).
func sessionSleeps(sup int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "stat"))
		if err != nil || !bytes.Contains(b, []byte("(sleep)")) {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 3 && f[3] == strconv.Itoa(sup) {
			out = append(out, pid)
		}
	}
	return out
}

// Fault: the run fills its home (a 24 MiB tmpfs: plugin cache ~10, store ~1, its reserve 5) and writes on, the daemon up or killed meanwhile -> its own end (exit 0: a failed run would wait on the plugins' cold compile) is recorded, not lost, the dropped output bytes are counted exactly, nothing is lost once space is back
func TestFaultDiskFull(t *testing.T) {
	for _, tc := range []struct {
		name string
		kill bool // kill -9 the daemon while the disk is full
	}{
		{name: "daemon up"},
		{name: "daemon killed", kill: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			tmpfsHome(t, e)
			fill := filepath.Join(e.home, "fill")
			// dd fills the disk; what the run prints then has nowhere to go;
			// the last dd takes what the log gave back (it cuts off a torn
			// record), so the run ends on a disk with no byte free.
			id := strings.TrimSpace(e.must("run", "-d", "--shell", "--",
				fmt.Sprintf("dd if=/dev/zero of=%[1]s bs=4k 2>/dev/null; echo full; seq 100000; echo done; dd if=/dev/zero of=%[1]s.2 bs=512 2>/dev/null; exit 0", fill)))
			var seq strings.Builder
			for i := 1; i <= 100000; i++ {
				fmt.Fprintf(&seq, "%d\n", i)
			}
			printed := int64(len("full\n") + seq.Len() + len("done\n"))

			// The run's end is on disk while the disk is still full.
			record := filepath.Join(e.home, "runs", id, "sandbox", "exit.json")
			deadline := time.Now().Add(time.Minute)
			for !fileExists(record) {
				if time.Now().After(deadline) {
					t.Fatalf("no exit record with the disk full (%s)", df(e.home))
				}
				time.Sleep(50 * time.Millisecond)
			}
			t.Logf("exit record written with %s", df(e.home))
			if tc.kill {
				e.killDaemon(syscall.SIGKILL)
			} else {
				// Long enough for the daemon to have offered the run's
				// end to its store, and been refused.
				time.Sleep(2 * time.Second)
			}
			for _, f := range []string{fill, fill + ".2"} {
				if err := os.Remove(f); err != nil {
					t.Fatalf("free the space: %v", err)
				}
			}
			check := func(r *api.Run) {
				t.Helper()
				if r.State != api.Succeeded || r.Exit == nil || r.Exit.Code != 0 || r.Exit.Lost {
					t.Fatalf("run %s: %s (%s), exit %+v; want the run's own end: succeeded, exit 0", id, r.State, r.Reason, r.Exit)
				}
				var dropped int64
				if _, err := fmt.Sscanf(r.Reason[strings.Index(r.Reason, "disk full: ")+len("disk full: "):], "%d", &dropped); err != nil || dropped == 0 {
					t.Fatalf("reason %q does not report the dropped output", r.Reason)
				}
				logged := int64(len(e.must("logs", "--raw", "--stream", "stdout", id)))
				if logged+dropped != printed {
					t.Errorf("%d bytes logged + %d dropped, the run printed %d", logged, dropped, printed)
				}
			}
			// Terminal, and recorded by the store: while the disk was full
			// the daemon showed the end from the exit record before the
			// store took it (it catches up within a second of space
			// returning), and a kill before that would test the catch-up,
			// not what a restart keeps.
			check(waitRun(t, e, id, func(r *api.Run) bool {
				return r.State.Terminal() && !strings.Contains(r.Reason, "could not record this end yet")
			}))
			// After a daemon restart the run is what it was, not lost.
			e.killDaemon(syscall.SIGKILL)
			check(e.getRun(id))
		})
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func df(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d of %d KiB free", st.Bavail*uint64(st.Bsize)>>10, st.Blocks*uint64(st.Bsize)>>10)
}
