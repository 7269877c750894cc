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

// waitRun polls the run's status until cond holds (a minute at most).
func waitRun(t *testing.T, e *env, id string, cond func(*api.Run) bool) *api.Run {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
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
