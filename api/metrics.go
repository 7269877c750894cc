package api

// Metrics is the metric history of a run: GET /v1/runs/{id}/metrics
// (?name=loss&name=lr selects series; none means all).
type Metrics struct {
	RunID string `json:"run_id"`
	State string `json:"state"`
	// Names lists every series the run has, selected or not, so that a
	// client asking for a name that does not exist can say which do.
	Names  []string       `json:"names"`
	Series []MetricSeries `json:"series"`
	// Dropped counts samples of metric names over the per-run limit.
	Dropped int64 `json:"dropped,omitempty"`
}

// MetricSeries is one metric, in columns (as charting libraries take
// them). A long run's series is downsampled: each point is a bucket of
// Span samples with its last value, minimum and maximum. A null value is a
// gap (the plugin reported NaN or ±Inf).
type MetricSeries struct {
	Name  string     `json:"name"`
	Total int64      `json:"total"` // samples recorded
	Span  int64      `json:"span"`  // samples per bucket
	Step  []int64    `json:"step"`
	Time  []float64  `json:"time"` // unix seconds
	Value []*float64 `json:"value"`
	Min   []*float64 `json:"min"`
	Max   []*float64 `json:"max"`
}
