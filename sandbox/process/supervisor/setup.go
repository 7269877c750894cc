package supervisor

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/runbox/runbox/sandbox/process/internal/proc"
	"github.com/runbox/runbox/sandbox/process/internal/protocol"
)

// setupCgroup makes the run's cgroup (see runCgroup) and says in the
// run's log how each limit is enforced (a CPU limit, like one the run
// asked for, is always said).
func (s *supervisor) setupCgroup() {
	limit, pids := s.spec.Limits.MemoryBytes, s.spec.Limits.Pids
	cgMem := limit
	if s.forceWatchdog {
		cgMem = 0
	}
	cpus := s.spec.Limits.CPUs
	name := fmt.Sprintf("runbox-%s-%d", safeName(s.spec.RunID), s.self)
	cg, err := (*runCgroup)(nil), errors.New("cgroups turned off (NoCgroup)")
	if !s.noCgroup {
		cg, err = newRunCgroup(name, cgLimits{mem: cgMem, pids: pids, cpus: cpus})
	}
	if err == nil {
		s.cg = cg
	}
	switch {
	case limit > 0 && s.cg != nil && s.cg.enforcesMem():
		s.note("memory limit %s enforced by %s", mib(uint64(limit)), s.cg.memKind())
	case limit > 0 && s.forceWatchdog:
		s.note("memory limit %s enforced by rss watchdog", mib(uint64(limit)))
	case limit > 0:
		s.note("memory limit %s enforced by rss watchdog (%v)", mib(uint64(limit)), cgErr(s.cg, err, "memory"))
	}
	// A limit the run asked for is reported like a memory limit; the
	// backend's default only where it could not be enforced (a line in
	// every run's output would be noise), and by Health.
	switch {
	case pids > 0 && s.cg != nil && s.cg.enforcesPids():
		if !s.pidsDefault {
			s.note("pids limit %d enforced by %s", pids, s.cg.pidsKind())
		}
	case pids > 0 && s.pidsDefault:
		// Said on every run of a user without a delegated cgroup: one line,
		// with the way to stop it.
		s.note("default pids limit %d not enforced: no pids cgroup (%s; %s=0 turns the default off)", pids, firstLine(cgErr(s.cg, err, "pids")), protocol.PidsEnv)
	case pids > 0:
		s.note("pids limit %d not enforced: no pids cgroup (%v)", pids, cgErr(s.cg, err, "pids"))
	}
	switch {
	case cpus > 0 && s.cg != nil && s.cg.enforcesCPU():
		s.note("cpu limit %g CPUs enforced by %s", cpus, s.cg.cpuKind())
	case cpus > 0:
		s.note("cpu limit %g CPUs not enforced: no cpu cgroup (%v)", cpus, cgErr(s.cg, err, "cpu"))
	}
	wdLimit := limit
	if s.cg != nil && s.cg.enforcesMem() {
		wdLimit = 0
	}
	s.wd = startWatchdog(s.self, s.cg, wdLimit)
}

// firstLine is err's first line: the cgroup errors list every hierarchy
// they tried, one per line.
func firstLine(err error) string {
	if err == nil {
		return "unknown"
	}
	l, _, _ := strings.Cut(err.Error(), "\n")
	return l
}

// cgErr is why the limit of controller ctl is not enforced by a cgroup.
func cgErr(cg *runCgroup, err error, ctl string) error {
	switch {
	case cg == nil:
		return err
	case ctl == "memory":
		return cg.memErr
	case ctl == "cpu":
		return cg.cpuErr
	}
	return cg.pidErr
}

// cgLimits are the limits a run's cgroup enforces; zero is none.
type cgLimits struct {
	mem, pids int64
	cpus      float64
}

// recordTree writes where the run's processes are (TreeFile), with the
// process group of a step just started (pgid > 0), before anything of
// the run can outlive this process. Failure is noted, not fatal: the
// cgroup, if any, still holds the run.
func (s *supervisor) recordTree(pgid int) {
	if s.tree.Start == 0 {
		s.tree.Start = s.selfStart
		if sid, err := unix.Getsid(0); err == nil && sid == s.self {
			s.tree.Sid = sid
		}
		if s.cg != nil {
			s.tree.Cgroups = s.cg.dirs()
		}
	}
	if pgid > 0 {
		st, err := proc.StartTime(pgid)
		if err != nil {
			return // already gone, and its group with it unless the session holds it
		}
		s.tree.Groups = append(s.tree.Groups, protocol.PidRecord{Pid: pgid, Start: st})
	}
	if err := protocol.ReplaceJSON(s.path(protocol.TreeFile), s.tree); err != nil {
		s.note("could not record the run's processes: %v", err)
	}
}
