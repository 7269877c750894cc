package main

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
)

// Fault: the daemon killed with SIGKILL while runs go on -> after the restart each run keeps its original started_at (not the re-attach time), during the run and after its end, and its ended_at is the exit record's
func TestDaemonKilledMidRunKeepsStartTimes(t *testing.T) {
	e := newEnv(t)
	// One run well under way (its start record has long reached the
	// disk), one killed around its start (its "running" write may not
	// have: its start then comes from its sandbox's records).
	early := strings.TrimSpace(e.must("run", "-d", "--", "sh", "-c", "sleep 3"))
	waitFor(t, func() bool { return e.getRun(early).State == api.Running })
	time.Sleep(500 * time.Millisecond)
	late := strings.TrimSpace(e.must("run", "-d", "--", "sh", "-c", "sleep 2.5"))
	e.killDaemon(syscall.SIGKILL)
	killed := time.Now()
	time.Sleep(300 * time.Millisecond) // any start time taken now would be visibly late

	first := e.getRun(early) // starts a new daemon, which re-attaches
	if first.StartedAt == nil || !first.StartedAt.Before(killed) {
		t.Fatalf("run %s after the restart: started_at %v, want its start before the kill at %s (%s)",
			early, first.StartedAt, killed.Format(time.StampMilli), first.Reason)
	}
	// The late run may not have reached its sandbox before the kill (then
	// the new daemon starts it, and its start is after the kill); its
	// times are checked against its exit record below.
	for _, id := range []string{early, late} {
		e.run("", "wait", id)
		r := e.getRun(id)
		if r.State != api.Succeeded || r.StartedAt == nil || r.EndedAt == nil || r.Exit == nil {
			t.Fatalf("run %s: %s (%s) started %v ended %v", id, r.State, r.Reason, r.StartedAt, r.EndedAt)
		}
		// An ended run's times are its exit record's (the supervisor's).
		if !r.StartedAt.Equal(r.Exit.StartedAt) {
			t.Errorf("run %s: started_at %s, its exit record says %s",
				id, r.StartedAt.Format(time.StampMilli), r.Exit.StartedAt.Format(time.StampMilli))
		}
		// The daemon's own start, shown while it ran, was taken a few
		// milliseconds after the supervisor's, not at the re-attach.
		if d := first.StartedAt.Sub(r.Exit.StartedAt).Abs(); id == early && d > 200*time.Millisecond {
			t.Errorf("run %s: started_at %s while it ran, its exit record says %s",
				id, first.StartedAt.Format(time.StampMilli), r.Exit.StartedAt.Format(time.StampMilli))
		}
		if !r.EndedAt.Equal(r.Exit.EndedAt) {
			t.Errorf("run %s: ended_at %s, its exit record says %s", id, r.EndedAt, r.Exit.EndedAt)
		}
		if d := r.EndedAt.Sub(*r.StartedAt); d < 2*time.Second || d > 10*time.Second {
			t.Errorf("run %s took %s by its times, want its sleep's length", id, d)
		}
	}
}
