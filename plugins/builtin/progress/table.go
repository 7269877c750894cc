package progress

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// Metrics tables: a header of column names, then rows of numbers under
// it, each row drawn with its epoch bar (Ultralytics YOLO):
//
//	Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size
//	15/30        13G      6.077       7.64      1.456         17        576: 100%|█| 8/8
//
// The header usually arrives in an earlier batch than the rows, so it is
// kept in Progress.Message as "columns: Epoch GPU_mem ..." and read back
// from ParseInput.Last, as fastai's is.
const tablePrefix = "columns: "

func tableColsFromMessage(m string) []string {
	if rest, ok := strings.CutPrefix(m, tablePrefix); ok {
		return strings.Fields(rest)
	}
	// the same header as a column table's (grid.go) keeps its columns
	if h, ok := gridOf(m); ok {
		if i := strings.LastIndexByte(h, '\n'); i >= 0 {
			h = h[i+1:]
		}
		if h = strings.TrimSpace(h); strings.HasPrefix(h, "Epoch ") || strings.HasPrefix(h, "epoch ") {
			return strings.Fields(h)
		}
	}
	return nil
}

// tableHeader reads a header line: four or more names, the first the
// epoch column, none of them a number.
func tableHeader(t string, st *state) (u sdk.Progress, ok bool) {
	if !strings.HasPrefix(t, "Epoch ") && !strings.HasPrefix(t, "epoch ") {
		return u, false
	}
	f := strings.Fields(t)
	if len(f) < 4 {
		return u, false
	}
	for _, w := range f {
		if !isLetter(w[0]) || strings.ContainsAny(w, ":=|[]") {
			return u, false
		}
	}
	st.cols = f
	return sdk.Progress{Source: "table", Message: tablePrefix + strings.Join(f, " ")}, true
}

// tableRow2 records a row's numbers under the header's names; counters
// and sizes (GPU memory, instances, image size) are not metrics.
func tableRow2(desc string, st *state) {
	if len(st.cols) == 0 {
		return
	}
	f := strings.Fields(desc)
	for i := 1; i < len(f) && i < len(st.cols); i++ {
		name := st.cols[i]
		switch strings.ToLower(name) {
		case "gpu_mem", "instances", "targets", "size", "img_size", "labels":
			continue
		}
		v, j, ok := parseNum(f[i], 0)
		if !ok || j != len(f[i]) {
			continue
		}
		st.addMetric(name, v)
	}
}
