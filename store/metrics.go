package store

import (
	"math"
	"sort"
	"time"
)

// Metric history: every metric a progress plugin reports, kept per run as a
// series of (step, time, value). A series is bounded: it holds at most
// MaxSeriesPoints buckets, and when it is full adjacent buckets are merged
// in pairs (each then covers twice as many samples). A bucket keeps the
// minimum and the maximum of what it covers as well as its last value, so a
// million-step run keeps its shape — spikes and dips survive — in a few
// tens of kilobytes, and the store never grows with the length of a run.

// MaxSeriesPoints bounds the buckets of one series.
const MaxSeriesPoints = 1024

// MaxRunSeries bounds the series of one run: a plugin reporting a new
// metric name on every line must not grow the store without limit.
const MaxRunSeries = 32

// MetricPoint is one bucket of a series. A bucket of a single sample has
// Min == Max == Value. NaN and ±Inf samples (a loss gone NaN is what a
// user most needs to see) are counted in NonFinite and kept as they are
// (NaN, +Inf or -Inf) in Value when the bucket has no finite sample; they
// never count for Min and Max, which are NaN when there is no finite one.
type MetricPoint struct {
	Step  int64     // last step the bucket covers
	Time  time.Time // wall time of that step
	Value float64   // last finite value in the bucket, else its last sample
	Min   float64
	Max   float64
	N     int64 // samples the bucket covers
	// NonFinite counts the samples of the bucket that were NaN or ±Inf, so
	// that one survives downsampling next to finite ones.
	NonFinite int64
}

// Series is one metric of one run.
type Series struct {
	Name string
	// Span is how many samples a full bucket covers (1, 2, 4, ...).
	Span   int64
	Points []MetricPoint
	// Total counts every sample ever added.
	Total int64
}

// MetricHistory is the metric series of one run.
type MetricHistory struct {
	RunID  string
	Series []*Series // sorted by name
	// Dropped counts samples of metric names over MaxRunSeries.
	Dropped int64
}

// Get returns the series called name, or nil.
func (h *MetricHistory) Get(name string) *Series {
	i := sort.Search(len(h.Series), func(i int) bool { return h.Series[i].Name >= name })
	if i < len(h.Series) && h.Series[i].Name == name {
		return h.Series[i]
	}
	return nil
}

// Names lists the series names, sorted.
func (h *MetricHistory) Names() []string {
	out := make([]string, len(h.Series))
	for i, s := range h.Series {
		out[i] = s.Name
	}
	return out
}

// Add records one sample of metric name. It reports false when the sample
// was dropped because the run already has MaxRunSeries series.
func (h *MetricHistory) Add(name string, step int64, t time.Time, v float64) bool {
	i := sort.Search(len(h.Series), func(i int) bool { return h.Series[i].Name >= name })
	if i == len(h.Series) || h.Series[i].Name != name {
		if h.full(name) { // record.go: the machine's series have their own bound
			h.Dropped++
			return false
		}
		h.Series = append(h.Series, nil)
		copy(h.Series[i+1:], h.Series[i:])
		h.Series[i] = &Series{Name: name, Span: 1}
	}
	h.Series[i].Add(step, t, v)
	return true
}

// Clone returns a deep copy of h (for readers while the runner adds).
func (h *MetricHistory) Clone() *MetricHistory {
	c := &MetricHistory{RunID: h.RunID, Dropped: h.Dropped, Series: make([]*Series, len(h.Series))}
	for i, s := range h.Series {
		cs := *s
		cs.Points = append([]MetricPoint(nil), s.Points...)
		c.Series[i] = &cs
	}
	return c
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Add records one sample.
func (s *Series) Add(step int64, t time.Time, v float64) {
	if s.Span < 1 {
		s.Span = 1
	}
	s.Total++
	n := len(s.Points)
	if n > 0 && s.Points[n-1].N < s.Span {
		p := &s.Points[n-1]
		p.Step, p.Time, p.N = step, t, p.N+1
		if !finite(v) {
			p.NonFinite++
			if !finite(p.Value) {
				p.Value = v // no finite sample yet: the latest kind of gap
			}
		} else {
			p.Value = v
			if !finite(p.Min) || v < p.Min {
				p.Min = v
			}
			if !finite(p.Max) || v > p.Max {
				p.Max = v
			}
		}
		return
	}
	p := MetricPoint{Step: step, Time: t, Value: v, Min: v, Max: v, N: 1}
	if !finite(v) {
		p.Min, p.Max, p.NonFinite = math.NaN(), math.NaN(), 1
	}
	s.Points = append(s.Points, p)
	if len(s.Points) >= MaxSeriesPoints {
		s.halve()
	}
}

// halve merges adjacent buckets in pairs and doubles the span.
func (s *Series) halve() {
	out := s.Points[:0]
	for i := 0; i < len(s.Points); i += 2 {
		a := s.Points[i]
		if i+1 < len(s.Points) {
			a = mergePoints(a, s.Points[i+1])
		}
		out = append(out, a)
	}
	s.Points = out
	s.Span *= 2
}

func mergePoints(a, b MetricPoint) MetricPoint {
	m := MetricPoint{Step: b.Step, Time: b.Time, N: a.N + b.N, Value: b.Value, Min: a.Min, Max: a.Max,
		NonFinite: a.NonFinite + b.NonFinite}
	if !finite(m.Value) && finite(a.Value) {
		m.Value = a.Value
	}
	if finite(b.Min) && (!finite(m.Min) || b.Min < m.Min) {
		m.Min = b.Min
	}
	if finite(b.Max) && (!finite(m.Max) || b.Max > m.Max) {
		m.Max = b.Max
	}
	return m
}
