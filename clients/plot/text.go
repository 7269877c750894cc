package plot

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/runbox/runbox/api"
)

// marks tell runs apart in a text chart.
var marks = []rune{'●', '○', '▲', '△', '■', '□', '◆'}

// Text draws each metric as a chart of width×height cells, the runs
// overlaid (one mark each), for a terminal or a CI log.
func Text(w io.Writer, runs []*api.Metrics, metrics []string, width, height int) error {
	width, height = max(width, 20), max(height, 4)
	for k, name := range metrics {
		if k > 0 {
			fmt.Fprintln(w)
		}
		textChart(w, runs, name, width, height)
	}
	return nil
}

func textChart(w io.Writer, runs []*api.Metrics, name string, width, height int) {
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, m := range runs {
		if s := series(m, name); s != nil {
			for i, v := range s.Value {
				x := float64(s.Step[i])
				xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
				if y, ok := finite(v); ok {
					ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
				}
			}
		}
	}
	fmt.Fprintf(w, "%s\n", name)
	if math.IsInf(xmin, 0) {
		fmt.Fprintln(w, "  (no values)")
		return
	}
	if math.IsInf(ymin, 0) { // only NaN or ±Inf: the marks on one level
		ymin, ymax = 0, 0
	}
	if ymax == ymin {
		ymax, ymin = ymax+0.5, ymin-0.5
	}
	if xmax == xmin {
		xmax++
	}
	grid := make([][]rune, height)
	for i := range grid {
		grid[i] = []rune(strings.Repeat(" ", width))
	}
	for r, m := range runs {
		s := series(m, name)
		if s == nil {
			continue
		}
		put := func(x, y float64, mark rune) {
			col := int(math.Round((x - xmin) / (xmax - xmin) * float64(width-1)))
			row := height - 1 - int(math.Round((y-ymin)/(ymax-ymin)*float64(height-1)))
			grid[row][col] = mark
		}
		for i, v := range s.Value {
			if y, ok := finite(v); ok {
				put(float64(s.Step[i]), y, marks[r%len(marks)])
			}
		}
		for _, p := range nonFinite(s) { // drawn last: never hidden by a point
			put(p.X, p.Y, '×')
		}
	}
	top, bottom := num(ymax), num(ymin)
	lw := max(len(top), len(bottom))
	for i, line := range grid {
		label := ""
		switch i {
		case 0:
			label = top
		case height - 1:
			label = bottom
		}
		fmt.Fprintf(w, "%*s ┤%s\n", lw, label, string(line))
	}
	fmt.Fprintf(w, "%*s └%s\n", lw, "", strings.Repeat("─", width))
	left, right := num(xmin), num(xmax)
	fmt.Fprintf(w, "%*s  %s%*s  (step)\n", lw, "", left, width-len(left), right)
	var legend []string
	if len(runs) > 1 {
		for r, m := range runs {
			legend = append(legend, fmt.Sprintf("%c %s", marks[r%len(marks)], label(m)))
		}
	}
	for _, m := range runs {
		if s := series(m, name); s != nil && len(nonFinite(s)) > 0 {
			legend = append(legend, "× NaN/Inf")
			break
		}
	}
	if len(legend) > 0 {
		fmt.Fprintf(w, "%*s  %s\n", lw, "", strings.Join(legend, "   "))
	}
	if note := overlapNote(runs, sameAs(runs, name)); note != "" {
		fmt.Fprintf(w, "%*s  %s (only the last one's marks show)\n", lw, "", note)
	}
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
