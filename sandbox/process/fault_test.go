package process_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/runbox/runbox/sandbox/process"
	"github.com/runbox/runbox/sandbox/runlog"
)

// sessionTreeScript is treeScript without its setsid escaper: with no
// cgroup, a process that left the run's session and groups cannot be told
// from any other, and is out of the sweep's reach (the cgroup case below
// catches it).
const sessionTreeScript = `
: > pids
sh -c 'echo $$ >> pids; exec sleep 1000' &
(sh -c 'echo $$ >> pids; exec sleep 1000' &)
sh -c 'trap "" TERM; echo $$ >> pids; while :; do sleep 1; done' &
while [ "$(wc -l < pids)" -lt 3 ]; do sleep 0.01; done
echo up
wait
`

// Fault: kill -9 of a run's supervisor (cgroup, or session/groups only; seen by Wait or by Recover) -> run lost, every process of it killed, the reason counts them
func TestFaultSupervisorKilledLeavesNothing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    process.Options
		script  string
		procs   int
		recover bool
	}{
		{name: "cgroup", script: treeScript, procs: 4},
		{name: "cgroup recovered", script: treeScript, procs: 4, recover: true},
		{name: "session", opts: process.Options{NoCgroup: true}, script: sessionTreeScript, procs: 3},
		{name: "session recovered", opts: process.Options{NoCgroup: true}, script: sessionTreeScript, procs: 3, recover: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.opts.NoCgroup == false && !cgroupsWritable() {
				t.Skip("no writable cgroup here: the session cases cover the sweep")
			}
			sb := newSandbox(tc.opts)
			spec := shSpec(t, tc.script)
			h := start(t, sb, spec)
			waitUp(t, spec)
			pids := readPids(t, filepath.Join(spec.Workdir, "pids"))
			t.Cleanup(func() {
				for _, p := range pids {
					if alive(p) {
						syscall.Kill(p, syscall.SIGKILL)
					}
				}
			})
			sup, _ := strconv.Atoi(h.Ref())
			if err := syscall.Kill(sup, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			if tc.recover {
				// A daemon that was not there when it died: a fresh
				// backend finds the run from its state directory.
				waitFor(t, "the supervisor to go", func() bool { return !alive(sup) })
				var err error
				if h, err = newSandbox(tc.opts).Recover(context.Background(), spec); err != nil {
					t.Fatal(err)
				}
			}
			e := wait(t, h)
			if !e.Lost {
				t.Fatalf("exit %+v, want lost", e)
			}
			// The direct child dies with the supervisor (pdeathsig); the
			// rest is the sweep's: at least the others must be counted.
			if !strings.Contains(e.Error, "ended ") || strings.Contains(e.Error, "ended 0 ") {
				t.Errorf("reason %q does not count the processes ended", e.Error)
			}
			for _, p := range pids {
				if alive(p) {
					t.Errorf("pid %d outlived its lost run", p)
				}
			}
			if again := wait(t, h); again.Error != e.Error {
				t.Errorf("second Wait says %q, first %q", again.Error, e.Error)
			}
		})
	}
}

// TestSweepSparesOthers: a process outside the run (another session, not
// in its groups) is left alone by the sweep of a lost run.
func TestSweepSparesOthers(t *testing.T) {
	outsider := startOutsider(t, "sleep", "1000")
	sb := newSandbox(process.Options{NoCgroup: true})
	spec := shSpec(t, "echo up; exec sleep 1000")
	h := start(t, sb, spec)
	waitFor(t, "the run", func() bool {
		return strings.Contains(string(streams(t, spec.LogPath)[runlog.Stdout]), "up")
	})
	sup, _ := strconv.Atoi(h.Ref())
	syscall.Kill(sup, syscall.SIGKILL)
	if e := wait(t, h); !e.Lost {
		t.Fatalf("exit %+v, want lost", e)
	}
	if !alive(outsider) {
		t.Fatal("the sweep killed a process that is not the run's")
	}
}

func startOutsider(t *testing.T, argv ...string) int {
	t.Helper()
	p, err := os.StartProcess("/bin/"+argv[0], argv, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill(); p.Wait() })
	return p.Pid
}

// cgroupsWritable reports whether this process may make a cgroup (as the
// supervisor would, below its own).
func cgroupsWritable() bool {
	for _, d := range []string{"/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		dir := filepath.Join(d, "runbox-probe-"+strconv.Itoa(os.Getpid()))
		if os.Mkdir(dir, 0o755) == nil {
			os.Remove(dir)
			return true
		}
	}
	return false
}

// Fault: a process run forks past its pids limit (the backend's default) -> the forks beyond it fail; Health names the default and what enforces it
func TestFaultDefaultPidsLimit(t *testing.T) {
	if !cgroupsWritable() {
		t.Skip("no writable cgroup here: the pids limit cannot be enforced")
	}
	sb := newSandbox(process.Options{DefaultPids: 16})
	spec := shSpec(t, `for i in $(seq 40); do sleep 30 & done`)
	e := wait(t, start(t, sb, spec))
	logs := streams(t, spec.LogPath)
	meta := string(logs[runlog.Meta])
	if strings.Contains(meta, "pids limit") {
		t.Errorf("log says the default pids limit is not enforced: %q", meta)
	}
	if h := sb.Health(context.Background()); !strings.Contains(h.Info["pids_limit"], "16 by default") || !strings.Contains(h.Info["pids_limit"], "enforced by cgroup") {
		t.Errorf("health says pids_limit %q", h.Info["pids_limit"])
	}
	// A fork past the limit fails (EAGAIN): the shell says so and gives up.
	if e.Code == 0 {
		t.Errorf("40 forks under a limit of 16 all succeeded: exit %+v", e)
	}
	if !strings.Contains(strings.ToLower(string(logs[runlog.Stderr])), "fork") {
		t.Errorf("no fork failed under a limit of 16: stderr %q", logs[runlog.Stderr])
	}
}

// A pids limit below the supervisor's own thread count still starts the
// run (on cgroup v1 the supervisor starts it from inside the cgroup).
func TestTinyPidsLimitStarts(t *testing.T) {
	if !cgroupsWritable() {
		t.Skip("no writable cgroup here")
	}
	spec := shSpec(t, "echo started")
	spec.Limits.Pids = 2
	e := wait(t, start(t, newSandbox(process.Options{}), spec))
	if out := string(streams(t, spec.LogPath)[runlog.Stdout]); e.Code != 0 || out != "started\n" {
		t.Fatalf("exit %+v, stdout %q, log %q", e, out, streams(t, spec.LogPath)[runlog.Meta])
	}
}
