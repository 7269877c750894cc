package supervisor

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
)

// exitStatus is what wait4 reported for one child.
type exitStatus struct {
	ws syscall.WaitStatus
	ru syscall.Rusage
}

// reaper is the only code in the supervisor that waits for children. As a
// subreaper the supervisor also inherits orphans it never started, and
// wait4(-1) for those would race os/exec's Wait for ours; so no Cmd.Wait is
// ever called and every exit is routed from here to whoever registered it.
type reaper struct {
	mu      sync.Mutex
	waiting map[int]chan exitStatus
	died    chan struct{} // pulsed (non-blocking) on every reaped child
	sigs    chan os.Signal

	// Usage of every child reaped since the last takeUsage (wait4's
	// rusage covers a child and the descendants it waited for): the
	// RUSAGE_CHILDREN of one run, however many runs the process serves.
	cpu  float64
	peak uint64
}

func newReaper() *reaper {
	r := &reaper{
		waiting: map[int]chan exitStatus{},
		died:    make(chan struct{}, 1),
		sigs:    make(chan os.Signal, 1),
	}
	signal.Notify(r.sigs, syscall.SIGCHLD)
	go func() {
		for range r.sigs {
			r.reap()
		}
	}()
	return r
}

// start starts c and registers it; holding mu across Start means a child
// that exits at once is looked up only after it is registered.
func (r *reaper) start(c *exec.Cmd) (<-chan exitStatus, int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := c.Start(); err != nil {
		return nil, 0, err
	}
	pid := c.Process.Pid
	ch := make(chan exitStatus, 1)
	r.waiting[pid] = ch
	// Nothing will Wait on it; release the pidfd os/exec may hold.
	_ = c.Process.Release()
	// A thread blocked in wait4 for this child is woken by the kernel as
	// it exits: sooner than SIGCHLD through the runtime's signal handling
	// to reap. Whichever reaps it first delivers its status.
	go func() {
		var st exitStatus
		for {
			got, err := syscall.Wait4(pid, &st.ws, 0, &st.ru)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err == nil && got == pid {
				r.deliver(pid, st)
			}
			return // ECHILD: the SIGCHLD path reaped it
		}
	}()
	return ch, pid, nil
}

// deliver routes a reaped child's status to whoever started it, and
// counts its usage.
func (r *reaper) deliver(pid int, st exitStatus) {
	r.mu.Lock()
	ch := r.waiting[pid]
	delete(r.waiting, pid)
	r.cpu += tvSeconds(st.ru.Utime) + tvSeconds(st.ru.Stime)
	r.peak = max(r.peak, maxRSS(&st.ru))
	r.mu.Unlock()
	if ch != nil {
		ch <- st
	}
	select {
	case r.died <- struct{}{}:
	default:
	}
}

// takeUsage returns the CPU time and the largest peak RSS of the children
// reaped since the last call, and starts counting afresh.
func (r *reaper) takeUsage() (cpuSeconds float64, peakRSS uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cpuSeconds, peakRSS = r.cpu, r.peak
	r.cpu, r.peak = 0, 0
	return cpuSeconds, peakRSS
}

func (r *reaper) reap() {
	for {
		pid, st, err := r.next()
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
		r.deliver(pid, st)
	}
}

func (r *reaper) next() (int, exitStatus, error) {
	var st exitStatus
	if reapAny {
		pid, err := syscall.Wait4(-1, &st.ws, syscall.WNOHANG, &st.ru)
		return pid, st, err
	}
	r.mu.Lock()
	pids := make([]int, 0, len(r.waiting))
	for p := range r.waiting {
		pids = append(pids, p)
	}
	r.mu.Unlock()
	for _, p := range pids {
		pid, err := syscall.Wait4(p, &st.ws, syscall.WNOHANG, &st.ru)
		if err == nil && pid > 0 {
			return pid, st, nil
		}
	}
	return 0, st, nil
}
