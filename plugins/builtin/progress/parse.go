// Package progress is runbox's default progress plugin: it reads what a
// person would read off a training job's screen (tqdm and Lightning bars,
// Keras, Hugging Face Trainer, MLX-LM, XGBoost/LightGBM, fastai,
// detectron2/MMCV, generic "Step 45/100" lines and the runbox
// ##PROGRESS## contract) and turns it into sdk.Progress updates.
//
// Parse is stateless: what it needs to remember between batches comes
// back in ParseInput.Last (the run's progress) and ParseInput.State (what
// it returned as ParseOutput.State: the counters of counter.go). It is built as a wasip1 reactor by
// ./wasm and embedded by plugins/builtin.
//
// Nested bars: a tqdm bar whose description is just an epoch word
// ("Epoch", "Epochs", "epoch") is the outer epoch bar; it sets Epoch and
// EpochTotal only (plus Percentage while no inner bar has given a total).
// Any other bar is the step bar: Step, Total, Percentage, rate and ETA.
// A description "Epoch 3" or "Epoch 3/10" sets the epoch and is still the
// step bar. The last redraw wins, as on the screen.
package progress

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/runbox/runbox/plugins/prefilter/tables"
	"github.com/runbox/runbox/sdk"
)

// state is what Parse knows while it walks one batch.
type state struct {
	total      int64 // step total known so far (inner bar)
	step       int64 // the step known so far
	epoch      int64 // the epoch known so far, and its total
	epochTotal int64
	source     string   // format of the latest update
	fastaiCols []string // fastai table header, if known
	glued      string   // text printed right after a bar, to parse next
	side       bool     // the line was a side bar (sidebar.go): no update
	instant    bool     // the line's bar took under a second so far ([00:00<...)
	cols       []string // a metrics table's header (table.go), if known
	phase      string   // phase of the latest update that named one
	// stopped: the job said it stopped early ("Stopping. Best
	// iteration:"); a round below the last one after it is the best
	// round reprinted, not a newer one
	stopped bool
	// a column table's header (grid.go): its columns by word and by
	// cell; gridOn once one is known
	gridOn, gridPipe     bool // gridPipe: the header is drawn with pipes
	gridWords, gridCells []gridCol
	// nested: the line being parsed holds a tqdm bar drawn below another
	// (tqdm moves the cursor back up after it: ESC [A).
	nested bool
	// metrics of the update the parsers returned (instead of a map in
	// it), in order; emit takes them. parseLine empties it before each
	// parser it tries.
	metrics []metric
	mbuf    [8]metric // metrics' first backing array
	names   []string  // metric names built by the parsers (intern)
	// mlog: every metric the batch's updates set, in order; marks: the
	// batch's progress at each update a history keeps (emit, kept).
	mlog  []metric
	marks []keptMark
	tail  bool     // updates came after the last mark
	sc    *scratch // where mlog and marks are borrowed from
	// the counters' memo (counter.go): the input's, decoded on first use
	memoIn string
	memo   *memo
}

// addMetric records a metric of the line being parsed (NaN and ±Inf
// included), as addMetric does into a map: a map per line costs a guest
// (Go compiled to wasm) about as much as all the rest of the line's
// parsing.
func (st *state) addMetric(k string, v float64) {
	if k == "" {
		return
	}
	st.metrics = append(st.metrics, metric{k, v})
}

// intern returns string(b), the same string for the same bytes within a
// batch: MLX lines repeat their metric names, and a guest pays dearly
// for each allocation.
func (st *state) intern(b []byte) string {
	for _, s := range st.names {
		if s == string(b) {
			return s
		}
	}
	s := string(b)
	if len(st.names) < 16 {
		st.names = append(st.names, s)
	}
	return s
}

// hasMetric reports whether the line being parsed recorded metric k.
func (st *state) hasMetric(k string) bool {
	for _, m := range st.metrics {
		if m.k == k {
			return true
		}
	}
	return false
}

type metric struct {
	k string
	v float64
}

func newState(last *sdk.Progress) *state {
	st := &state{}
	st.metrics = st.mbuf[:0]
	if last == nil {
		return st
	}
	st.total = last.Total
	st.step, st.epoch, st.epochTotal = last.Step, last.Epoch, last.EpochTotal
	st.source = last.Source
	st.phase = last.Phase
	st.stopped = last.Message == stoppedMessage
	if last.Source == "fastai" {
		st.fastaiCols = fastaiColsFromMessage(last.Message)
	}
	st.cols = tableColsFromMessage(last.Message)
	if h, ok := gridOf(last.Message); ok {
		st.setGrid(h)
	}
	return st
}

func (st *state) apply(u *sdk.Progress) {
	if u.Total != 0 {
		st.total = u.Total
	}
	st.step, st.epoch, st.epochTotal = orInt(u.Step, st.step), orInt(u.Epoch, st.epoch), orInt(u.EpochTotal, st.epochTotal)
	if u.Source != "" {
		st.source = u.Source
	}
	if u.Phase != "" {
		st.phase = u.Phase
	}
}

// Parse turns a batch of lines into the batch's progress: the updates its
// lines yield, in order, as sdk.ParseOutput.Thinned keeps them (one per
// update with metrics, a new step or a new percentage, the others folded
// into it; at most sdk.MaxUpdates, evenly thinned, the last kept), so the
// host's metric history sees each step of a fast run; no update when no
// line yields one.
//
// The rows of a name/value table above its first row with a literal come
// in the same batch, before it (prefilter.Rows): a batch with such a row
// reads the others too (kvLiteral).
func Parse(in sdk.ParseInput) sdk.ParseOutput {
	var acc sdk.Progress
	n := 0
	var st *state
	// A table's rows hold no literal: once its header is known, a line
	// of its shape is one (grid.go); above: the line before, when no
	// literal let it in (a header's first line).
	gridOn := in.Last != nil && strings.HasPrefix(in.Last.Message, gridPrefix)
	kvOn := in.Last != nil && in.Last.Source == "table" || kvLiteral(in.Lines) // a name/value table's rows
	above := ""
	for _, raw := range in.Lines {
		f := scanLine(raw)
		if u, ok := tableLine(raw, f, kvOn, gridOn, in, &st); ok {
			if u.Message != "" {
				gridOn = true // a header drawn with pipes
			} else {
				notBack(&u, &acc, in.Last)
			}
			kvOn = kvOn || u.Message == ""
			st.emit(&acc, &u)
			n++
			above = ""
			continue
		}
		if f&fPre == 0 || notText(raw) {
			above = raw
			continue
		}
		hdr := raw // a header's columns are where raw has them
		var s string
		nested := false
		if f&fRaw != 0 {
			nested = strings.Contains(raw, "\x1b[A")
			s = clean(raw)
			f = classify(s)
		} else {
			// s is a substring of raw: raw's markers cover s's, and a
			// marker s lacks only runs a parser that declines.
			s = trimPlain(raw)
		}
		if len(s) < 3 {
			continue
		}
		// JSON pasted into HTML: {&quot;epoch&quot;: 27, ...}
		if q := unquoteHTML(s); len(q) != len(s) {
			s = q
			f = classify(s)
		}
		if st == nil {
			st = newState(in.Last)
			st.memoIn = in.State
			st.borrow()
		}
		st.nested = nested
		u, ok := parseLine(s, f, st)
		if ok && u.Step == 0 && u.Total == 0 && u.Percentage == 0 && u.Epoch == 0 &&
			len(st.metrics)+len(u.Metrics) > 0 && !st.side && u.Source != "table" && u.Message == "" {
			// metrics with no step: a counter across lines of this shape
			// may be the step (counter.go)
			st.countShape(s, &u)
		}
		if (!ok || u.Source == "table") && !st.side && tables.Header(s) {
			if f&fRaw != 0 {
				hdr = s
			}
			u, ok = gridHeader(hdr, above, st), true
			gridOn = true
		}
		above = ""
		if ok && st.stopped && u.Step > 0 && u.Step < st.step {
			ok = false // the best round, reprinted after an early stop
		}
		if ok && !st.side {
			kvOn = kvOn || u.Source == "table"
			st.emit(&acc, &u)
			n++
		}
		st.side, st.instant = false, false
		// At most one glued piece per line: a glued piece's own glued
		// text is dropped.
		if g := st.glued; g != "" {
			st.glued = ""
			if u, ok := parseLine(g, classify(g), st); ok && !st.side {
				st.emit(&acc, &u)
				n++
			}
			st.side, st.instant = false, false
			st.glued = ""
		}
	}
	state := in.State
	if st != nil && st.memo != nil && st.memo.dirty {
		state = st.memo.encode()
	}
	if n == 0 {
		if st != nil {
			st.release()
		}
		return sdk.ParseOutput{State: state}
	}
	out := sdk.ParseOutput{Updates: st.kept(&acc), State: state}
	st.release()
	return out
}

// emit sanitises u, records it in st and merges it into acc (the batch's
// updates so far, folded) as Progress.Merge does (the numbers without a
// branch: in a guest each taken branch costs a check for a timeout); its
// metrics go to st.mlog, and an update a history keeps apart (metrics, a
// new step or percentage) marks acc (kept).
func (st *state) emit(acc *sdk.Progress, u *sdk.Progress) {
	// Out of range, NaN or infinite numbers are "not known": a float's
	// bits compare as an unsigned number, and every negative one (-0
	// included), NaN and +Inf is above 100's or the largest float's.
	u.Percentage = upTo(u.Percentage, 100)
	u.ETASeconds = upTo(u.ETASeconds, math.MaxFloat64)
	if r := upTo(u.Rate, math.MaxFloat64); r != u.Rate {
		u.Rate, u.RateUnit = 0, "" // NaN != 0 too
	}
	st.apply(u)
	keep := len(u.Metrics)+len(st.metrics) > 0 ||
		u.Step != 0 && u.Step != acc.Step || u.Percentage != 0 && u.Percentage != acc.Percentage
	acc.Step = orInt(u.Step, acc.Step)
	acc.Total = orInt(u.Total, acc.Total)
	acc.Percentage = orFloat(u.Percentage, acc.Percentage)
	if u.Epoch != 0 {
		acc.EpochExact = u.EpochExact // as sdk.Progress.Merge
	}
	acc.Epoch = orInt(u.Epoch, acc.Epoch)
	acc.EpochTotal = orInt(u.EpochTotal, acc.EpochTotal)
	acc.ETASeconds = orFloat(u.ETASeconds, acc.ETASeconds)
	acc.Rate = orFloat(u.Rate, acc.Rate)
	if u.Phase != "" {
		acc.Phase = u.Phase
	}
	if u.RateUnit != "" {
		acc.RateUnit = u.RateUnit
	}
	if u.Message != "" {
		acc.Message = u.Message
	}
	if u.Source != "" {
		acc.Source = u.Source
	}
	for k, v := range u.Metrics {
		st.mlog = append(st.mlog, metric{k, v})
	}
	st.mlog = append(st.mlog, st.metrics...)
	st.metrics = st.metrics[:0]
	st.tail = !keep
	if keep {
		st.marks = append(st.marks, keptMark{*acc, len(st.mlog)})
	}
}

// metricFold merges a batch's metrics, later values winning, in a small
// open-addressing table, and makes the map once at the end: merging a key
// into a Go map costs a hash and a byte-at-a-time compare of the key, each
// a guest's many checks for a timeout; here it is a hash and a compare of
// eight bytes at a time. Past 48 keys the rest go to a map.
type metricFold struct {
	slot [64]struct {
		k string
		v float64
		h uint64 // 0: empty
	}
	n    int
	over map[string]float64 // keys set once the table was full
}

func (m *metricFold) set(k string, v float64) {
	if m.over != nil {
		m.over[k] = v
		return
	}
	h := keyHash(k)
	for i := h; ; i++ {
		e := &m.slot[i&63]
		if e.h == 0 {
			if m.n == 48 {
				m.over = map[string]float64{k: v}
				return
			}
			e.k, e.v, e.h = k, v, h
			m.n++
			return
		}
		if e.h == h && keyEq(e.k, k) {
			e.v = v
			return
		}
	}
}

// build returns the merged metrics (nil when none).
func (m *metricFold) build() map[string]float64 {
	if m.n == 0 {
		return nil
	}
	out := make(map[string]float64, m.n+len(m.over))
	for i := range m.slot {
		if e := &m.slot[i]; e.h != 0 {
			out[e.k] = e.v
		}
	}
	for k, v := range m.over { // set after the table was full: newer
		out[k] = v
	}
	return out
}

// keyHash hashes a metric key (never empty); never 0.
func keyHash(k string) uint64 {
	n := len(k)
	var a, b uint64
	if n >= 8 {
		a, b = word(k, 0), word(k, n-8)
	} else {
		a = uint64(k[0]) | uint64(k[n>>1])<<8 | uint64(k[n-1])<<16
	}
	h := (a*0x9E3779B97F4A7C15 ^ b*0xC2B2AE3D27D4EB4F ^ uint64(n)) * 0x165667B19E3779F9
	return h ^ h>>29 | 1
}

// keyEq is a == b, eight bytes at a time.
func keyEq(a, b string) bool {
	n := len(a)
	if n != len(b) {
		return false
	}
	if n >= 8 {
		for i := 0; i < n-8; i += 8 {
			if word(a, i) != word(b, i) {
				return false
			}
		}
		return word(a, n-8) == word(b, n-8)
	}
	if n >= 4 {
		return load4(a, 0) == load4(b, 0) && load4(a, n-4) == load4(b, n-4)
	}
	return n == 0 || a[0] == b[0] && a[n>>1] == b[n>>1] && a[n-1] == b[n-1]
}

// load4 reads s[i:i+4] as a little-endian word.
func load4(s string, i int) uint32 {
	t := s[i : i+4]
	return uint32(t[0]) | uint32(t[1])<<8 | uint32(t[2])<<16 | uint32(t[3])<<24
}

// upTo returns v when 0 <= v <= max (max > 0), else 0, with no branch.
func upTo(v, max float64) float64 {
	a, b := math.Float64bits(v), math.Float64bits(max)
	over := (^b&a | (^b|a)&(b-a)) >> 63 // a > b, unsigned
	return math.Float64frombits(a &^ -over)
}

// orInt returns a, or b when a is zero ("not known").
func orInt(a, b int64) int64 {
	m := (a | -a) >> 63 // all ones when a != 0
	return a&m | b&^m
}

// orFloat returns a, or b when a is zero (of either sign), as Merge's
// a != 0 decides.
func orFloat(a, b float64) float64 {
	x := math.Float64bits(a) &^ (1 << 63)
	m := uint64(int64(x|-x) >> 63)
	return math.Float64frombits(math.Float64bits(a)&m | math.Float64bits(b)&^m)
}

// clean strips what the terminal or a paste adds around the text: ANSI
// escapes, carriage returns, markdown quote markers and surrounding space.
func clean(s string) string {
	if strings.Contains(s, "#0") {
		// syslog's escapes of control bytes (CloudWatch keeps them):
		// CR, ESC, and backspaces that erase nothing we keep
		s = octalEscapes.Replace(s)
	}
	if strings.IndexByte(s, 0x1b) >= 0 {
		s = stripANSI(s)
	}
	if k := strings.LastIndexByte(s, '\r'); k >= 0 {
		// The host splits on \r; a stray one left here means the text after
		// the last one is what the screen shows.
		if rest := strings.TrimSpace(s[k+1:]); rest != "" {
			s = rest
		} else {
			s = s[:k]
		}
	}
	return trimPlain(s)
}

var octalEscapes = strings.NewReplacer("#015", "\r", "#033", "\x1b", "#010", "")

// trimPlain is clean for a line without ESC and CR bytes.
func trimPlain(s string) string {
	if len(s) == 0 {
		return s
	}
	// Nothing to trim when s starts and ends with printable ASCII (and
	// does not start with '>'): the common case, checked with no branch.
	if inRange(s[0], 0x21, 0x7f)&inRange(s[len(s)-1], 0x21, 0x7f)&^eq(uint64(s[0]), '>')&^eq(uint64(s[0]), '+') != 0 {
		return s
	}
	s = strings.TrimSpace(s)
	for len(s) > 0 && s[0] == '>' {
		s = strings.TrimLeft(s[1:], " ")
	}
	if len(s) > 1 && s[0] == '+' && (isLetter(s[1]) || isDigit(s[1])) {
		s = s[1:] // a line pasted from a diff ("+Epoch 3/10"); "+ cmd" is a shell trace
	}
	return s
}

// stripANSI removes CSI (ESC [ ... final), OSC (ESC ] ... BEL/ST) and
// two-byte escape sequences.
func stripANSI(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != 0x1b {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(s) {
			break
		}
		switch s[i+1] {
		case '[':
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
		case ']':
			j := i + 2
			for j < len(s) && s[j] != 0x07 && !(s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\') {
				j++
			}
			if j < len(s) && s[j] == 0x1b {
				j++
			}
			i = j
		default:
			i++
		}
	}
	return b.String()
}

// notText reports a line that is not text: a NUL or more than one other
// control byte (tab, ESC, CR and backspace aside), or bytes that are not
// UTF-8. Binary output read as lines must not make up a progress bar
// (issue #11). Only lines that passed the prefilter get here.
func notText(s string) bool {
	ctl := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' && c != 0x1b && c != '\r' && c != '\b' {
			if c == 0 {
				return true
			}
			ctl++
		}
	}
	return ctl > 1 || !utf8.ValidString(s)
}

// unquoteHTML turns the HTML entity &quot; back into '"'.
func unquoteHTML(s string) string {
	if index(s, "&quot;") < 0 {
		return s
	}
	return strings.ReplaceAll(s, "&quot;", "\"")
}

// kvLiteral reports a name/value table row among lines that a literal let
// in: the rows around it, which the host sent with it, are that table's.
func kvLiteral(lines []string) bool {
	for _, raw := range lines {
		t := strings.TrimLeft(raw, " ")
		if len(t) == 0 || t[0] != '|' && t[0] != 0xe2 {
			continue
		}
		if _, _, ok := tables.KVRow(raw); ok && scanLine(raw)&fPre != 0 {
			return true
		}
	}
	return false
}
