package process_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/runbox/runbox/sandbox/runlog"
)

// A run's command is born inside the run's cgroup (where v1 has no
// CLONE_INTO_CGROUP, the supervisor forks it from a thread it moved there
// for the fork), and no thread of the supervisor is left there after the
// start: a recycled supervisor serving the next run must not count
// against, or be killed with, the last one. The command reads its own
// cgroups as its first act, before anything could move it.
func TestRunBornInItsCgroupSupervisorLeaves(t *testing.T) {
	if !cgroupsWritable() {
		t.Skip("no writable cgroup here")
	}
	sb, _ := standbySandbox(t)
	pid := recycledStandby(t, sb)
	// The same supervisor, run after run; --isolate full forks from the
	// thread that confines the command.
	for i, isolate := range []string{"", "full", ""} {
		spec := shSpec(t, "cat /proc/self/cgroup")
		spec.Limits.Pids = 64
		spec.Isolate = isolate
		e := wait(t, startOn(t, sb, spec, pid))
		out := string(streams(t, spec.LogPath)[runlog.Stdout])
		if isolate != "" && e.Code == 125 && strings.Contains(string(streams(t, spec.LogPath)[runlog.Meta]), "cannot be enforced") {
			t.Logf("run %d: --isolate %s cannot be enforced here", i, isolate)
		} else if e.Code != 0 {
			t.Fatalf("run %d: exit %+v, log %q", i, e, streams(t, spec.LogPath)[runlog.Meta])
		}
		// v1 pids where mounted (hybrid hosts: the limit is there), else
		// the unified line.
		want := ":pids:"
		if !strings.Contains(out, want) {
			want = "0::"
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, want) && !strings.Contains(line, "/runbox-") {
				t.Errorf("run %d: its command started outside its cgroup: %q (all: %q)", i, line, out)
			}
		}
		waitFor(t, "the supervisor to be the standby again", func() bool { return sb.StandbyPid() == pid })
		tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", task.Name(), "cgroup"))
			if err == nil && strings.Contains(string(b), "/runbox-") {
				t.Errorf("run %d: supervisor thread %s stayed in a run's cgroup: %q", i, task.Name(), b)
			}
		}
	}
}
