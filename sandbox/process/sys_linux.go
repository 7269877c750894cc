package process

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// becomeSubreaper makes orphaned descendants (a grandchild whose parent
// exited, or one that called setsid) reparent to the supervisor instead of
// init, so they can still be found, killed and reaped.
func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// childAttr puts a child in its own process group and kills it if the
// supervisor dies: a run nobody supervises must not keep running.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// procStart returns the kernel start time of pid (clock ticks since boot,
// field 22 of /proc/pid/stat).
func procStart(pid int) (uint64, error) {
	f, err := procStat(pid)
	if err != nil {
		return 0, err
	}
	if f[0] == "Z" || f[0] == "X" {
		return 0, os.ErrNotExist // a zombie has ended
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// userHZ is the unit of the times in /proc/PID/stat: USER_HZ, 100 on every
// Linux architecture (the kernel converts to it whatever its own HZ).
const userHZ = 100

// procUsage reads a live process's resident set size and CPU time (user +
// system) from /proc/PID/statm and /proc/PID/stat: the two numbers the watchdog and Stats need,
// read directly rather than through gopsutil, whose package init reads
// /proc/stat twice in every start of the runbox binary (client and
// supervisor alike). ok is false for a process that is gone or a zombie.
func procUsage(pid int) (rss uint64, cpuSeconds float64, ok bool) {
	f, err := procStat(pid)
	if err != nil || f[0] == "Z" || f[0] == "X" {
		return 0, 0, false
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	// Resident pages from statm, as ps and gopsutil report them (the rss
	// field of stat is a cached counter that may lag by a few pages).
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0, 0, false
	}
	m := strings.Fields(string(b))
	if len(m) < 2 {
		return 0, 0, false
	}
	pages, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return pages * uint64(os.Getpagesize()), float64(utime+stime) / userHZ, true
}

// procStat returns the fields of /proc/PID/stat from the third (state) on,
// so f[i] is field i+3 of proc(5).
func procStat(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	// comm (field 2) may hold spaces and parentheses: fields start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 22 {
		return nil, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	return f, nil
}

// childless reports whether this process has no child at all, running or
// zombie. For a subreaper that means no descendant either, so it answers
// in one system call what descendants answers by reading a file per
// thread of the supervisor.
func childless() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return errors.Is(err, unix.ECHILD)
}

// descendants lists every live process below root (not root itself),
// walking /proc/PID/task/TID/children; with a subreaper root this is the
// whole tree, including escaped orphans.
func descendants(root int) []int {
	var out []int
	seen := map[int]bool{root: true}
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		if err != nil {
			continue
		}
		for _, t := range tasks {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/children")
			if err != nil {
				continue
			}
			for _, s := range strings.Fields(string(b)) {
				c, err := strconv.Atoi(s)
				if err != nil || seen[c] {
					continue
				}
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out
}

// reapAny lets the reaper wait for any child: as a subreaper the
// supervisor inherits orphans it never started and must reap them too.
const reapAny = true

// setPipeSize grows a pipe so a fast writer blocks less often; failure
// only costs throughput.
func setPipeSize(f *os.File, size int) {
	_, _ = unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, size)
}

// maxRSS converts rusage maxrss (KiB on Linux) to bytes.
func maxRSS(ru *syscall.Rusage) uint64 { return uint64(ru.Maxrss) * 1024 }

// watchExit returns a channel closed when pid (which must have started at
// start) has exited. It uses a pidfd in the runtime poller, so waiting costs
// no polling; kernels without pidfd fall back to polling.
func watchExit(pid int, start uint64) (<-chan struct{}, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil, os.ErrNotExist
		}
		return pollExit(pid, start)
	}
	// The pidfd pins the process: check it is still the supervisor we mean.
	if st, err := procStart(pid); err != nil || st != start {
		unix.Close(fd)
		return nil, os.ErrNotExist
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return pollExit(pid, start)
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return pollExit(pid, start)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer f.Close()
		_ = rc.Read(func(fd uintptr) bool {
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, err := unix.Poll(p, 0)
			return err != nil || n > 0
		})
	}()
	return done, nil
}

// pollExit is the fallback for watchExit.
func pollExit(pid int, start uint64) (<-chan struct{}, error) {
	if st, err := procStart(pid); err != nil || st != start {
		return nil, os.ErrNotExist
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for range t.C {
			if st, err := procStart(pid); err != nil || st != start {
				return
			}
		}
	}()
	return done, nil
}
