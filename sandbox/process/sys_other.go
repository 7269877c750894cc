//go:build !linux

package process

import (
	"os"
	"syscall"
	"time"

	"github.com/shirou/gopsutil/v4/process"
)

// becomeSubreaper is Linux-only; elsewhere an orphan that left the process
// group reparents to init and only the group kill reaches it.
func becomeSubreaper() error { return nil }

func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// procStart returns the process creation time (ms since the epoch).
func procStart(pid int) (uint64, error) {
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return 0, os.ErrNotExist
	}
	ct, err := p.CreateTime()
	if err != nil {
		return 0, err
	}
	return uint64(ct), nil
}

// procUsage reads a live process's resident set size and CPU time.
func procUsage(pid int) (rss uint64, cpuSeconds float64, ok bool) {
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return 0, 0, false
	}
	mi, err := p.MemoryInfo()
	if err != nil {
		return 0, 0, false
	}
	if t, err := p.Times(); err == nil {
		cpuSeconds = t.User + t.System
	}
	return mi.RSS, cpuSeconds, true
}

// childless is Linux's shortcut for "descendants is empty"; elsewhere
// the tree is always walked.
func childless() bool { return false }

// descendants lists every live process below root (not root itself).
func descendants(root int) []int {
	var out []int
	queue := []int32{int32(root)}
	for len(queue) > 0 {
		p := &process.Process{Pid: queue[0]}
		queue = queue[1:]
		kids, err := p.Children()
		if err != nil {
			continue
		}
		for _, k := range kids {
			out = append(out, int(k.Pid))
			queue = append(queue, k.Pid)
		}
	}
	return out
}

func setPipeSize(*os.File, int) {}

// reapAny is false without a subreaper: only registered children are ours
// to wait for (gopsutil may run ps(1) in this process on darwin).
const reapAny = false

// maxRSS converts rusage maxrss (bytes on darwin) to bytes.
func maxRSS(ru *syscall.Rusage) uint64 { return uint64(ru.Maxrss) }

// watchExit polls: kqueue would do, but one poll a second per recovered run
// is cheap and this path only serves re-attached runs.
func watchExit(pid int, start uint64) (<-chan struct{}, error) {
	if st, err := procStart(pid); err != nil || st != start {
		return nil, os.ErrNotExist
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for range t.C {
			if st, err := procStart(pid); err != nil || st != start {
				return
			}
		}
	}()
	return done, nil
}
