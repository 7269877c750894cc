package plot

import (
	"bytes"
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
)

var nan = api.Float(math.NaN())

// two runs: a falling loss with a NaN reported at step 3, and a rising
// accuracy on the first only.
func sample() []*api.Metrics {
	return []*api.Metrics{
		{RunID: "run-a", Names: []string{"acc", "loss", "progress/percent"}, Series: []api.MetricSeries{
			{Name: "acc", Step: []int64{1, 2, 3, 4, 5}, Value: []api.Float{0.1, 0.3, 0.5, 0.7, 0.9}},
			{Name: "loss", Step: []int64{1, 2, 3, 4, 5}, Value: []api.Float{5, 4, nan, 2, 1}},
		}},
		{RunID: "run-b", Names: []string{"loss"}, Series: []api.MetricSeries{
			{Name: "loss", Step: []int64{1, 2, 3}, Value: []api.Float{6, 5.5, 5}},
		}},
	}
}

func TestChoose(t *testing.T) {
	tests := []struct {
		name string
		runs []*api.Metrics
		want []string
		got  string
		err  string
	}{
		{"default skips progress", sample(), nil, "acc,loss", ""},
		{"asked", sample(), []string{"loss"}, "loss", ""},
		{"unknown lists names", sample(), []string{"lr"}, "", `no metric "lr"; the runs have: acc, loss, progress/percent`},
		{"none", []*api.Metrics{{RunID: "x"}}, nil, "", "run x reported no metrics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Choose(tt.runs, tt.want)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || strings.Join(got, ",") != tt.got {
				t.Fatalf("got %v, %v; want %s", got, err, tt.got)
			}
		})
	}
	if _, err := Choose([]*api.Metrics{{RunID: "x"}}, nil); !errors.Is(err, ErrNoMetrics) {
		t.Fatalf("no metrics: %v", err)
	}
}

func TestSavePNGAndSVG(t *testing.T) {
	dir := t.TempDir()
	runs := sample()
	pngPath := filepath.Join(dir, "m.png")
	if err := Save(pngPath, runs, []string{"acc", "loss"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	// 8×3 inches per metric at 96 dpi, two metrics stacked.
	if sz := img.Bounds().Size(); sz.X != 768 || sz.Y != 576 {
		t.Fatalf("PNG is %v, want 768×576", sz)
	}

	var svg bytes.Buffer
	if err := Write(&svg, "svg", runs, []string{"loss"}); err != nil {
		t.Fatal(err)
	}
	s := svg.String()
	for _, want := range []string{"<svg", ">loss<", ">run-a<", ">run-b<", ">run-a NaN/Inf<"} {
		if !strings.Contains(s, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	// run-a's loss is two segments (the gap splits it), run-b's one: three
	// lines drawn in the runs' colours.
	if n := strings.Count(s, "stroke:#0072B2") + strings.Count(s, "stroke:#D55E00"); n < 3 {
		t.Errorf("%d series strokes in the SVG, want at least 3", n)
	}
	if err := Save(filepath.Join(dir, "m.jpg"), runs, []string{"loss"}); err == nil {
		t.Fatal("a .jpg was accepted")
	}
}

func TestText(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, sample(), []string{"loss"}, 30, 6); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// 4 finite points of run-a and a × for its NaN, 3 of run-b.
	if n := strings.Count(out, "●"); n != 4+1 { // +1: the legend
		t.Errorf("run-a marks: %d\n%s", n, out)
	}
	if n := strings.Count(out, "×"); n != 1+1 || !strings.Contains(out, "× NaN/Inf") {
		t.Errorf("NaN marks: %d\n%s", n, out)
	}
	if n := strings.Count(out, "○"); n != 3+1 {
		t.Errorf("run-b marks: %d\n%s", n, out)
	}
	if !strings.Contains(out, "6 ┤") || !strings.Contains(out, "1 ┤") {
		t.Errorf("axis labels missing:\n%s", out)
	}
}

// A series whose every value is non-finite (a run whose loss was NaN from
// the start) still draws its marks: no crash, no empty chart.
func TestOnlyNonFinite(t *testing.T) {
	runs := []*api.Metrics{{RunID: "r", Names: []string{"loss"}, Series: []api.MetricSeries{
		{Name: "loss", Step: []int64{1, 2}, Value: []api.Float{nan, api.Float(math.Inf(1))}},
	}}}
	var b bytes.Buffer
	if err := Text(&b, runs, []string{"loss"}, 20, 4); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "×"); n != 2+1 {
		t.Errorf("%d marks, want 2 and the legend:\n%s", n, b.String())
	}
	var svg bytes.Buffer
	if err := Write(&svg, "svg", runs, []string{"loss"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), ">r NaN/Inf<") {
		t.Error("SVG lacks the NaN/Inf legend")
	}
}

// Two runs with the same curve draw one line over the other: both charts
// say so, and the image dashes the later line so the one under it shows.
// A third, different run is not named.
func TestIdenticalSeriesOverlap(t *testing.T) {
	loss := func() api.MetricSeries {
		return api.MetricSeries{Name: "loss", Step: []int64{1, 2, 3}, Value: []api.Float{3, 2, 1}}
	}
	other := loss()
	other.Value = []api.Float{3, 2, 0.5}
	runs := []*api.Metrics{
		{RunID: "01full41", ShortID: "41", Names: []string{"loss"}, Series: []api.MetricSeries{loss()}},
		{RunID: "01full42", ShortID: "42", Names: []string{"loss"}, Series: []api.MetricSeries{loss()}},
		{RunID: "01full43", ShortID: "43", Names: []string{"loss"}, Series: []api.MetricSeries{other}},
	}
	var b bytes.Buffer
	if err := Text(&b, runs, []string{"loss"}, 30, 6); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "41 and 42: identical values, drawn over each other") {
		t.Errorf("the text chart does not say 41 and 42 overlap:\n%s", out)
	}
	if strings.Contains(out, "and 43") || !strings.Contains(out, "● 41") {
		t.Errorf("legend wrong (short ids, 43 not in the note):\n%s", out)
	}
	var svg bytes.Buffer
	if err := Write(&svg, "svg", runs, []string{"loss"}); err != nil {
		t.Fatal(err)
	}
	s := svg.String()
	if !strings.Contains(s, ">42 (same as 41, dashed over it)<") {
		t.Errorf("the SVG legend does not say 42 is the same as 41")
	}
	if n := strings.Count(s, "stroke-dasharray"); n == 0 {
		t.Errorf("no dashed line in the SVG")
	}
	// Different curves get no note.
	b.Reset()
	if err := Text(&b, sample(), []string{"loss"}, 30, 6); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "identical") {
		t.Errorf("runs with different curves said to overlap:\n%s", b.String())
	}
}
