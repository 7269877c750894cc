package api

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/runbox/runbox/sdk"
)

// Metrics is the metric history of a run: GET /v1/runs/{id}/metrics
// (?name=loss&name=lr selects series; none means all).
type Metrics struct {
	RunID string `json:"run_id"`
	// ShortID is the run's number (see Run.ShortID).
	ShortID string `json:"short_id,omitempty"`
	State   string `json:"state"`
	// Names lists every series the run has, selected or not, so that a
	// client asking for a name that does not exist can say which do.
	Names  []string       `json:"names"`
	Series []MetricSeries `json:"series"`
	// Dropped counts samples of metric names over the per-run limit.
	Dropped int64 `json:"dropped,omitempty"`
}

// MetricSeries is one metric, in columns (as charting libraries take
// them). A long run's series is downsampled: each point is a bucket of
// Span samples with its last finite value, minimum and maximum. A bucket
// with no finite sample has the last value the plugin reported, NaN or
// ±Inf (JSON "NaN", "Infinity", "-Infinity"), and null Min and Max;
// NonFinite counts the non-finite samples of each bucket (absent when the
// series has none).
type MetricSeries struct {
	Name      string     `json:"name"`
	Total     int64      `json:"total"` // samples recorded
	Span      int64      `json:"span"`  // samples per bucket
	Step      []int64    `json:"step"`
	Time      []float64  `json:"time"` // unix seconds
	Value     []Float    `json:"value"`
	Min       []*float64 `json:"min"`
	Max       []*float64 `json:"max"`
	NonFinite []int64    `json:"non_finite,omitempty"`
}

// Float is a float64 that may be NaN or ±Inf: a JSON number, or the
// strings "NaN", "Infinity", "-Infinity" as sdk.Metrics writes them.
// null (how daemons before this wrote a gap) reads as NaN.
type Float float64

// MarshalJSON writes f as a metric value.
func (f Float) MarshalJSON() ([]byte, error) { return sdk.AppendMetricValue(nil, float64(f)), nil }

// UnmarshalJSON reads a number, one of the three strings, or null.
func (f *Float) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		*f = Float(math.NaN())
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, ok := sdk.ParseMetricString(s)
		if !ok {
			return fmt.Errorf("api: metric value %q: want a number, \"NaN\", \"Infinity\" or \"-Infinity\"", s)
		}
		*f = Float(v)
		return nil
	}
	return json.Unmarshal(b, (*float64)(f))
}
