package progress

import (
	"strings"

	"github.com/runbox/runbox/plugins/prefilter/tables"
	"github.com/runbox/runbox/sdk"
)

// Column tables of bare numbers under a header of names (package tables
// has the shapes; the host sends the rows once it has seen the header,
// prefilter.Rows):
//
//	  Iter       Train Loss   Estimated Time        (scikit-learn verbose)
//	     1           1.2980            7.89m
//	E    #       LOSS TOK2VEC  LOSS NER  SCORE      (spaCy)
//	  0     200         35.70   2163.45   0.83
//	average    since         example  ...           (Vowpal Wabbit: a name
//	loss       last          counter  ...            over two lines)
//	0.641010   0.641010            3  ...
//
// A row's cells go to the header's columns by position in the line, or
// one by one when there are as many cells as names (a header name of two
// words, "Train Loss", is one column when the row says so). The step is
// the counter column (#, iter, step, example counter, ...), the epoch the
// epoch column; the other numeric cells are metrics under their column's
// name; times and text cells ("7.89m", "unknown") are skipped.
//
// The header comes back in later batches as Progress.Message,
// gridPrefix then the header line (the first line of a two-line header
// before it, after a newline).
const gridPrefix = "table: "

// gridCol is a column: its name and where it starts in the header line.
type gridCol struct {
	name  string
	start int
}

// gridOf returns the header text a Progress.Message holds, if any.
func gridOf(m string) (string, bool) {
	return strings.CutPrefix(m, gridPrefix)
}

// gridHeader makes the update that records header line h (with the
// header line before it, above, when that is a header of as many names).
func gridHeader(h, above string, st *state) sdk.Progress {
	h = tables.TrimEscText(h)
	text := h
	if above != "" {
		above = tables.TrimEscText(above)
		if len(strings.Fields(above)) == len(strings.Fields(h)) {
			text = above + "\n" + h
		}
	}
	st.setGrid(text)
	return sdk.Progress{Source: "table", Message: gridPrefix + text}
}

// setGrid reads header text (as gridHeader stores it) into st's columns:
// by the header's words (names over two lines joined), and by its cells
// apart by two spaces or more.
func (st *state) setGrid(text string) {
	above, h, two := strings.Cut(text, "\n")
	if !two {
		h, above = above, ""
	}
	st.gridWords = st.gridWords[:0]
	st.gridCells = st.gridCells[:0]
	var up []string
	if above != "" {
		up = strings.Fields(above)
	}
	k := 0
	eachCell(h, 1, func(a, b int) {
		name := h[a:b]
		if k < len(up) {
			name = up[k] + " " + name
		}
		k++
		st.gridWords = append(st.gridWords, gridCol{name, a})
	})
	w := 0
	eachCell(h, 2, func(a, b int) {
		name := h[a:b]
		for w < len(st.gridWords) && st.gridWords[w].start < a {
			w++
		}
		if w < len(st.gridWords) && st.gridWords[w].start == a && len(st.gridWords[w].name) >= b-a &&
			strings.HasSuffix(st.gridWords[w].name, name) {
			name = st.gridWords[w].name // one word: its name over two lines
		}
		st.gridCells = append(st.gridCells, gridCol{name, a})
	})
	st.gridOn = true
}

// eachCell calls fn with the bounds of each cell of s, cells being apart
// by at least gap blanks (or a tab).
func eachCell(s string, gap int, fn func(a, b int)) {
	i := 0
	for i < len(s) {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return
		}
		a, b := i, i
		for i < len(s) {
			for i < len(s) && !isSpace(s[i]) {
				i++
			}
			b = i
			j := i
			for j < len(s) && isSpace(s[j]) {
				j++
			}
			if j-i >= gap || j == len(s) || s[i] == '\t' {
				i = j
				break
			}
			i = j
		}
		fn(a, b)
	}
}

// gridRow reads raw, a row of the table st knows.
func gridRow(raw string, st *state) (u sdk.Progress, ok bool) {
	row := tables.TrimEscText(raw)
	n := 0
	eachCell(row, 1, func(int, int) { n++ })
	cols := st.gridCells
	byIndex := n == len(cols)
	if n == len(st.gridWords) {
		cols, byIndex = st.gridWords, true
	}
	if len(cols) == 0 {
		return u, false
	}
	i := 0
	used := uint64(0)
	eachCell(row, 1, func(a, b int) {
		c := i
		i++
		if !byIndex {
			// the column this cell's last byte is under: right- and
			// left-aligned cells both end within their column
			c = 0
			for c+1 < len(cols) && cols[c+1].start <= b-1 {
				c++
			}
		}
		if c >= len(cols) || c < 64 && used&(1<<c) != 0 {
			return
		}
		cell := row[a:b]
		if !tables.IsNumber(cell) {
			return
		}
		used |= 1 << (c & 63)
		v, _, _ := parseNum(cell, 0)
		switch gridRole(cols[c].name) {
		case roleStep:
			if v >= 0 && v < 1e15 {
				u.Step, ok = int64(v), true
			}
		case roleEpoch:
			if v >= 0 && v < 1e9 {
				u.Epoch, ok = int64(v), true
			}
		case roleMetric:
			if finite(v) {
				st.addMetric(cols[c].name, v)
				ok = true
			}
		}
	})
	if !ok {
		st.metrics = st.metrics[:0]
		return sdk.Progress{}, false
	}
	u.Phase, u.Source = "train", "table"
	return u, true
}

// notBack drops a row's step or epoch when the screen already showed a
// later one (acc: this batch's progress so far, last: the batches'
// before): a table under a live bar ("Epoch 1.35/3" above a notebook's
// per-epoch table) sums up a finished stretch; its metrics stand, its
// counters must not move the run back.
func notBack(u, acc, last *sdk.Progress) {
	e, s := acc.Epoch, acc.Step
	if last != nil {
		e, s = orInt(e, last.Epoch), orInt(s, last.Step)
	}
	if u.Epoch < e {
		u.Epoch = 0
	}
	if u.Step < s {
		u.Step = 0
	}
}

const (
	roleMetric = iota
	roleStep
	roleEpoch
	roleSkip
)

// gridRole says what a column holds, by its name.
func gridRole(name string) int {
	switch strings.ToLower(name) {
	case "#", "it", "iter", "iters", "iteration", "iterations", "step", "steps", "global_step",
		"counter", "batch", "batches", "round", "rounds", "update", "updates":
		return roleStep
	case "e", "ep", "epoch", "epochs":
		return roleEpoch
	}
	l := strings.ToLower(name)
	if strings.HasSuffix(l, " counter") {
		return roleStep // "example counter": what has been read so far
	}
	if l == "eta" || strings.Contains(l, "time") || strings.Contains(l, "elapsed") || strings.Contains(l, "remaining") {
		return roleSkip
	}
	return roleMetric
}
