package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
)

// A sweep copies its workspace once, at its submission; each member makes
// its own copy from that one as it starts and removes it at its end. Seen
// from outside, through the real CLI and daemon, by polling the home's
// snapshot directories while the sweep runs.

// snapshotCopies counts the sweeps' copies of the workspace and the
// members' copies in home now (a member's directory is made empty at
// submission; its copy is the files in it).
func snapshotCopies(home string) (sweeps, members int) {
	shared, _ := filepath.Glob(filepath.Join(home, "sweeps", "*", "snapshot"))
	own, _ := filepath.Glob(filepath.Join(home, "runs", "*", "snapshot"))
	for _, d := range own {
		if ents, err := os.ReadDir(d); err == nil && len(ents) > 0 {
			members++
		}
	}
	return len(shared), members
}

// watchCopies polls the copies until stop is closed; it returns the most
// of each seen at once.
func watchCopies(home string, stop <-chan struct{}) func() (sweeps, members int) {
	var mu sync.Mutex
	var maxS, maxM int
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			s, m := snapshotCopies(home)
			mu.Lock()
			maxS, maxM = max(maxS, s), max(maxM, m)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() (int, int) {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return maxS, maxM
	}
}

const sweepJob = "echo version-1 $1; echo out $1 > out-$1.txt; sleep %s\n"

// checkSweepRan asserts every member ran the submitted script, its output
// came back into the workspace, its record says it ran a snapshot made
// from the sweep's, and that no copy is left once the sweep has ended.
func checkSweepRan(t *testing.T, e *env, id string, n int) {
	t.Helper()
	sw := e.sweep(id)
	if len(sw.Runs) != n || sw.Counts[api.Succeeded] != n {
		t.Fatalf("sweep %s: %d members, counts %v", id, len(sw.Runs), sw.Counts)
	}
	for _, m := range sw.Runs {
		x := m.Params["x"]
		if out := strings.TrimSpace(e.must("logs", m.ID)); out != "version-1 "+x {
			t.Errorf("member %s ran %q, want the script as submitted (version-1 %s)", x, out, x)
		}
		if b, err := os.ReadFile(filepath.Join(e.work, "out-"+x+".txt")); err != nil || string(b) != "out "+x+"\n" {
			t.Errorf("member %s's output in the workspace: %q %v", x, b, err)
		}
		r := e.getRun(m.ID)
		if r.Record == nil || r.Record.Snapshot == nil || r.Record.Snapshot.From == "" || len(r.Record.Snapshot.Returned) != 1 {
			t.Errorf("member %s's record of its snapshot: %+v", x, r.Record)
		}
	}
	// The sweep's copy goes once its last member's end is recorded.
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, m := snapshotCopies(e.home)
		left, _ := filepath.Glob(filepath.Join(e.home, "runs", "*", "snapshot*"))
		if s == 0 && m == 0 && len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the sweep: %d sweep copies, %d member copies, left %v", s, m, left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSweepSharesOneSnapshot(t *testing.T) {
	e := newEnv(t)
	e.gitWork(map[string]string{"job.sh": strings.Replace(sweepJob, "%s", "0.3", 1)})
	stop := make(chan struct{})
	most := watchCopies(e.home, stop)
	id := strings.TrimSpace(e.must("sweep", "--parallel", "2", "--param", "x=a,b,c,d,e,f", "--", "sh", "job.sh", "{x}"))
	e.write("job.sh", "echo version-2 $1\n") // right after submission: no member may run it
	if s, _ := snapshotCopies(e.home); s != 1 {
		t.Errorf("%d sweep copies of the workspace just after submission, want 1", s)
	}
	e.must("sweep", "wait", id)
	close(stop)
	maxS, maxM := most()
	if maxS != 1 {
		t.Errorf("at most %d sweep copies at once, want 1", maxS)
	}
	if maxM > 2 || maxM == 0 {
		t.Errorf("at most %d member copies at once under --parallel 2, want 1 or 2", maxM)
	}
	checkSweepRan(t, e, id, 6)
}

// A daemon killed (-9) mid-sweep: the next one starts the members still
// pending from the sweep's copy, which is still there, with the code as
// submitted; and removes it when the last has ended.
func TestSweepSnapshotAcrossDaemonKill9(t *testing.T) {
	e := newEnv(t)
	e.gitWork(map[string]string{"job.sh": strings.Replace(sweepJob, "%s", "1", 1)})
	id := strings.TrimSpace(e.must("sweep", "--parallel", "2", "--param", "x=a,b,c,d,e,f", "--", "sh", "job.sh", "{x}"))
	e.write("job.sh", "echo version-2 $1\n")
	time.Sleep(300 * time.Millisecond) // the first two have started
	e.killDaemon(syscall.SIGKILL)
	if s, _ := snapshotCopies(e.home); s != 1 {
		t.Fatalf("%d sweep copies after kill -9, want 1", s)
	}
	if res := e.run("", "sweep", "wait", id); res.code != 0 {
		t.Fatalf("sweep wait after kill -9: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	checkSweepRan(t, e, id, 6)
}

// A retried member runs the workspace as it is when retried (the fix
// made since the sweep's submission), not the sweep's copy, though that
// copy is still there for a member still running; the sweep's copy goes
// once the retry and the rest have ended.
func TestSweepRetryTakesAFreshSnapshot(t *testing.T) {
	e := newEnv(t)
	e.gitWork(map[string]string{"job.sh": `echo version-1 $1; echo out $1 > out-$1.txt; test $1 != a || exit 3; while [ ! -e "$2" ]; do sleep 0.05; done` + "\n"})
	gate := filepath.Join(t.TempDir(), "go")
	id := strings.TrimSpace(e.must("sweep", "--parallel", "2", "--param", "x=a,b", "--", "sh", "job.sh", "{x}", gate))
	var failed string
	waitFor(t, func() bool {
		for _, m := range e.sweep(id).Runs {
			if m.Params["x"] == "a" && m.State == api.Failed {
				failed = m.ID
			}
		}
		return failed != ""
	})
	if s, _ := snapshotCopies(e.home); s != 1 {
		t.Fatalf("%d sweep copies while member b runs, want 1", s)
	}
	os.Remove(filepath.Join(e.work, "out-a.txt"))
	e.write("job.sh", "echo version-2 $1; echo out $1 > out-$1.txt\n")
	retry := strings.TrimSpace(e.must("retry", "-d", failed))
	e.must("wait", retry)
	if out := strings.TrimSpace(e.must("logs", retry)); out != "version-2 a" {
		t.Errorf("the retried member ran %q, want the fixed script (version-2 a)", out)
	}
	if sn := e.getRun(retry).Record.Snapshot; sn == nil || sn.From != "" {
		t.Errorf("the retry's snapshot: %+v, want its own copy", sn)
	}
	if b, err := os.ReadFile(filepath.Join(e.work, "out-a.txt")); err != nil || string(b) != "out a\n" {
		t.Errorf("the retry's output in the workspace: %q %v", b, err)
	}
	openGate(t, gate)
	e.must("sweep", "wait", id)
	if out := strings.TrimSpace(e.must("logs", memberRow(t, e.sweep(id), 1).ID)); out != "version-1 b" {
		t.Errorf("member b ran %q, want the script as submitted", out)
	}
	waitFor(t, func() bool { s, m := snapshotCopies(e.home); return s == 0 && m == 0 })
}

// A stopped sweep leaves no copy: the members it cancelled before they
// started never made one, the running member's is removed at its end,
// and so is the sweep's once none of its runs is left.
func TestSweepStopLeavesNoSnapshot(t *testing.T) {
	e := newEnv(t)
	e.gitWork(map[string]string{"job.sh": `while [ ! -e "$2" ]; do sleep 0.05; done` + "\n"})
	gate := filepath.Join(t.TempDir(), "go")
	id := strings.TrimSpace(e.must("sweep", "--parallel", "1", "--param", "x=a,b,c,d", "--", "sh", "job.sh", "{x}", gate))
	waitFor(t, func() bool { _, m := snapshotCopies(e.home); return m == 1 })
	if s, m := snapshotCopies(e.home); s != 1 || m != 1 {
		t.Fatalf("%d sweep copies and %d member copies with one member running, want 1 and 1", s, m)
	}
	e.run("", "sweep", "stop", id)
	e.run("", "sweep", "wait", id) // exits non-zero: members were cancelled
	if sw := e.sweep(id); sw.Counts[api.Cancelled] != 4 {
		t.Fatalf("after the stop: counts %v", sw.Counts)
	}
	waitFor(t, func() bool {
		s, m := snapshotCopies(e.home)
		left, _ := filepath.Glob(filepath.Join(e.home, "runs", "*", "snapshot*"))
		return s == 0 && m == 0 && len(left) == 0
	})
}
