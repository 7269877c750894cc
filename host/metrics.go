package host

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/runbox/runbox/sdk"
	"github.com/runbox/runbox/store"
)

// Metric history: the runner hands every progress state it publishes to
// its metricRecorder, which keeps a bounded history (store.MetricHistory)
// in memory and writes it to the store with the progress (at most once a
// second, and at the end). Readers of a live run get the in-memory copy, so
// a chart is never a second behind the bar.

// Series names for the progress itself, next to the plugin's metrics, so
// that rate and ETA can be explained from history.
const (
	SeriesPercent = "progress/percent"
	SeriesRate    = "progress/rate"
)

type metricRecorder struct {
	mu      sync.Mutex
	hist    *store.MetricHistory
	last    *sdk.Progress
	samples int64
	dirty   bool
	// hooked: the parser reports every update (updateNotifier), so the
	// states seen at flushes add nothing.
	hooked bool
	// resumed is the last step stored before a daemon restart: the
	// re-attached runner reads the log again from its start, and the steps
	// it already has are not added twice.
	resumed int64
}

// updateNotifier is a Parser that reports each update as it is merged.
type updateNotifier interface {
	OnUpdate(fn func(sdk.Progress))
}

// hookMetrics has the parser hand every update to the recorder, when it
// can: between two flushes a fast run may have printed many steps.
func (r *runner) hookMetrics() {
	n, ok := r.parser.(updateNotifier)
	if !ok {
		return
	}
	r.metrics.hooked = true
	n.OnUpdate(func(p sdk.Progress) {
		r.metrics.mu.Lock()
		r.metrics.sample(r.id, &p, r.e.cfg.Now())
		r.metrics.mu.Unlock()
	})
}

// resumeMetrics has a runner re-attached to a run after a daemon restart
// go on from the history stored so far: the log is read again from its
// start, but a long one partly skipped (maxParseLag), and a history rebuilt
// from it would replace a complete one.
func (r *runner) resumeMetrics(ctx context.Context) {
	h, err := r.e.cfg.Store.Metrics(ctx, r.id)
	if err != nil || len(h.Series) == 0 {
		return
	}
	r.metrics.mu.Lock()
	defer r.metrics.mu.Unlock()
	r.metrics.hist = h
	for _, s := range h.Series {
		if n := len(s.Points); n > 0 {
			r.metrics.resumed = max(r.metrics.resumed, s.Points[n-1].Step)
		}
	}
}

// sample records st when it differs from the last state recorded. m.mu is
// held.
func (m *metricRecorder) sample(runID string, st *sdk.Progress, now time.Time) {
	if m.hist == nil {
		m.hist = &store.MetricHistory{RunID: runID}
	}
	if !newSample(m.last, st) {
		return
	}
	m.samples++
	step := st.Step
	if step == 0 {
		step = m.samples // a plugin with no step: samples in order
	}
	if m.resumed > 0 {
		if step <= m.resumed {
			c := *st
			m.last = &c
			return // stored before the restart
		}
		m.resumed = 0
	}
	for name, v := range st.Metrics {
		m.hist.Add(name, step, now, v)
	}
	if st.Percentage != 0 {
		m.hist.Add(SeriesPercent, step, now, st.Percentage)
	}
	if st.Rate != 0 {
		m.hist.Add(SeriesRate, step, now, st.Rate)
	}
	c := *st
	m.last = &c
	m.dirty = len(m.hist.Series) > 0
}

// observeMetrics records the state published at a flush (when the parser
// does not report each update), and stores the history when persist is
// set and something is new.
func (r *runner) observeMetrics(ctx context.Context, st *sdk.Progress, persist bool) {
	m := &r.metrics
	m.mu.Lock()
	if st != nil && !m.hooked {
		m.sample(r.id, st, r.e.cfg.Now())
	}
	var save *store.MetricHistory
	if persist && m.dirty {
		save = m.hist.Clone()
		m.dirty = false
	}
	m.mu.Unlock()
	if save == nil {
		return
	}
	if err := r.e.cfg.Store.PutMetrics(ctx, save); err != nil && ctx.Err() == nil {
		r.e.log.Warn("run: save metrics", "run", r.id, "err", err)
	}
}

// newSample reports whether b is a new point of history after a: a new step
// or new metric values (a message or an ETA alone is not). A NaN metric
// that stays NaN is no new value (NaN != NaN would make every flush one).
func newSample(a, b *sdk.Progress) bool {
	if len(b.Metrics) == 0 && b.Percentage == 0 && b.Rate == 0 {
		return false
	}
	if a == nil || a.Step != b.Step || a.Percentage != b.Percentage || len(a.Metrics) != len(b.Metrics) {
		return true
	}
	for k, v := range b.Metrics {
		if w, ok := a.Metrics[k]; !ok || w != v && !(math.IsNaN(w) && math.IsNaN(v)) {
			return true
		}
	}
	return false
}

func (r *runner) metricsSnapshot() *store.MetricHistory {
	r.metrics.mu.Lock()
	defer r.metrics.mu.Unlock()
	if r.metrics.hist == nil {
		return nil
	}
	return r.metrics.hist.Clone()
}

// Metrics returns the metric history of a run (id or unique prefix): live
// from memory while the run goes on, from the store after. names selects
// series; none means all.
func (e *Engine) Metrics(ctx context.Context, id string, names ...string) (*store.Run, *store.MetricHistory, error) {
	run, err := e.Get(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if rn := e.runner(run.ID); rn != nil {
		if h := rn.metricsSnapshot(); h != nil && len(h.Series) > 0 {
			if len(names) > 0 {
				sel := &store.MetricHistory{RunID: h.RunID, Dropped: h.Dropped}
				for _, n := range names {
					if s := h.Get(n); s != nil {
						sel.Series = append(sel.Series, s)
					}
				}
				h = sel
			}
			return run, h, nil
		}
	}
	h, err := e.cfg.Store.Metrics(ctx, run.ID, names...)
	return run, h, err
}

// MetricNames lists the series a run has (live or stored).
func (e *Engine) MetricNames(ctx context.Context, runID string) ([]string, error) {
	if rn := e.runner(runID); rn != nil {
		if h := rn.metricsSnapshot(); h != nil && len(h.Series) > 0 {
			return h.Names(), nil
		}
	}
	return e.cfg.Store.MetricNames(ctx, runID)
}
