package supervisor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const cgroupRoot = "/sys/fs/cgroup"

// runCgroup is the run's own cgroup, created below the supervisor's so it
// inherits whatever limits the daemon runs under. It is made for every
// run where one can be, limits or not: its process list is how the run's
// processes are found (and, should the supervisor die, killed by the
// daemon) whatever session or group they moved to. On cgroup v2 it is one
// directory; on v1 one per controller used (pids also tracks, memory
// only with a memory limit, cpu only with a CPU limit).
type runCgroup struct {
	v2     string   // unified directory, "" if none
	fd     int      // v2: directory fd for CLONE_INTO_CGROUP
	v1     []string // v1 directories the child starts in
	v1From []string // the supervisor's own directory beside each of v1
	track  string   // directory whose cgroup.procs lists the run
	mem    string   // directory enforcing the memory limit, "" if none
	pids   string   // directory enforcing the pids limit, "" if none
	pidMax int64    // the pids limit written there
	cpu    string   // directory enforcing the CPU limit, "" if none
	memErr error    // why the memory limit is not enforced here
	pidErr error    // why the pids limit is not enforced here
	cpuErr error    // why the CPU limit is not enforced here
}

// cpuPeriod is the CFS period a CPU limit is a quota of (100 ms, as
// Docker's --cpus); the kernel takes no quota under 1 ms.
const (
	cpuPeriod   = 100_000
	cpuMinQuota = 1_000
)

// cpuQuota is the CFS quota, in microseconds per cpuPeriod, of a limit
// of cpus CPUs.
func cpuQuota(cpus float64) int64 { return max(int64(cpus*cpuPeriod+0.5), cpuMinQuota) }

// newRunCgroup makes the run's cgroup, with each limit of l (memory,
// pids, CPU) that is set enforced where its controller can be used: the
// unified hierarchy first, then v1. It fails only when no cgroup at all
// could be made; a limit no controller could take is left to the caller
// (memErr, pidErr, cpuErr).
func newRunCgroup(name string, l cgLimits) (*runCgroup, error) {
	own, err := ownCgroups()
	if err != nil {
		return nil, err
	}
	mem, pids := l.mem, l.pids
	c := &runCgroup{fd: -1}
	var errs []error
	if err := c.makeV2(own, name, l); err != nil {
		errs = append(errs, fmt.Errorf("v2: %w", err))
	}
	if mem > 0 && c.mem == "" {
		dir, err := c.makeV1(own, "memory", name, "memory.limit_in_bytes", strconv.FormatInt(mem, 10))
		if err == nil {
			c.mem = dir
			// Without these the limit only pushes the run into swap.
			_ = writeCg(dir, "memory.memsw.limit_in_bytes", strconv.FormatInt(mem, 10))
			_ = writeCg(dir, "memory.swappiness", "0")
		} else {
			c.memErr = errors.Join(c.memErr, fmt.Errorf("v1: %w", err))
		}
	}
	if c.pids == "" && (pids > 0 || c.track == "") {
		dir, err := c.makeV1(own, "pids", name)
		if err == nil && pids > 0 {
			if err = writeCg(dir, "pids.max", strconv.FormatInt(pids, 10)); err == nil {
				c.pids, c.pidMax = dir, pids
			}
		}
		if err == nil && c.track == "" {
			c.track = dir
		}
		if err != nil {
			c.pidErr = errors.Join(c.pidErr, fmt.Errorf("v1: %w", err))
		}
	}
	if l.cpus > 0 && c.cpu == "" {
		dir, err := c.makeV1(own, "cpu", name,
			"cpu.cfs_period_us", strconv.Itoa(cpuPeriod), "cpu.cfs_quota_us", strconv.FormatInt(cpuQuota(l.cpus), 10))
		if err == nil {
			c.cpu = dir
		} else {
			c.cpuErr = errors.Join(c.cpuErr, fmt.Errorf("v1: %w", err))
		}
	}
	if c.track == "" && len(c.v1) > 0 {
		c.track = c.v1[0]
	}
	if c.track == "" {
		c.remove()
		return nil, fmt.Errorf("no writable cgroup: %w", errors.Join(append(errs, c.memErr, c.pidErr, c.cpuErr)...))
	}
	return c, nil
}

// makeV2 makes the unified directory and sets what limits its controllers
// allow; on a hybrid host the unified hierarchy may have no controller and
// still track the run.
func (c *runCgroup) makeV2(own map[string]string, name string, l cgLimits) error {
	mem, pids := l.mem, l.pids
	path, ok := own[""]
	if !ok {
		return errors.New("no unified hierarchy")
	}
	parent := filepath.Join(unifiedRoot(), path)
	ctls, err := os.ReadFile(filepath.Join(parent, "cgroup.controllers"))
	if err != nil {
		return err
	}
	enable := func(ctl string) error {
		if !hasWord(ctls, ctl) {
			return fmt.Errorf("%s controller not available", ctl)
		}
		sub, _ := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
		if hasWord(sub, ctl) {
			return nil
		}
		// Fails unless parent is the root cgroup or holds no processes.
		if err := writeCg(parent, "cgroup.subtree_control", "+"+ctl); err != nil {
			return fmt.Errorf("enable %s controller: %w", ctl, err)
		}
		return nil
	}
	memOK, pidsOK, cpuOK := false, false, false
	if mem > 0 {
		if c.memErr = enable("memory"); c.memErr == nil {
			memOK = true
		}
	}
	if pids > 0 {
		if c.pidErr = enable("pids"); c.pidErr == nil {
			pidsOK = true
		}
	}
	if l.cpus > 0 {
		if c.cpuErr = enable("cpu"); c.cpuErr == nil {
			cpuOK = true
		}
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		c.memErr, c.pidErr, c.cpuErr = errors.Join(c.memErr, err), errors.Join(c.pidErr, err), errors.Join(c.cpuErr, err)
		return err
	}
	c.v2, c.track = dir, dir
	if memOK {
		if err := writeCg(dir, "memory.max", strconv.FormatInt(mem, 10)); err == nil {
			c.mem = dir
			_ = writeCg(dir, "memory.swap.max", "0")
		} else {
			c.memErr = err
		}
	}
	if pidsOK {
		if err := writeCg(dir, "pids.max", strconv.FormatInt(pids, 10)); err == nil {
			c.pids = dir
		} else {
			c.pidErr = err
		}
	}
	if cpuOK {
		if err := writeCg(dir, "cpu.max", fmt.Sprintf("%d %d", cpuQuota(l.cpus), cpuPeriod)); err == nil {
			c.cpu = dir
		} else {
			c.cpuErr = err
		}
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	c.fd = fd
	return nil
}

// makeV1 makes the run's directory in the v1 hierarchy of ctl and writes
// the limit's files in it, given as name, value pairs, in order.
func (c *runCgroup) makeV1(own map[string]string, ctl, name string, files ...string) (string, error) {
	path, ok := own[ctl]
	if !ok {
		return "", fmt.Errorf("no v1 %s controller", ctl)
	}
	dir := filepath.Join(cgroupRoot, ctl, path, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	c.v1 = append(c.v1, dir)
	c.v1From = append(c.v1From, filepath.Dir(dir))
	for i := 0; i+1 < len(files); i += 2 {
		if err := writeCg(dir, files[i], files[i+1]); err != nil {
			return dir, err
		}
	}
	return dir, nil
}

// ownCgroups maps controller ("" for the unified hierarchy) to the
// supervisor's cgroup path, from /proc/self/cgroup.
func ownCgroups() (map[string]string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, ctl := range strings.Split(parts[1], ",") {
			m[ctl] = parts[2]
		}
	}
	return m, nil
}

// cgKind names the hierarchy dir is in.
func cgKind(dir string) string {
	if strings.HasPrefix(dir, unifiedRoot()+"/") {
		return "cgroup v2"
	}
	return "cgroup v1"
}

func (c *runCgroup) memKind() string    { return cgKind(c.mem) }
func (c *runCgroup) pidsKind() string   { return cgKind(c.pids) }
func (c *runCgroup) cpuKind() string    { return cgKind(c.cpu) }
func (c *runCgroup) enforcesMem() bool  { return c.mem != "" }
func (c *runCgroup) enforcesPids() bool { return c.pids != "" }
func (c *runCgroup) enforcesCPU() bool  { return c.cpu != "" }

// dirs is every directory of the cgroup, for the tree record: the daemon
// kills what they hold if the supervisor dies.
func (c *runCgroup) dirs() []string {
	var out []string
	if c.v2 != "" {
		out = append(out, c.v2)
	}
	return append(out, c.v1...)
}

// attr makes a child start inside the v2 directory (clone3
// CLONE_INTO_CGROUP, so not one page is charged elsewhere).
func (c *runCgroup) attr(a *syscall.SysProcAttr) {
	if c.fd >= 0 {
		a.UseCgroupFD = true
		a.CgroupFD = c.fd
	}
}

// enter moves the calling thread into the v1 directories for as long as
// it starts a child, so the child is born inside (v1 has no
// CLONE_INTO_CGROUP): moved after it started, it could fork first, and
// what it forked would escape the run's limits. leave moves the thread
// back. The caller holds the thread (runtime.LockOSThread) from enter
// until leave has returned, and forks from it: a child is born in the
// cgroups of the thread that forked it.
//
// Only the thread moves ("0" to the v1 tasks file: the writer itself),
// not the whole supervisor (its pid to cgroup.procs). Moving a whole
// thread group takes the kernel's global cgroup_threadgroup_rwsem for
// writing, which waits for an RCU grace period: 8–18 ms a move on a
// loaded 2-vCPU machine, twice a run, the largest share of `runbox run
// -- true` (BENCHMARKS.md, issue 23). Moving the writing thread alone
// skips that lock (the kernel needs no thread-group stability for it) and
// takes tens of microseconds. The Go runtime starts no thread from a
// locked one (it asks its template thread), so no other supervisor
// thread is made inside.
//
// While inside, that one thread counts against a v1 pids limit: the
// limit is raised by one while it is inside and set back once it has
// left, so the run can overshoot its limit by one process at most, for
// the few microseconds between its start and leave, and every process it
// makes is in the cgroup.
//
// The files leave writes are opened here, before the thread moves: a
// thread that confines itself after enter (--isolate) may no longer reach
// them by name, and the kernel checks a cgroup write against the opener.
func (c *runCgroup) enter() (leave func() error, err error) {
	var back []*os.File // the supervisor's own tasks file beside each of v1
	var max *os.File    // the run's pids.max, while raised
	entered := 0
	leave = func() error {
		var errs []error
		for i, f := range back {
			if i < entered {
				_, err := f.Write([]byte("0"))
				errs = append(errs, err)
			}
			f.Close()
		}
		if max != nil {
			_, err := max.Write([]byte(strconv.FormatInt(c.pidMax, 10)))
			errs = append(errs, err, max.Close())
		}
		return errors.Join(errs...)
	}
	for _, d := range c.v1From {
		f, err := os.OpenFile(filepath.Join(d, "tasks"), os.O_WRONLY, 0)
		if err != nil {
			return leave, err
		}
		back = append(back, f)
	}
	if c.pids != "" && slices.Contains(c.v1, c.pids) {
		f, err := os.OpenFile(filepath.Join(c.pids, "pids.max"), os.O_WRONLY, 0)
		if err != nil {
			return leave, err
		}
		if _, err := f.Write([]byte(strconv.FormatInt(c.pidMax+1, 10))); err != nil {
			f.Close()
			return leave, err
		}
		max = f
	}
	for _, d := range c.v1 {
		if err := writeCg(d, "tasks", "0"); err != nil {
			return leave, err
		}
		entered++
	}
	return leave, nil
}

// add moves a just-started child into the v1 directories, should enter
// have failed. ESRCH: it is gone already, nothing to hold.
func (c *runCgroup) add(pid int) error {
	var errs []error
	for _, d := range c.v1 {
		err := writeCg(d, "cgroup.procs", strconv.Itoa(pid))
		if !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c *runCgroup) pidList() []int { return cgroupPids(c.track) }

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

// oomKills is how many processes the kernel OOM killer killed in the
// cgroup, and whether it could tell: the memory controller's counters
// were there to read (cgroup v2 memory.events oom_kill; v1
// memory.oom_control oom_kill, or on kernels before 4.13, which lack
// that line, memory.failcnt 0: the limit was never reached, so nothing
// was killed for it). A run with no memory cgroup is not checked.
func (c *runCgroup) oomKills() (n int, checked bool) {
	if c.mem == "" {
		return 0, false
	}
	file := "memory.oom_control"
	if c.mem == c.v2 {
		file = "memory.events"
	}
	b, err := os.ReadFile(filepath.Join(c.mem, file))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			return n, err == nil
		}
	}
	if file == "memory.oom_control" {
		b, err := os.ReadFile(filepath.Join(c.mem, "memory.failcnt"))
		if n, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && n == 0 {
			return 0, true
		}
	}
	return 0, false
}

func (c *runCgroup) remove() {
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
	for _, d := range c.dirs() {
		removeCgroup(d)
	}
}

// removeCgroup removes an emptied cgroup directory. The last processes
// may still be exiting: EBUSY for a moment.
func removeCgroup(dir string) {
	for i := 0; i < 50; i++ {
		if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// limitCgroup says which hierarchy would take a limit of controller ctl
// for a run here: "cgroup v2", "cgroup v1", or "" when neither is
// writable.
func limitCgroup(ctl string) string {
	own, err := ownCgroups()
	if err != nil {
		return ""
	}
	if p, ok := own[""]; ok {
		base := unifiedRoot()
		ctls, _ := os.ReadFile(filepath.Join(base, p, "cgroup.controllers"))
		if hasWord(ctls, ctl) && unix.Access(filepath.Join(base, p), unix.W_OK) == nil {
			return "cgroup v2"
		}
	}
	if p, ok := own[ctl]; ok && unix.Access(filepath.Join(cgroupRoot, ctl, p), unix.W_OK) == nil {
		return "cgroup v1"
	}
	return ""
}

// MemoryLimitMode says how a memory limit would be enforced here, for Health.
func MemoryLimitMode() string {
	switch m := limitCgroup("memory"); m {
	case "":
		return "rss watchdog"
	case "cgroup v2":
		return "cgroup v2 (rss watchdog if the controller cannot be enabled)"
	default:
		return m
	}
}

// PidsLimitMode says how a pids limit would be enforced here, for Health.
func PidsLimitMode() string {
	if m := limitCgroup("pids"); m != "" {
		return m
	}
	return "not enforced (no writable pids cgroup)"
}

// CPULimitMode says how a CPU limit (--cpus) would be enforced here, the
// cpu controller's CFS quota, or "" when it would not be.
func CPULimitMode() string {
	if m := limitCgroup("cpu"); m != "" {
		return m + " (CFS quota)"
	}
	return ""
}

// unifiedRoot is where the cgroup v2 hierarchy is mounted: the cgroup
// root, or its "unified" directory in the hybrid layout.
func unifiedRoot() string {
	if _, err := os.Lstat(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil {
		return cgroupRoot
	}
	return filepath.Join(cgroupRoot, "unified")
}

func writeCg(dir, file, val string) error {
	return os.WriteFile(filepath.Join(dir, file), []byte(val), 0o644)
}

func hasWord(b []byte, w string) bool {
	for _, f := range strings.Fields(string(b)) {
		if f == w {
			return true
		}
	}
	return false
}
