package supervisor

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/runbox/runbox/sandbox/process/internal/proc"
)

// Sampling intervals: tight when the watchdog enforces a limit, relaxed
// when it only tracks the peak for Usage.
const (
	watchdogEvery = 100 * time.Millisecond
	peakEvery     = 250 * time.Millisecond
)

// treePids is every process of the run: the supervisor's descendants plus
// anything in the run's cgroup (which catches what reparenting might hide).
func treePids(root int, cg *runCgroup) []int {
	pids := proc.Descendants(root)
	if cg == nil {
		return pids
	}
	seen := make(map[int]bool, len(pids))
	for _, p := range pids {
		seen[p] = true
	}
	for _, p := range cg.pidList() {
		if !seen[p] && p != root {
			pids = append(pids, p)
		}
	}
	return pids
}

// runPids is treePids(s.self, s.cg), without walking /proc when the
// supervisor has no child at all (the common case once a step is over)
// and the cgroup, if any, is empty.
func (s *supervisor) runPids() []int {
	if childless() && (s.cg == nil || len(s.cg.pidList()) == 0) {
		return nil
	}
	return treePids(s.self, s.cg)
}

// watchdog samples the run's tree in the background: it keeps the peak
// RSS for Usage and, with a limit, reports the first sample above it.
type watchdog struct {
	peak     atomic.Uint64
	exceeded chan uint64 // the RSS that broke the limit; sent at most once
	stop     chan struct{}
	done     chan struct{}
}

func startWatchdog(root int, cg *runCgroup, limit int64) *watchdog {
	w := &watchdog{
		exceeded: make(chan uint64, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	every := peakEvery
	if limit > 0 {
		every = watchdogEvery
	}
	go func() {
		defer close(w.done)
		t := time.NewTicker(every)
		defer t.Stop()
		ctx := context.Background()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
			rss := proc.Sample(ctx, treePids(root, cg)).RSSBytes
			if rss > w.peak.Load() {
				w.peak.Store(rss)
			}
			if limit > 0 && rss > uint64(limit) {
				w.exceeded <- rss
				limit = 0 // report once; keep tracking the peak
			}
		}
	}()
	return w
}

func (w *watchdog) close() {
	close(w.stop)
	<-w.done
}
