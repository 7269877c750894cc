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
// strict (aligned columns, mostly numbers, no "key: value") so that prose
// and ordinary log records do not arm it or pass through it; a plugin
// that reads tables checks the same shapes (package tables).

// rowGap is how many lines that are neither a row nor pass the filter
// end a table (a blank line and a short summary may sit between rows).
const rowGap = 8

// Rows is the state of one output stream's table, if any; the zero value
// is ready, with no table seen.
type Rows struct {
	on   bool   // a header passed; its rows pass
	miss int    // lines since the last row or passing line
	prev string // the line before, when it did not pass
}

// Match is f.Match with table rows: it reports whether line passes, and
// when line is a header whose line before (which did not pass) is a
// header too (a name split over two lines: "average" above "loss"), that
// line, to be sent before it.
func (r *Rows) Match(f *Filter, line string) (pass bool, before string) {
	if Opens(line) {
		r.on, r.miss, r.prev = true, 0, ""
		return true, ""
	}
	if f.Match(line) {
		if tables.Header(line) || kvRow(line) {
			r.on, r.miss = true, 0
			if r.prev != "" && tables.Header(r.prev) {
				before = r.prev
			}
		}
		r.prev = ""
		return true, before
	}
	if r.on {
		if tables.Row(line) || kvRow(line) || tables.PipeRow(line) {
			r.miss, r.prev = 0, ""
			return true, ""
		}
		if r.miss++; r.miss > rowGap {
			r.on = false
		}
	}
	r.prev = line
	return false, ""
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
