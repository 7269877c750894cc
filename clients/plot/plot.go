// Package plot draws runs' metric histories: as an image (SVG or PNG, with
// gonum/plot) for `runbox plot -o`, as a chart of text for a terminal, and
// as a one-line sparkline. It works on api.Metrics, as a client of the
// daemon: it never reads the store.
package plot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/runbox/runbox/api"
)

// ErrNoMetrics means none of the runs has a metric to draw.
var ErrNoMetrics = errors.New("no metrics")

// MainMetric is the metric a run is summed up by: loss when it has one,
// else its first metric that is not progress itself; "" when none.
func MainMetric(names []string) string {
	first := ""
	for _, n := range names {
		if n == "loss" {
			return n
		}
		if first == "" && !strings.HasPrefix(n, "progress/") {
			first = n
		}
	}
	return first
}

// Choose returns the metrics to draw: those asked for (each must exist in
// at least one run, else the error lists the names that do), or every
// metric the runs have that is not progress itself.
func Choose(runs []*api.Metrics, want []string) ([]string, error) {
	have := map[string]bool{}
	for _, m := range runs {
		for _, n := range m.Names {
			have[n] = true
		}
	}
	all := make([]string, 0, len(have))
	for n := range have {
		all = append(all, n)
	}
	sort.Strings(all)
	if len(all) == 0 {
		ids := make([]string, len(runs))
		for i, m := range runs {
			ids[i] = label(m)
		}
		return nil, fmt.Errorf("%w: run %s reported no metrics (print ##PROGRESS## lines with \"metrics\", or a format a progress plugin knows)", ErrNoMetrics, strings.Join(ids, ", "))
	}
	if len(want) > 0 {
		for _, w := range want {
			if !have[w] {
				return nil, fmt.Errorf("no metric %q; the runs have: %s", w, strings.Join(all, ", "))
			}
		}
		return want, nil
	}
	var out []string
	for _, n := range all {
		if !strings.HasPrefix(n, "progress/") {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		out = all
	}
	return out, nil
}

// label names a run in a legend: its short id, else its full id.
func label(m *api.Metrics) string {
	if m.ShortID != "" {
		return m.ShortID
	}
	return m.RunID
}

// sameAs says, for each run, which earlier run has exactly the same
// series called name (the index), or -1: such a run is drawn right over
// the other and would be invisible without a word.
func sameAs(runs []*api.Metrics, name string) []int {
	out := make([]int, len(runs))
	for i, m := range runs {
		out[i] = -1
		s := series(m, name)
		if s == nil || len(s.Step) == 0 {
			continue
		}
		for j := 0; j < i; j++ {
			if o := series(runs[j], name); o != nil && equalSeries(s, o) {
				out[i] = j
				break
			}
		}
	}
	return out
}

func equalSeries(a, b *api.MetricSeries) bool {
	if len(a.Step) != len(b.Step) || len(a.Value) != len(b.Value) {
		return false
	}
	for i := range a.Step {
		x, y := float64(a.Value[i]), float64(b.Value[i])
		if a.Step[i] != b.Step[i] || (x != y && !(math.IsNaN(x) && math.IsNaN(y))) {
			return false
		}
	}
	return true
}

// overlapNote is the sentence a chart adds when runs' series are
// identical: "41 and 42 are identical (drawn over each other)".
func overlapNote(runs []*api.Metrics, same []int) string {
	groups := map[int][]string{}
	var order []int
	for i, j := range same {
		if j < 0 {
			continue
		}
		for same[j] >= 0 { // the first of the group
			j = same[j]
		}
		if groups[j] == nil {
			order = append(order, j)
			groups[j] = []string{label(runs[j])}
		}
		groups[j] = append(groups[j], label(runs[i]))
	}
	var parts []string
	for _, j := range order {
		g := groups[j]
		parts = append(parts, strings.Join(g[:len(g)-1], ", ")+" and "+g[len(g)-1])
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + ": identical values, drawn over each other"
}

// series returns run m's series called name, or nil.
func series(m *api.Metrics, name string) *api.MetricSeries {
	for i := range m.Series {
		if m.Series[i].Name == name {
			return &m.Series[i]
		}
	}
	return nil
}

// finite returns v as a float64 and whether it is a number to draw.
func finite(v api.Float) (float64, bool) {
	f := float64(v)
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}

// segments splits a series at its non-finite values (NaN, ±Inf: gaps in
// the line, marked by nonFinite) into runs of points.
func segments(s *api.MetricSeries) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for i, v := range s.Value {
		y, ok := finite(v)
		if !ok {
			if len(cur) > 0 {
				out = append(out, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, plotter.XY{X: float64(s.Step[i]), Y: y})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// nonFinite returns a mark for each non-finite value of s: at its step,
// level with the last finite value before it (the first after, when none
// is before; 0 when the series has none), where the line breaks off. A
// loss gone NaN is the news of the chart: it must show, not vanish.
func nonFinite(s *api.MetricSeries) plotter.XYs {
	var out plotter.XYs
	level := 0.0
	for _, v := range s.Value {
		if y, ok := finite(v); ok {
			level = y
			break
		}
	}
	for i, v := range s.Value {
		if y, ok := finite(v); ok {
			level = y
			continue
		}
		out = append(out, plotter.XY{X: float64(s.Step[i]), Y: level})
	}
	return out
}

// Save draws the metrics of runs into path, one chart per metric stacked
// vertically, the runs overlaid; the format follows the extension (.svg or
// .png).
func Save(path string, runs []*api.Metrics, metrics []string) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".svg" && ext != ".png" {
		return fmt.Errorf("plot: %s: the file must end in .svg or .png", path)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := Write(f, ext[1:], runs, metrics); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

// Write draws the chart as format "svg" or "png" to w.
func Write(w io.Writer, format string, runs []*api.Metrics, metrics []string) error {
	plots := make([][]*gplot.Plot, len(metrics))
	for i, name := range metrics {
		p, err := chart(runs, name)
		if err != nil {
			return err
		}
		plots[i] = []*gplot.Plot{p}
	}
	width, height := 8*vg.Inch, vg.Length(len(metrics))*3*vg.Inch
	var c draw.Canvas
	var out io.WriterTo
	switch format {
	case "svg":
		sc := vgsvg.New(width, height)
		c, out = draw.New(sc), sc
	case "png":
		ic := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(96))
		c, out = draw.New(ic), vgimg.PngCanvas{Canvas: ic}
	default:
		return fmt.Errorf("plot: unknown format %q (svg or png)", format)
	}
	tiles := draw.Tiles{Rows: len(metrics), Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(10), PadY: vg.Points(10)}
	canvases := gplot.Align(plots, tiles, c)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	if _, err := out.WriteTo(w); err != nil {
		return fmt.Errorf("plot: write %s: %w", format, err)
	}
	return nil
}

// palette tells runs apart (colour-blind safe, Okabe–Ito).
var palette = []color.Color{
	color.RGBA{0, 114, 178, 255}, color.RGBA{213, 94, 0, 255}, color.RGBA{0, 158, 115, 255},
	color.RGBA{204, 121, 167, 255}, color.RGBA{230, 159, 0, 255}, color.RGBA{86, 180, 233, 255},
	color.RGBA{0, 0, 0, 255},
}

func chart(runs []*api.Metrics, name string) (*gplot.Plot, error) {
	p := gplot.New()
	p.Title.Text = name
	p.X.Label.Text = "step"
	p.Add(plotter.NewGrid())
	same := sameAs(runs, name)
	for i, m := range runs {
		s := series(m, name)
		if s == nil {
			continue
		}
		col := palette[i%len(palette)]
		legend := label(m)
		if j := same[i]; j >= 0 {
			legend += " (same as " + label(runs[j]) + ", dashed over it)"
		}
		for j, seg := range segments(s) {
			var pl gplot.Plotter
			if len(seg) == 1 { // a lone point between gaps is still shown
				sc, err := plotter.NewScatter(seg)
				if err != nil {
					return nil, fmt.Errorf("plot %s of %s: %w", name, label(m), err)
				}
				sc.GlyphStyle.Color, sc.GlyphStyle.Radius = col, vg.Points(2)
				pl = sc
			} else {
				l, err := plotter.NewLine(seg)
				if err != nil {
					return nil, fmt.Errorf("plot %s of %s: %w", name, label(m), err)
				}
				l.LineStyle.Color, l.LineStyle.Width = col, vg.Points(1.5)
				if same[i] >= 0 {
					// Dashed, so the line under it shows through.
					l.LineStyle.Dashes = []vg.Length{vg.Points(6), vg.Points(6)}
					l.LineStyle.DashOffs = vg.Points(float64(6 * (i % 2)))
				}
				pl = l
			}
			p.Add(pl)
			if j == 0 && len(runs) > 1 {
				if th, ok := pl.(gplot.Thumbnailer); ok {
					p.Legend.Add(legend, th)
				}
			}
		}
		if nf := nonFinite(s); len(nf) > 0 {
			sc, err := plotter.NewScatter(nf)
			if err != nil {
				return nil, fmt.Errorf("plot %s of %s: %w", name, label(m), err)
			}
			sc.GlyphStyle.Color, sc.GlyphStyle.Radius, sc.GlyphStyle.Shape = col, vg.Points(4), draw.CrossGlyph{}
			p.Add(sc)
			p.Legend.Add(label(m)+" NaN/Inf", sc)
		}
	}
	p.Legend.Top = true
	return p, nil
}
