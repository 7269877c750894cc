package progress

import (
	"math"
	"testing"

	"github.com/runbox/runbox/sdk"
)

// The spellings of NaN and ±Inf that logs print read as numbers where a
// number is expected; the same letters inside a word do not.
func TestParseNumNonFinite(t *testing.T) {
	inf, ninf := math.Inf(1), math.Inf(-1)
	for _, c := range []struct {
		in   string
		want float64
		end  int // 0: no number
	}{
		{"nan", math.NaN(), 3}, {"NaN", math.NaN(), 3}, {"-nan", math.NaN(), 4}, {"+NAN,", math.NaN(), 4},
		{"inf", inf, 3}, {"-inf", ninf, 4}, {"Infinity", inf, 8}, {"-Infinity", ninf, 9}, {"+inf ", inf, 4},
		{"INFINITY|", inf, 8}, {"inf)", inf, 3},
		{"nano", 0, 0}, {"nan1", 0, 0}, {"nan_loss", 0, 0}, {"info", 0, 0}, {"infinite", 0, 0}, {"Infinityx", 0, 0},
		{"banana", 0, 0}, {"-", 0, 0},
	} {
		v, end, ok := parseNum(c.in, 0)
		if ok != (c.end > 0) || ok && (end != c.end || !(v == c.want || math.IsNaN(v) && math.IsNaN(c.want))) {
			t.Errorf("parseNum(%q) = %v, %d, %v; want %v, %d", c.in, v, end, ok, c.want, c.end)
		}
	}
}

// A loss printed as nan or inf is a metric of the update, in the shapes
// the corpus has (nanoGPT, Keras, key=value, a JSON logger's strings);
// "nan" inside a word never becomes one.
func TestParseNonFiniteMetrics(t *testing.T) {
	for _, c := range []struct {
		line string
		key  string
		want float64 // 0: no such metric
	}{
		{"iter 3010: loss nan, time 1019.95ms, mfu 14.12%", "loss", math.NaN()},
		{"  2/1500 [..............................] - ETA: 46s - loss: nan - accuracy: 0.1719", "loss", math.NaN()},
		{"step 12 | loss=-inf | lr=0.001", "loss", math.Inf(-1)},
		{"epoch 1 step 5 loss=Infinity", "loss", math.Inf(1)},
		{`##PROGRESS## {"step": 2, "metrics": {"loss": "NaN", "gn": "-Infinity"}}`, "gn", math.Inf(-1)},
		{"step 5 loss=0.5 nanoseconds=nanny", "nanoseconds", 0},
		{"step 5 loss=nano", "loss", 0},
	} {
		var got sdk.Progress
		for _, u := range Parse(sdk.ParseInput{Lines: []string{c.line}}).Updates {
			got.Merge(u)
		}
		v, ok := got.Metrics[c.key]
		switch {
		case c.want == 0 && ok:
			t.Errorf("%q: metric %s = %v, want none", c.line, c.key, v)
		case c.want != 0 && (!ok || !(v == c.want || math.IsNaN(v) && math.IsNaN(c.want))):
			t.Errorf("%q: metric %s = %v (%v), want %v; metrics %v", c.line, c.key, v, ok, c.want, got.Metrics)
		}
	}
}

// The contract line takes a metric gone NaN however a script's JSON says
// it: Python's bare NaN, a string, at the top level or under "metrics";
// a counter or percentage that is not finite is left out.
func TestRunboxLineNonFinite(t *testing.T) {
	for _, c := range []struct {
		line string
		key  string
		want float64
	}{
		{`##PROGRESS## {"step": 5, "total": 10, "metrics": {"loss": NaN, "acc": 0.5}}`, "loss", math.NaN()},
		{`##PROGRESS## {"step": 5, "metrics": {"loss": "-Infinity"}}`, "loss", math.Inf(-1)},
		{`##PROGRESS## {"step": 5, "loss": Infinity}`, "loss", math.Inf(1)},
		{`##PROGRESS## {"step": 5, "loss": "nan"}`, "loss", math.NaN()},
	} {
		u, ok := parseRunbox(c.line)
		v, has := u.Metrics[c.key]
		if !ok || u.Step != 5 || !has || !(v == c.want || math.IsNaN(v) && math.IsNaN(c.want)) {
			t.Errorf("%s: %v %+v", c.line, ok, u)
		}
	}
	u, ok := parseRunbox(`##PROGRESS## {"step": NaN, "total": 10, "percentage": Infinity, "eta": "nan", "loss": 1}`)
	if !ok || u.Step != 0 || u.Percentage != 0 || u.ETASeconds != 0 || u.Metrics["loss"] != 1 {
		t.Errorf("non-finite counters: %v %+v", ok, u)
	}
}
