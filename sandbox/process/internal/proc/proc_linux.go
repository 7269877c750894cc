package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// StartTime returns the kernel start time of pid (clock ticks since boot,
// field 22 of /proc/pid/stat); os.ErrNotExist for a zombie, which has
// ended.
func StartTime(pid int) (uint64, error) {
	f, err := stat(pid)
	if err != nil {
		return 0, err
	}
	if f[0] == "Z" || f[0] == "X" {
		return 0, os.ErrNotExist
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// userHZ is the unit of the times in /proc/PID/stat: USER_HZ, 100 on every
// Linux architecture (the kernel converts to it whatever its own HZ).
const userHZ = 100

// Usage reads a live process's resident set size and CPU time (user +
// system) from /proc/PID/statm and /proc/PID/stat: the two numbers the
// watchdog and Stats need, read directly rather than through gopsutil,
// whose package init reads /proc/stat twice in every start of the runbox
// binary (client and supervisor alike). ok is false for a process that is
// gone or a zombie.
func Usage(pid int) (rss uint64, cpuSeconds float64, ok bool) {
	f, err := stat(pid)
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

// stat returns the fields of /proc/PID/stat from the third (state) on,
// so f[i] is field i+3 of proc(5).
func stat(pid int) ([]string, error) {
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

// Descendants lists every live process below root (not root itself),
// walking /proc/PID/task/TID/children; with a subreaper root this is the
// whole tree, including escaped orphans.
func Descendants(root int) []int {
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

// WatchExit returns a channel closed when pid (which must have started at
// start) has exited; os.ErrNotExist if it is not that process now. It
// uses a pidfd in the runtime poller, so waiting costs no polling;
// kernels without pidfd fall back to polling.
func WatchExit(pid int, start uint64) (<-chan struct{}, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil, os.ErrNotExist
		}
		return pollExit(pid, start, 100*time.Millisecond)
	}
	// The pidfd pins the process: check it is still the one we mean.
	if st, err := StartTime(pid); err != nil || st != start {
		unix.Close(fd)
		return nil, os.ErrNotExist
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return pollExit(pid, start, 100*time.Millisecond)
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return pollExit(pid, start, 100*time.Millisecond)
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

// Ids returns a live process's process group, session and start time;
// os.ErrNotExist for a zombie (it has ended; killing it does nothing).
func Ids(pid int) (pgid, sid int, start uint64, err error) {
	f, err := stat(pid)
	if err != nil {
		return 0, 0, 0, err
	}
	if f[0] == "Z" || f[0] == "X" {
		return 0, 0, 0, os.ErrNotExist
	}
	pgid, err1 := strconv.Atoi(f[2])
	sid, err2 := strconv.Atoi(f[3])
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return 0, 0, 0, fmt.Errorf("parse /proc/%d/stat: %w", pid, err)
	}
	return pgid, sid, start, nil
}

// All lists the pids of every process (not thread) there is.
func All() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]int, 0, len(ents))
	for _, e := range ents {
		if p, err := strconv.Atoi(e.Name()); err == nil && e.IsDir() {
			out = append(out, p)
		}
	}
	return out
}
