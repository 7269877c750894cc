package host

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/store"
)

// A sweep whose members report a NaN or ±Inf loss is compared like any
// other: the comparison encodes (a NaN once made the daemon answer an
// empty body), each value travels as the metrics answer writes it
// ("NaN", "Infinity"), and reads back as the same value.
func TestCompareSweepWithNonFiniteMetrics(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 4)
	ctx := context.Background()
	sw := te.sweepOf(t, sweepReq(t, "v", []string{"0.5", "NaN", "Inf"}, 0, 0, "true", "{v}"))
	// The members' loss, as a run's metrics are kept (the engine here
	// has no progress parser to read them from the log).
	for _, r := range te.waitSweep(t, sw.ID).Runs {
		v, err := strconv.ParseFloat(r.Params["v"], 64)
		if err != nil {
			t.Fatal(err)
		}
		h := &store.MetricHistory{RunID: r.ID}
		h.Add("loss", 1, time.Now(), v)
		if err := te.st.PutMetrics(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	cmp, err := te.Compare(ctx, CompareQuery{Sweep: sw.ID})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(cmp)
	if err != nil {
		t.Fatalf("the comparison does not encode: %v", err)
	}
	var back api.Comparison
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("the comparison does not decode: %v\n%s", err, b)
	}
	last := map[string]float64{}
	for _, r := range back.Rows {
		m, ok := r.Metrics["loss"]
		if !ok {
			t.Fatalf("row %s has no loss: %s", r.RunID, b)
		}
		last[r.Params["v"]] = m.Last
		if r.Params["v"] != "0.5" && m.Best != nil {
			t.Errorf("row v=%s: best %v, want none (no finite value)", r.Params["v"], *m.Best)
		}
	}
	if last["0.5"] != 0.5 || !math.IsNaN(last["NaN"]) || !math.IsInf(last["Inf"], 1) {
		t.Errorf("last values read back: %v\n%s", last, b)
	}
	// best:loss puts the finite run first, the others after it.
	if back.Rows[0].Params["v"] != "0.5" {
		t.Errorf("sorted by %s: first row %v", back.Sort, back.Rows[0].Params)
	}
}

// sweep status keeps a member whose loss went NaN or infinite in its
// rows, as compare does (it was left out: the diverged member was the
// one missing), its best NaN when it had no finite value, and sorting by
// the loss puts such members last.
func TestSweepStatusWithNonFiniteMetrics(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 4)
	ctx := context.Background()
	sw := te.sweepOf(t, sweepReq(t, "v", []string{"NaN", "0.5", "Inf", "0.2"}, 0, 0, "true", "{v}"))
	for _, r := range te.waitSweep(t, sw.ID).Runs {
		v, err := strconv.ParseFloat(r.Params["v"], 64)
		if err != nil {
			t.Fatal(err)
		}
		h := &store.MetricHistory{RunID: r.ID}
		if r.Params["v"] != "Inf" { // that one has no finite value
			h.Add("loss", 1, time.Now(), 0.9)
		}
		h.Add("loss", 2, time.Now(), v)
		if err := te.st.PutMetrics(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	v, err := te.SweepStatus(ctx, sw.ID, "loss")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("sweep status does not encode: %v", err)
	}
	var back api.Sweep
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("sweep status does not decode: %v\n%s", err, b)
	}
	var order []string
	for _, r := range back.Runs {
		m, ok := r.Metrics["loss"]
		if !ok {
			t.Fatalf("member v=%s has no loss row: %s", r.Params["v"], b)
		}
		order = append(order, r.Params["v"])
		want := map[string]float64{"NaN": 0.9, "0.5": 0.5, "Inf": math.NaN(), "0.2": 0.2}[r.Params["v"]]
		if got := float64(m.Best); got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("member v=%s: best %v, want %v (its best finite value)", r.Params["v"], m.Best, want)
		}
	}
	if want := []string{"0.2", "0.5", "NaN", "Inf"}; !slices.Equal(order, want) {
		t.Errorf("sorted by loss: %v, want %v (no finite best: last)", order, want)
	}
	for _, r := range back.Runs {
		if l := float64(r.Metrics["loss"].Last); (r.Params["v"] == "NaN") != math.IsNaN(l) || (r.Params["v"] == "Inf") != math.IsInf(l, 1) {
			t.Errorf("member v=%s: last %v", r.Params["v"], l)
		}
	}
}
