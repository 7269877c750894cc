package prefilter

import "github.com/runbox/runbox/plugins/prefilter/tables"

// Column tables: a header of column names, then rows of bare numbers
// under it (scikit-learn's verbose boosting, Vowpal Wabbit, spaCy,
// Chainer's PrintReport, many hand-written loops):
//
//	  Iter       Train Loss   Estimated Time
//	     1           1.2980            7.89m
//
// A row holds none of the literals a progress plugin asks for, so no
// list of literals can let it through; but a header usually does
// ("Loss", "iteration", "epoch"). Rows extends a Filter with that: once
// a line that passes looks like a header, the lines that look like its
// rows pass too, until rowGap lines in a row are neither. A name/value
// table drawn with pipes ("| policy_loss | -0.01 |") has no header: a
// row of it that passes (its name has a literal) lets the others pass. The shapes are
// The rows above the first one that passes wait (up to maxPend; a run of
// rows, nothing between) and go with it: a table's first names often have
// no literal ("| approxkl | 0.0007 |" above "| total_timesteps | ... |").
// The shapes are
// strict (aligned columns, mostly numbers, no "key: value") so that prose
// and ordinary log records do not arm it or pass through it; a plugin
// that reads tables checks the same shapes (package tables).

// rowGap is how many lines that are neither a row nor pass the filter
// end a table (a blank line and a short summary may sit between rows).
const rowGap = 8

// maxPend bounds the name/value rows kept until one passes.
const maxPend = 64

// Rows is the state of one output stream's table, if any; the zero value
// is ready, with no table seen.
type Rows struct {
	on   bool     // a header passed; its rows pass
	miss int      // lines since the last row or passing line
	prev string   // the line before, when it did not pass
	pend []string // the name/value rows just above, none of which passed
}

// Match is f.Match with table rows: it reports whether line passes, and
// the lines to send before it: when line is a header whose line before
// (which did not pass) is a header too (a name split over two lines:
// "average" above "loss"), that line; when line is the first name/value
// row that passes, the rows of its table above it.
func (r *Rows) Match(f *Filter, line string) (pass bool, before []string) {
	if Opens(line) {
		r.on, r.miss, r.prev, r.pend = true, 0, "", nil
		return true, nil
	}
	if f.Match(line) {
		kv := kvRow(line)
		if tables.Header(line) || kv {
			if r.prev != "" && tables.Header(r.prev) {
				before = []string{r.prev}
			}
			if kv && !r.on {
				before = r.pend
			}
			r.on, r.miss = true, 0
		}
		r.prev, r.pend = "", nil
		return true, before
	}
	if r.on {
		if tables.Row(line) || kvRow(line) || tables.PipeRow(line) {
			r.miss, r.prev = 0, ""
			return true, nil
		}
		if r.miss++; r.miss > rowGap {
			r.on = false
		}
	}
	switch {
	case !kvRow(line):
		r.pend = nil
	case len(r.pend) < maxPend:
		r.pend = append(r.pend, line)
	}
	r.prev = line
	return false, nil
}

func kvRow(line string) bool {
	_, _, ok := tables.KVRow(line)
	return ok
}

// Opens reports a line that starts a table with no literal needed: a
// header drawn with pipes names its columns between them. It passes
// whatever the filter; a caller that asks a Filter alone whether a
// stream may hold progress (Host.ProgressFilter) asks this too.
func Opens(line string) bool {
	return len(line) > 0 && (line[0] == '|' || line[0] == ' ') && tables.PipeHeader(line)
}
