package host

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

// What the machine was doing: each run's CPU, memory and I/O (and the
// GPUs', where nvidia-smi answers) sampled from its backend (the process
// tree below the supervisor, the container's stats API) and kept as metric
// history under SysPrefix, beside the run's own metrics and bounded like
// them (store.MaxSeriesPoints buckets that keep min and max: the peak
// survives downsampling).

// SysPrefix starts the names of machine metrics.
const SysPrefix = store.SysPrefix

// Machine series.
const (
	SysCPU      = SysPrefix + "cpu_percent"
	SysRSS      = SysPrefix + "rss_mib"
	SysRead     = SysPrefix + "read_mib_per_s"
	SysWrite    = SysPrefix + "write_mib_per_s"
	SysGPU      = SysPrefix + "gpu_util_percent"
	SysGPUMem   = SysPrefix + "gpu_memory_mib"
	sysSaveEach = 5 * time.Second
)

// sysInterval samples every second at first, more sparsely as a run goes
// on: the first minute is where most runs fail, and a week-long run must
// not cost a sample a second for its whole life.
func sysInterval(elapsed time.Duration) time.Duration {
	switch {
	case elapsed < time.Minute:
		return time.Second
	case elapsed < 10*time.Minute:
		return 2 * time.Second
	case elapsed < time.Hour:
		return 5 * time.Second
	default:
		return 15 * time.Second
	}
}

// firstSysSample is how long after its start a run is first sampled. A
// run that ends sooner has no machine figures: a sample of a process a
// moment old says nothing its exit does not, and taking it (a walk of
// /proc, nvidia-smi's lookup, a store write at the end) competed for the
// CPU with the run's own start and end, on the path of every short run.
const firstSysSample = 200 * time.Millisecond

// sampleSys samples the run until the returned stop is called; stop
// stores what was sampled.
func (r *runner) sampleSys(ctx context.Context, h sandbox.Handle) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	start := r.e.cfg.Now()
	go func() {
		defer close(finished)
		t := time.NewTimer(firstSysSample)
		defer t.Stop()
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if run, err := r.e.cfg.Store.GetRun(ctx, r.id); err == nil && run.StartedAt != nil {
			start = *run.StartedAt // re-attached: steps go on from the run's start
		}
		s := sysSampler{r: r, h: h, start: start, gpu: gpuSampler()}
		t.Reset(0)
		for {
			select {
			case <-done:
				s.save(ctx)
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if !s.sample(ctx) {
				s.save(ctx)
				return
			}
			t.Reset(sysInterval(r.e.cfg.Now().Sub(start)))
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

type sysSampler struct {
	r       *runner
	h       sandbox.Handle
	start   time.Time
	gpu     func(ctx context.Context) (util, memMiB float64, ok bool)
	prev    sandbox.Stats
	prevAt  time.Time
	n       int
	failed  int
	savedAt time.Time
	dirty   bool
}

// sample takes one sample; false: the backend samples nothing (Slurm
// without accounting), which is said once in the run's events.
func (s *sysSampler) sample(ctx context.Context) bool {
	st, err := s.h.Stats(ctx)
	now := s.r.e.cfg.Now()
	if err != nil {
		s.failed++
		if s.n == 0 && s.failed >= 3 {
			s.r.note(ctx, "sys/ metrics: none for this run: "+err.Error())
			return false
		}
		return true
	}
	step := int64(now.Sub(s.start) / time.Second)
	add := func(h *store.MetricHistory) {
		h.Add(SysRSS, step, now, float64(st.RSSBytes)/(1<<20))
		if s.n > 0 {
			dt := now.Sub(s.prevAt).Seconds()
			if dt > 0 {
				h.Add(SysCPU, step, now, max(0, st.CPUSeconds-s.prev.CPUSeconds)/dt*100)
				h.Add(SysRead, step, now, float64(sub(st.ReadBytes, s.prev.ReadBytes))/(1<<20)/dt)
				h.Add(SysWrite, step, now, float64(sub(st.WriteBytes, s.prev.WriteBytes))/(1<<20)/dt)
			}
		} else if el := now.Sub(s.start).Seconds(); el > 0 {
			h.Add(SysCPU, step, now, st.CPUSeconds/el*100)
		}
		if s.gpu != nil {
			if util, mem, ok := s.gpu(ctx); ok {
				h.Add(SysGPU, step, now, util)
				h.Add(SysGPUMem, step, now, mem)
			}
		}
	}
	m := &s.r.metrics
	m.mu.Lock()
	if m.hist == nil {
		m.hist = &store.MetricHistory{RunID: s.r.id}
	}
	add(m.hist)
	m.mu.Unlock()
	s.prev, s.prevAt = st, now
	s.n++
	s.dirty = true
	if now.Sub(s.savedAt) >= sysSaveEach {
		s.save(ctx)
	}
	return true
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0 // a process of the tree ended: its counts left the sum
	}
	return a - b
}

// save stores the run's whole history (its own metrics with the machine's).
func (s *sysSampler) save(ctx context.Context) {
	if !s.dirty {
		return
	}
	s.dirty = false
	s.savedAt = s.r.e.cfg.Now()
	m := &s.r.metrics
	m.mu.Lock()
	h := m.hist.Clone()
	m.mu.Unlock()
	if err := s.r.e.cfg.Store.PutMetrics(context.WithoutCancel(ctx), h); err != nil && ctx.Err() == nil {
		s.r.e.log.Warn("run: save sys metrics", "run", s.r.id, "err", err)
	}
}

// gpuSampler reads the GPUs' utilisation and memory in use (all of them:
// nvidia-smi does not split utilisation by process) where nvidia-smi is
// on PATH; nil elsewhere.
func gpuSampler() func(ctx context.Context) (float64, float64, bool) {
	smi, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return nil
	}
	return func(ctx context.Context) (float64, float64, bool) {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, smi, "--query-gpu=utilization.gpu,memory.used", "--format=csv,noheader,nounits").Output()
		if err != nil {
			return 0, 0, false
		}
		var util, mem float64
		var n int
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Split(l, ",")
			if len(f) != 2 {
				continue
			}
			u, err1 := strconv.ParseFloat(strings.TrimSpace(f[0]), 64)
			m, err2 := strconv.ParseFloat(strings.TrimSpace(f[1]), 64)
			if err1 != nil || err2 != nil {
				continue
			}
			util += u
			mem += m
			n++
		}
		if n == 0 {
			return 0, 0, false
		}
		return util / float64(n), mem, true
	}
}
