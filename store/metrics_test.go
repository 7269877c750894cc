package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/runbox/runbox/sdk"
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
		if a.Step != b.Step || !a.Time.Equal(b.Time) || a.Value != b.Value || a.Min != b.Min || a.Max != b.Max || a.N != b.N || a.NonFinite != b.NonFinite {
			t.Fatalf("point %d: stored %+v, read %+v", i, a, b)
		}
	}
}

// sameFloat is == with NaN equal to NaN (and +Inf, -Inf told apart).
func sameFloat(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// NaN and ±Inf are kept as reported (kind and sign), counted, and never
// taken for a min or max; they survive the store and downsampling.
func TestMetricsNonFinite(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, t.TempDir())
	if err := st.CreateRun(ctx, &Run{ID: "g", Sandbox: "process"}); err != nil {
		t.Fatal(err)
	}
	h := &MetricHistory{RunID: "g"}
	now := time.Now()
	in := []float64{1, math.NaN(), math.Inf(1), 2, math.Inf(-1)}
	for i, v := range in {
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
	if len(ps) != len(in) {
		t.Fatalf("got %d points, want %d", len(ps), len(in))
	}
	for i, w := range in {
		p := ps[i]
		finite := !math.IsNaN(w) && !math.IsInf(w, 0)
		wantNF := int64(1)
		if finite {
			wantNF = 0
		}
		if !sameFloat(p.Value, w) || p.NonFinite != wantNF || finite != !math.IsNaN(p.Min) || finite != !math.IsNaN(p.Max) {
			t.Fatalf("point %d: %+v, want value %v", i, p, w)
		}
	}
	cases := []struct {
		name      string
		a, b      MetricPoint
		value     float64
		min, max  float64
		nonFinite int64
	}{
		{"finite then NaN keeps the finite value", ps[0], ps[1], 1, 1, 1, 1},
		{"NaN then finite", ps[1], ps[0], 1, 1, 1, 1},
		{"NaN then +Inf keeps the latest kind", ps[1], ps[2], math.Inf(1), math.NaN(), math.NaN(), 2},
		{"two finite", ps[0], ps[3], 2, 1, 2, 0},
	}
	for _, c := range cases {
		m := mergePoints(c.a, c.b)
		if !sameFloat(m.Value, c.value) || !sameFloat(m.Min, c.min) || !sameFloat(m.Max, c.max) || m.NonFinite != c.nonFinite || m.N != 2 {
			t.Errorf("%s: %+v", c.name, m)
		}
	}
	// Within one bucket (a series already downsampled), the same rules.
	s := &Series{Name: "x", Span: 4}
	for _, v := range []float64{math.NaN(), math.Inf(-1), 3, math.NaN()} {
		s.Add(1, now, v)
	}
	if p := s.Points[0]; len(s.Points) != 1 || p.Value != 3 || p.Min != 3 || p.Max != 3 || p.NonFinite != 3 || p.N != 4 {
		t.Fatalf("bucket of 4: %+v", s.Points)
	}
	// The store check knows the table.
	rep, err := st.Check(ctx)
	if err != nil || len(rep.Problems) != 0 {
		t.Fatalf("check: %+v, %v", rep, err)
	}
}

// A series written in format 1 (before NonFinite was kept) still reads:
// its NaN values were buckets of gaps only.
func TestMetricsFormat1(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0).UTC()
	var b []byte
	b = append(b, seriesFormat1)
	b = binary.AppendUvarint(b, 2) // span
	b = binary.AppendUvarint(b, 4) // total
	b = binary.AppendUvarint(b, 2) // points
	for i, vs := range [][3]float64{{0.5, 0.4, 0.6}, {math.NaN(), math.NaN(), math.NaN()}} {
		b = binary.AppendVarint(b, 10)
		if i == 0 {
			b = binary.AppendVarint(b, t0.UnixNano())
		} else {
			b = binary.AppendVarint(b, int64(time.Second))
		}
		b = binary.AppendUvarint(b, 2)
		for _, f := range vs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
		}
	}
	s, err := decodeSeries("loss", b)
	if err != nil {
		t.Fatal(err)
	}
	want := []MetricPoint{
		{Step: 10, Time: t0, Value: 0.5, Min: 0.4, Max: 0.6, N: 2},
		{Step: 20, Time: t0.Add(time.Second), Value: math.NaN(), Min: math.NaN(), Max: math.NaN(), N: 2, NonFinite: 2},
	}
	if s.Span != 2 || s.Total != 4 || len(s.Points) != 2 {
		t.Fatalf("%+v", s)
	}
	for i, w := range want {
		g := s.Points[i]
		if g.Step != w.Step || !g.Time.Equal(w.Time) || !sameFloat(g.Value, w.Value) || !sameFloat(g.Min, w.Min) ||
			!sameFloat(g.Max, w.Max) || g.N != w.N || g.NonFinite != w.NonFinite {
			t.Errorf("point %d: %+v, want %+v", i, g, w)
		}
	}
	if _, err := decodeSeries("loss", append([]byte{9}, b[1:]...)); err == nil {
		t.Error("format 9 read without an error")
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

// A run's latest progress with a NaN or infinite metric is stored and read
// back with it (before, encoding the run failed and the update was lost).
func TestRunProgressNonFinite(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, t.TempDir())
	if err := st.CreateRun(ctx, &Run{ID: "p", Sandbox: "process"}); err != nil {
		t.Fatal(err)
	}
	_, err := st.UpdateRun(ctx, "p", func(r *Run) error {
		r.Progress = &sdk.Progress{Step: 7, Metrics: sdk.Metrics{"loss": math.NaN(), "gn": math.Inf(1), "acc": 0.25}}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.GetRun(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	m := r.Progress.Metrics
	if r.Progress.Step != 7 || !math.IsNaN(m["loss"]) || !math.IsInf(m["gn"], 1) || m["acc"] != 0.25 {
		t.Fatalf("read back %+v", r.Progress)
	}
}
