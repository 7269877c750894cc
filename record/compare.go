package record

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/runbox/runbox/sdk"
)

// Row is one run in a comparison.
type Row struct {
	RunID       string            `json:"run_id"`
	Short       string            `json:"short_id,omitempty"`
	Name        string            `json:"name,omitempty"`
	State       string            `json:"state"`
	ExitCode    *int              `json:"exit_code,omitempty"`
	FailureCode string            `json:"failure_code,omitempty"`
	CreatedAt   time.Time         `json:"created_at"`
	Duration    float64           `json:"duration_seconds,omitempty"`
	Params      map[string]string `json:"params,omitempty"`
	Metrics     map[string]Metric `json:"metrics,omitempty"`
}

// Metric is a metric's last and best value in one run.
type Metric struct {
	Last float64 `json:"last"`
	// Best is the lowest value for a metric to minimise, the highest for
	// one to maximise; unset when the goal is unknown.
	Best *float64 `json:"best,omitempty"`
}

// MarshalJSON writes last and best as the metrics answer writes a
// metric's value (api.Float): a JSON number, or the strings "NaN",
// "Infinity", "-Infinity" for a run whose last value was not finite (JSON
// has no NaN: encoding/json refused the whole comparison). best is left
// out when unset, as when the run has no finite value of the metric.
func (m Metric) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, 48), `{"last":`...)
	b = sdk.AppendMetricValue(b, m.Last)
	if m.Best != nil {
		b = append(b, `,"best":`...)
		b = sdk.AppendMetricValue(b, *m.Best)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads what MarshalJSON writes (null reads as NaN).
func (m *Metric) UnmarshalJSON(b []byte) error {
	var raw struct {
		Last json.RawMessage `json:"last"`
		Best json.RawMessage `json:"best"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	last, err := metricValue(raw.Last)
	if err != nil {
		return fmt.Errorf("metric last: %w", err)
	}
	*m = Metric{Last: last}
	if len(raw.Best) > 0 && string(raw.Best) != "null" {
		best, err := metricValue(raw.Best)
		if err != nil {
			return fmt.Errorf("metric best: %w", err)
		}
		m.Best = &best
	}
	return nil
}

// metricValue is a number, "NaN", "Infinity", "-Infinity" or null (NaN).
func metricValue(b json.RawMessage) (float64, error) {
	if len(b) == 0 || string(b) == "null" {
		return math.NaN(), nil
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return 0, err
		}
		if f, ok := sdk.ParseMetricString(s); ok {
			return f, nil
		}
		return 0, fmt.Errorf("%q is not a metric value (a number, \"NaN\", \"Infinity\" or \"-Infinity\")", s)
	}
	var f float64
	err := json.Unmarshal(b, &f)
	return f, err
}

// Goal says whether lower or higher is better for a metric.
type Goal string

// Goals.
const (
	Min     Goal = "min"
	Max     Goal = "max"
	Unknown Goal = ""
)

// The package's regexps are compiled on first use, not at init: the thin
// client imports record on every start and most commands use none of
// them (compiling them all was about a tenth of a millisecond and 285
// allocations of every start; GODEBUG=inittrace=1).
var (
	minLike = lazyRegexp(`(?i)(loss|err|error|mse|mae|rmse|nll|perplexity|ppl|wer|cer|latency|time|regret|cost)`)
	maxLike = lazyRegexp(`(?i)(acc|accuracy|f1|auc|precision|recall|bleu|rouge|map|iou|dice|score|reward|return|top1|top5)`)
)

// lazyRegexp returns a function that compiles expr on its first call.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// GoalOf guesses a metric's goal from its name: min for loss-like names,
// max for accuracy-like ones. goals, when it names the metric, wins.
func GoalOf(name string, goals map[string]Goal) Goal {
	if g, ok := goals[name]; ok {
		return g
	}
	base := name
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	switch {
	case minLike().MatchString(base):
		return Min
	case maxLike().MatchString(base):
		return Max
	}
	return Unknown
}

// Summarise is a metric's last value and its best (from the buckets' min
// and max, which downsampling keeps exact).
func Summarise(last float64, lo, hi float64, g Goal) Metric {
	m := Metric{Last: last}
	switch g {
	case Min:
		if !math.IsNaN(lo) {
			m.Best = &lo
		}
	case Max:
		if !math.IsNaN(hi) {
			m.Best = &hi
		}
	}
	return m
}

// CompareOptions choose the rows and columns of a comparison.
type CompareOptions struct {
	// AllParams shows every param; otherwise only those that differ.
	AllParams bool
	// Filter keeps rows whose param k equals v, for every k=v.
	Filter map[string]string
	// Sort is a column: "created", "duration", "state", "param:NAME",
	// "last:METRIC", "best:METRIC"; a leading "-" reverses it. Empty
	// sorts by the first metric's best when there is one, else newest first.
	Sort   string
	Goals  map[string]Goal
	Offset int
	Limit  int // 0: all
}

// Comparison is a page of compared runs.
type Comparison struct {
	Params  []string          `json:"params"`
	Metrics []string          `json:"metrics"`
	Goals   map[string]string `json:"goals,omitempty"`
	Rows    []Row             `json:"rows"`
	Total   int               `json:"total"`
	Offset  int               `json:"offset"`
	Sort    string            `json:"sort"`
}

// SortKeys are the columns a comparison sorts by (CompareOptions.Sort).
const SortKeys = "created, duration, state, param:NAME, last:METRIC, best:METRIC (a leading - reverses)"

// BadSort is a sort column Compare does not know.
type BadSort struct{ Msg string }

func (e *BadSort) Error() string { return e.Msg }

// checkSort refuses a column that names no column of the rows: an
// unknown kind, a param or metric none of them has, best of a metric
// whose goal is not known (its best is unset).
func checkSort(col string, params, metrics map[string]bool, goals map[string]Goal) error {
	kind, name, named := strings.Cut(strings.TrimPrefix(col, "-"), ":")
	have := func(what string, m map[string]bool) string {
		if len(m) == 0 {
			return "the runs have no " + what + "s"
		}
		return "the runs' " + what + "s: " + strings.Join(slices.Sorted(maps.Keys(m)), ", ")
	}
	switch {
	case !named && (kind == "created" || kind == "duration" || kind == "state"):
		return nil
	case named && kind == "param":
		if len(params) > 0 && !params[name] {
			return &BadSort{"sort " + strconv.Quote(col) + ": no run has param " + strconv.Quote(name) + " (" + have("param", params) + ")"}
		}
		return nil
	case named && (kind == "last" || kind == "best"):
		if len(metrics)+len(params) > 0 && !metrics[name] {
			return &BadSort{"sort " + strconv.Quote(col) + ": no run has metric " + strconv.Quote(name) + " (" + have("metric", metrics) + ")"}
		}
		if kind == "best" && metrics[name] && GoalOf(name, goals) == Unknown {
			return &BadSort{"sort " + strconv.Quote(col) + ": whether lower or higher is best for " + name + " is not known: pass --goal " + name + "=min or max, or sort by last:" + name}
		}
		return nil
	}
	return &BadSort{"sort " + strconv.Quote(col) + ": want one of " + SortKeys}
}

// CheckSort refuses o.Sort when it is not one of SortKeys or names a
// param or metric that none of the rows o keeps has (*BadSort): Compare
// would leave them unsorted, saying "sorted by" it.
func CheckSort(rows []Row, o CompareOptions) error {
	if o.Sort == "" {
		return nil
	}
	params, metrics := map[string]bool{}, map[string]bool{} // none kept: only the form is checked
	for _, r := range rows {
		if !keep(r, o.Filter) {
			continue
		}
		for k := range r.Params {
			params[k] = true
		}
		for k := range r.Metrics {
			metrics[k] = true
		}
	}
	return checkSort(o.Sort, params, metrics, o.Goals)
}

func keep(r Row, filter map[string]string) bool {
	for k, v := range filter {
		if r.Params[k] != v {
			return false
		}
	}
	return true
}

// Compare sorts, filters and pages rows and picks the columns.
func Compare(rows []Row, o CompareOptions) Comparison {
	var kept []Row
	for _, r := range rows {
		ok := true
		for k, v := range o.Filter {
			if r.Params[k] != v {
				ok = false
				break
			}
		}
		if ok {
			kept = append(kept, r)
		}
	}
	params := map[string]bool{}
	metrics := map[string]bool{}
	for _, r := range kept {
		for k := range r.Params {
			params[k] = true
		}
		for k := range r.Metrics {
			metrics[k] = true
		}
	}
	c := Comparison{Total: len(kept), Offset: o.Offset, Goals: map[string]string{}}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if o.AllParams || differs(kept, k) {
			c.Params = append(c.Params, k)
		}
	}
	c.Metrics = slices.Sorted(maps.Keys(metrics))
	for _, m := range c.Metrics {
		if g := GoalOf(m, o.Goals); g != Unknown {
			c.Goals[m] = string(g)
		}
	}
	c.Sort = o.Sort
	if c.Sort == "" {
		c.Sort = "-created"
		for _, m := range c.Metrics {
			if c.Goals[m] != "" {
				c.Sort = "best:" + m
				break
			}
		}
	}
	sortRows(kept, c.Sort, c.Goals)
	if o.Offset > 0 {
		kept = kept[min(o.Offset, len(kept)):]
	}
	if o.Limit > 0 && len(kept) > o.Limit {
		kept = kept[:o.Limit]
	}
	shown := map[string]bool{}
	for _, p := range c.Params {
		shown[p] = true
	}
	c.Rows = make([]Row, len(kept))
	for i, r := range kept {
		r.Params = filterKeys(r.Params, shown)
		c.Rows[i] = r
	}
	return c
}

func differs(rows []Row, k string) bool {
	for i := 1; i < len(rows); i++ {
		a, oka := rows[0].Params[k]
		b, okb := rows[i].Params[k]
		if a != b || oka != okb {
			return true
		}
	}
	return false
}

func filterKeys(m map[string]string, keep map[string]bool) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, v := range m {
		if keep[k] {
			out[k] = v
		}
	}
	return out
}

// sortRows sorts by a column; a missing value sorts last either way.
// For best:METRIC the order is best first: ascending for a metric to
// minimise, descending for one to maximise.
func sortRows(rows []Row, col string, goals map[string]string) {
	desc := strings.HasPrefix(col, "-")
	col = strings.TrimPrefix(col, "-")
	kind, name, _ := strings.Cut(col, ":")
	if kind == "best" && goals[name] == string(Max) {
		desc = !desc
	}
	key := func(r Row) (float64, string, bool) {
		switch kind {
		case "created":
			return float64(r.CreatedAt.UnixNano()), "", true
		case "duration":
			return r.Duration, "", r.Duration > 0
		case "state":
			return 0, r.State, true
		case "param":
			v, ok := r.Params[name]
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				return f, "", ok
			}
			return math.NaN(), v, ok
		case "last", "best":
			m, ok := r.Metrics[name]
			if !ok {
				return 0, "", false
			}
			if kind == "best" {
				if m.Best == nil {
					return 0, "", false
				}
				return *m.Best, "", !math.IsNaN(*m.Best)
			}
			return m.Last, "", !math.IsNaN(m.Last)
		}
		return 0, "", false
	}
	sort.SliceStable(rows, func(i, j int) bool {
		fi, si, oki := key(rows[i])
		fj, sj, okj := key(rows[j])
		if oki != okj {
			return oki
		}
		if !oki {
			return false
		}
		less := fi < fj
		if fi == fj || math.IsNaN(fi) || math.IsNaN(fj) {
			if si == sj {
				return false
			}
			less = si < sj
		}
		if desc {
			return !less
		}
		return less
	})
}
