package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"
)

// A million-step run stays bounded and keeps its shape: the overall trend,
// a single spike and a single dip all survive downsampling, in order.
func TestMetricsBoundedKeepsShape(t *testing.T) {
	const n = 1_000_000
	var h MetricHistory
	t0 := time.Unix(1_700_000_000, 0)
	for i := int64(1); i <= n; i++ {
		v := 10 / math.Sqrt(float64(i)) // a falling loss
		switch i {
		case 300_000:
			v = 50 // one spike
		case 700_000:
			v = -5 // one dip
		}
		h.Add("loss", i, t0.Add(time.Duration(i)*time.Millisecond), v)
	}
	s := h.Get("loss")
	if s == nil || s.Total != n {
		t.Fatalf("series %+v", s)
	}
	if len(s.Points) >= MaxSeriesPoints || len(s.Points) < MaxSeriesPoints/2 {
		t.Fatalf("%d points, want between %d and %d", len(s.Points), MaxSeriesPoints/2, MaxSeriesPoints)
	}
	var covered int64
	spikeAt, dipAt := -1, -1
	for i, p := range s.Points {
		covered += p.N
		if i > 0 && p.Step <= s.Points[i-1].Step {
			t.Fatalf("steps not increasing at %d: %d after %d", i, p.Step, s.Points[i-1].Step)
		}
		if p.Min > p.Value || p.Value > p.Max {
			t.Fatalf("point %d: value %v outside [%v, %v]", i, p.Value, p.Min, p.Max)
		}
		if p.Max == 50 {
			spikeAt = i
		}
		if p.Min == -5 {
			dipAt = i
		}
	}
	if covered != n {
		t.Fatalf("buckets cover %d samples, want %d", covered, n)
	}
	if spikeAt < 0 || dipAt < 0 || spikeAt >= dipAt {
		t.Fatalf("spike at bucket %d, dip at %d: lost or out of order", spikeAt, dipAt)
	}
	first, last := s.Points[0].Max, s.Points[len(s.Points)-1].Value
	if !(first == 10 && last < 0.02) {
		t.Fatalf("trend lost: first %v, last %v", first, last)
	}

	// Round trip through the store, and the stored size stays small.
	ctx := context.Background()
	st := openTest(t, t.TempDir())
	if err := st.CreateRun(ctx, &Run{ID: "r1", Sandbox: "process"}); err != nil {
		t.Fatal(err)
	}
	h.RunID = "r1"
	if err := st.PutMetrics(ctx, &h); err != nil {
		t.Fatal(err)
	}
	if size := len(encodeSeries(s)); size > 64<<10 {
		t.Fatalf("a series of %d samples takes %d bytes", n, size)
	}
	got, err := st.Metrics(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	gs := got.Get("loss")
	if gs == nil || len(gs.Points) != len(s.Points) || gs.Total != n || gs.Span != s.Span {
		t.Fatalf("round trip: %+v", gs)
	}
	for i := range s.Points {
		a, b := s.Points[i], gs.Points[i]
		if a.Step != b.Step || !a.Time.Equal(b.Time) || a.Value != b.Value || a.Min != b.Min || a.Max != b.Max || a.N != b.N {
			t.Fatalf("point %d: stored %+v, read %+v", i, a, b)
		}
	}
}

// NaN and ±Inf are gaps: stored as NaN, never taken for a min or max.
func TestMetricsGaps(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, t.TempDir())
	if err := st.CreateRun(ctx, &Run{ID: "g", Sandbox: "process"}); err != nil {
		t.Fatal(err)
	}
	h := &MetricHistory{RunID: "g"}
	now := time.Now()
	for i, v := range []float64{1, math.NaN(), math.Inf(1), 2, math.Inf(-1)} {
		h.Add("loss", int64(i+1), now, v)
	}
	if err := st.PutMetrics(ctx, h); err != nil {
		t.Fatal(err)
	}
	got, err := st.Metrics(ctx, "g", "loss")
	if err != nil {
		t.Fatal(err)
	}
	ps := got.Get("loss").Points
	want := []float64{1, math.NaN(), math.NaN(), 2, math.NaN()}
	if len(ps) != len(want) {
		t.Fatalf("got %d points, want %d", len(ps), len(want))
	}
	for i, w := range want {
		if math.IsNaN(w) != math.IsNaN(ps[i].Value) || (!math.IsNaN(w) && ps[i].Value != w) {
			t.Fatalf("point %d: %v, want %v", i, ps[i].Value, w)
		}
	}
	// A merged bucket with a gap keeps the finite side.
	m := mergePoints(ps[0], ps[1])
	if m.Value != 1 || m.Min != 1 || m.Max != 1 || m.N != 2 {
		t.Fatalf("merge with a gap: %+v", m)
	}
	// The store check knows the table.
	rep, err := st.Check(ctx)
	if err != nil || len(rep.Problems) != 0 {
		t.Fatalf("check: %+v, %v", rep, err)
	}
}

func TestMetricsLimits(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, t.TempDir())
	if err := st.PutMetrics(ctx, &MetricHistory{RunID: "nope", Series: []*Series{{Name: "x"}}}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("metrics of an unknown run: %v, want ErrNotFound", err)
	}
	empty, err := st.Metrics(ctx, "nope")
	if err != nil || len(empty.Series) != 0 {
		t.Fatalf("no metrics: %+v, %v", empty, err)
	}
	var h MetricHistory
	for i := 0; i < MaxRunSeries+10; i++ {
		h.Add(fmt.Sprintf("m%03d", i), 1, time.Now(), 1)
	}
	if len(h.Series) != MaxRunSeries || h.Dropped != 10 {
		t.Fatalf("%d series, %d dropped", len(h.Series), h.Dropped)
	}
}
