//go:build !linux

package proc

import (
	"os"
	"time"

	"github.com/shirou/gopsutil/v4/process"
)

// StartTime returns the process creation time (ms since the epoch).
func StartTime(pid int) (uint64, error) {
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

// Usage reads a live process's resident set size and CPU time.
func Usage(pid int) (rss uint64, cpuSeconds float64, ok bool) {
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

// Descendants lists every live process below root (not root itself).
func Descendants(root int) []int {
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

// WatchExit polls: kqueue would do, but a poll every 200ms per recovered
// run is cheap and this path only serves re-attached runs.
func WatchExit(pid int, start uint64) (<-chan struct{}, error) {
	return pollExit(pid, start, 200*time.Millisecond)
}

// Ids is not known here without /proc: a run's leftovers are found
// through its supervisor alone.
func Ids(pid int) (pgid, sid int, start uint64, err error) {
	return 0, 0, 0, os.ErrNotExist
}

// All lists nothing here (see Ids).
func All() []int { return nil }
