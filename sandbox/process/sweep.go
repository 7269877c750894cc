package process

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/runbox/runbox/sandbox/process/internal/proc"
	"github.com/runbox/runbox/sandbox/process/internal/protocol"
)

// Bounds on sweeping a lost run: processes that fork while being killed
// are caught by the next pass; one that cannot be killed (D state) is
// given up on after sweepTimeout and reported.
const (
	sweepTimeout = 5 * time.Second
	sweepPoll    = 20 * time.Millisecond
	cgroupRoot   = "/sys/fs/cgroup/"
	cgroupPrefix = "runbox-"
)

// sweepLost kills whatever is left of a run whose supervisor is gone
// without an exit record (kill -9, OOM killer, crash): nothing else ever
// would. The run's processes are those in its cgroup and those in its
// session or its steps' process groups (protocol.TreeRecord), started
// after its supervisor. It returns how many it ended.
func sweepLost(stateDir string, sup protocol.PidRecord) (int, error) {
	var tr protocol.TreeRecord
	if err := protocol.ReadJSON(filepath.Join(stateDir, protocol.TreeFile), &tr); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, nil // it ended before starting anything
		}
		return 0, err
	}
	if sup.Pid == 0 || tr.Start != sup.Start {
		return 0, fmt.Errorf("%s does not belong to supervisor pid %d", protocol.TreeFile, sup.Pid)
	}
	if st, err := proc.StartTime(sup.Pid); err == nil && st == sup.Start {
		return 0, fmt.Errorf("supervisor pid %d is alive", sup.Pid)
	}
	m := newMatcher(tr)
	ended := map[protocol.PidRecord]bool{}
	deadline := time.Now().Add(sweepTimeout)
	for {
		left := m.members()
		for _, p := range left {
			if syscall.Kill(p.Pid, syscall.SIGKILL) == nil {
				ended[p] = true
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return len(ended), fmt.Errorf("%d process(es) of the run survived SIGKILL for %s", len(left), sweepTimeout)
		}
		time.Sleep(sweepPoll)
	}
	for _, d := range m.cgroups {
		removeCgroup(d)
	}
	return len(ended), nil
}

// treeMatcher tells the run's processes from any other.
type treeMatcher struct {
	start   uint64       // the supervisor's: nothing of the run is older
	sid     int          // 0: the session is not (or no longer) the run's
	groups  map[int]bool // the steps' groups still the run's
	cgroups []string
	self    int
}

// newMatcher drops what pid reuse may have made someone else's: a
// session or group id names the run's only while no other process holds
// that pid (the kernel hands out no pid still used as a session or group
// id, so a new holder means the run's is wholly gone). Cgroup directories
// are taken only where runbox makes them.
func newMatcher(tr protocol.TreeRecord) *treeMatcher {
	m := &treeMatcher{start: tr.Start, groups: map[int]bool{}, self: os.Getpid()}
	heldBy := func(id int, start uint64) bool {
		st, err := proc.StartTime(id)
		return err == nil && st != start
	}
	if tr.Sid > 0 && !heldBy(tr.Sid, tr.Start) {
		m.sid = tr.Sid
	}
	for _, g := range tr.Groups {
		if g.Pid > 0 && !heldBy(g.Pid, g.Start) {
			m.groups[g.Pid] = true
		}
	}
	for _, d := range tr.Cgroups {
		d = filepath.Clean(d)
		if strings.HasPrefix(d, cgroupRoot) && strings.HasPrefix(filepath.Base(d), cgroupPrefix) {
			m.cgroups = append(m.cgroups, d)
		}
	}
	return m
}

// members lists the run's live processes (zombies have ended already).
func (m *treeMatcher) members() []protocol.PidRecord {
	var out []protocol.PidRecord
	seen := map[int]bool{m.self: true, 1: true}
	take := func(pid int, inCgroup bool) {
		if seen[pid] {
			return
		}
		seen[pid] = true
		pgid, sid, start, err := proc.Ids(pid)
		if err != nil || start < m.start {
			return
		}
		if inCgroup || (m.sid > 0 && sid == m.sid) || m.groups[pgid] {
			out = append(out, protocol.PidRecord{Pid: pid, Start: start})
		}
	}
	for _, d := range m.cgroups {
		for _, p := range cgroupPids(d) {
			take(p, true)
		}
	}
	if m.sid > 0 || len(m.groups) > 0 {
		for _, p := range proc.All() {
			take(p, false)
		}
	}
	return out
}

func cgroupPids(dir string) []int {
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(f); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// removeCgroup removes a run's emptied cgroup directory; the killed may
// still be exiting (EBUSY for a moment).
func removeCgroup(dir string) {
	for i := 0; i < 50; i++ {
		if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
