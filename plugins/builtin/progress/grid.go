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
	st.gridOn = true
	if st.gridPipe = tables.PipeHeader(h); st.gridPipe {
		for _, c := range tables.PipeCells(h) {
			st.gridWords = append(st.gridWords, gridCol{name: c})
		}
		return
	}
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
	if st.gridPipe {
		return pipeRow(raw, st)
	}
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
		gridCell(cols[c].name, v, &u, &ok, st)
	})
	if !ok {
		st.metrics = st.metrics[:0]
		return sdk.Progress{}, false
	}
	u.Phase, u.Source = "train", "table"
	return u, true
}

// pipeRow reads a row of a table drawn with pipes, cell by cell under
// the header's names; text cells (a trial's name, its status) are
// skipped.
func pipeRow(raw string, st *state) (u sdk.Progress, ok bool) {
	cells := tables.PipeCells(raw)
	if len(cells) != len(st.gridWords) {
		return u, false
	}
	for i, c := range cells {
		if !tables.IsNumber(c) {
			continue
		}
		v, _, _ := parseNum(c, 0)
		gridCell(st.gridWords[i].name, v, &u, &ok, st)
	}
	if !ok {
		st.metrics = st.metrics[:0]
		return sdk.Progress{}, false
	}
	u.Phase, u.Source = "train", "table"
	return u, true
}

// gridCell records cell value v of column name: the step, the epoch or a
// metric, as the column's name says.
func gridCell(name string, v float64, u *sdk.Progress, ok *bool, st *state) {
	switch gridRole(name) {
	case roleStep:
		if v >= 0 && v < 1e15 {
			u.Step, *ok = int64(v), true
		}
	case roleEpoch:
		if v >= 0 && v < 1e9 {
			u.Epoch, *ok = int64(v), true
		}
	case roleMetric: // NaN and ±Inf included: a loss gone NaN is news
		st.addMetric(name, v)
		*ok = true
	}
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

// tableLine reads raw when it is a table's line that no literal may have
// let in (the host's prefilter.Rows sends them): a header drawn with
// pipes (always), a row of a name/value table (once one was read, or
// with a literal), a row under a known header. f is raw's scanLine bits;
// *stp is made when needed. A header's update carries its Message.
func tableLine(raw string, f uint64, kvOn, gridOn bool, in sdk.ParseInput, stp **state) (u sdk.Progress, ok bool) {
	t := raw
	for len(t) > 0 && t[0] == ' ' {
		t = t[1:]
	}
	if len(t) == 0 {
		return u, false
	}
	pipe := t[0] == '|'
	if !pipe && t[0] != 0xe2 && !gridOn || notText(raw) {
		return u, false // the common line: nothing to look at
	}
	st := *stp
	if st == nil {
		st = newState(in.Last)
		st.borrow()
		*stp = st
	}
	st.metrics = st.metrics[:0]
	if pipe && tables.PipeHeader(raw) {
		return gridHeader(raw, "", st), true
	}
	if name, value, ok := tables.KVRow(raw); ok && (kvOn || f&fPre != 0) {
		if pipe {
			return tableRow(strings.TrimSpace(raw), st)
		}
		return kvPair(name, value, st) // box rows keep their whole name
	}
	if gridOn && (tables.Row(raw) || pipe && tables.PipeRow(raw)) {
		return gridRow(raw, st)
	}
	return u, false
}
