package progress

import (
	"math/bits"
	"strings"
	"unsafe"

	"github.com/runbox/runbox/sdk"
)

// Feature bits found by scanLine: the markers the format parsers look
// for. Each parser runs only when the markers it cannot do without are
// present, so a line costs one pass plus the parsers that can match it.
// A bit marked "superset" may be set where the marker is not quite there;
// it only gates a parser that then declines.
const (
	fRunbox     uint64 = 1 << iota // ##PROGRESS##
	fPctBar                        // %|
	fPctBracket                    // "% ["
	fHeavy                         // ━
	fSlashS                        // /s (it/s, /s], /s,, /step, /sample)
	fSlashI                        // /i (s/it)
	fDigitSlash                    // a digit then '/' (superset: any of 0x30-0x3F)
	fETA                           // ETA
	fBrace                         // {
	fBracket                       // [
	fBracketTab                    // "]\t"
	fEpochCap                      // Epoch
	fEpochLow                      // epoch
	fEpochUp                       // EPOCH
	fStepCap                       // Step
	fStepLow                       // step
	fStepUp                        // STEP
	fIterCap                       // Iter
	fIterLow                       // iter
	fIterUp                        // ITER
	fIterColon                     // iter:
	fIterSpace                     // "Iter "
	fBatchCap                      // Batch
	fBatchLow                      // batch
	fProgCap                       // Progress
	fProgLow                       // progress
	fLossLow                       // loss
	fLossCap                       // Loss
	fLossUp                        // LOSS
	fStarting                      // Starting training (superset: "Starting?trainin")
	fTqdmRate                      // "/s]", "/s,", "it/s", "s/it": what tqdmNoBar needs
	fBullet                        // •
	fEpochsEq                      // "Epochs =" (Hugging Face banner; superset)
	fStepsEq                       // "steps = " (Hugging Face banner)
	fBraceQuote                    // '{' then a quote (Hugging Face dict)
	fPre                           // a Prefilter literal
	fRaw                           // ESC or CR: the line needs clean's slow path
)

const (
	fLossAny = fLossLow | fLossCap | fLossUp
	// fOpen: the literals the host sends a line for wherever they are
	// (no confirm entry): a record reader may accept such a line by its
	// shape; a line with only confirmed literals it may accept only by
	// a keyword the confirm entries also accept.
	fOpen    = fEpochCap | fEpochLow | fEpochUp | fLossAny
	fGeneric = fEpochCap | fEpochLow | fEpochUp | fStepCap | fStepLow | fStepUp |
		fIterCap | fIterLow | fIterUp | fBatchCap | fBatchLow | fProgCap | fProgLow | fLossAny
)

// A mark is one word scanLine looks for: its bytes (at most 16, read as
// two little-endian words) and the bits it sets. back is how many bytes
// before the position it starts (0, 1 or 2): "it/s" and "s/it" are found
// at their '/'.
type mark struct {
	word string
	back int
	bits uint64
}

var marks = func() []mark {
	m := []mark{
		{"##PROGRESS##", 0, fRunbox}, {"%|", 0, fPctBar}, {"% [", 0, fPctBracket},
		{"\u2501", 0, fHeavy}, {"\u2022", 0, fBullet},
		{"/s", 0, fSlashS}, {"/i", 0, fSlashI}, {"/s]", 0, fTqdmRate}, {"/s,", 0, fTqdmRate},
		{"it/s", 2, fTqdmRate}, {"s/it", 1, fTqdmRate},
		{"[", 0, fBracket}, {"]\t", 0, fBracketTab},
		{"{", 0, fBrace}, {"{'", 0, fBraceQuote}, {"{\"", 0, fBraceQuote},
		{"\x1b", 0, fRaw}, {"\r", 0, fRaw},
		// syslog/CloudWatch write control bytes as "#015" (CR), "#033" (ESC)
		{"#015", 0, fRaw}, {"#033", 0, fRaw},
		{"ETA", 0, fETA}, {"Epoch", 0, fEpochCap}, {"Epochs =", 0, fEpochsEq}, {"EPOCH", 0, fEpochUp},
		{"epoch", 0, fEpochLow},
		{"Step", 0, fStepCap}, {"STEP", 0, fStepUp}, {"Starting trainin", 0, fStarting},
		{"step", 0, fStepLow}, {"steps = ", 0, fStepsEq},
		{"Iter", 0, fIterCap}, {"Iter ", 0, fIterSpace}, {"ITER", 0, fIterUp},
		{"iter", 0, fIterLow}, {"iter:", 0, fIterColon},
		{"Batch", 0, fBatchCap}, {"batch", 0, fBatchLow},
		{"Progress", 0, fProgCap}, {"progress", 0, fProgLow},
		{"Loss", 0, fLossCap}, {"LOSS", 0, fLossUp}, {"loss", 0, fLossLow},
	}
	for _, p := range Prefilter {
		m = append(m, mark{p, 0, fPre})
	}
	return m
}()

// rareFirst are first bytes of marks that are marked with any next byte.
const rareFirst = "#%/[]{\x1b\r"

// markPairs has a bit for every pair of bytes (low byte first) at which a
// mark may start: the first two bytes of each mark, and every pair that
// starts with a byte of rareFirst (one-byte marks, and '/' for the marks
// found at it). markRows lists, for the first byte of a pair, the marks
// to compare there (markRow: up to eight, unused ones never match).
var markPairs, markRowOf, markRows = func() (pairs [1 << 16 / 64]uint64, rowOf [256]uint8, table [64]markRow) {
	set := func(a, b byte) {
		k := uint16(a) | uint16(b)<<8
		pairs[k>>6] |= 1 << (k & 63)
	}
	for i := 0; i < len(rareFirst); i++ {
		for b := range 256 {
			set(rareFirst[i], byte(b))
		}
	}
	rows := make([]markRow, 1) // row 0: nothing
	for i := range rows[0] {
		rows[0][i] = noMatch
	}
	nFastai := 0
	for _, m := range marks {
		if isFastaiLiteral(m.word) {
			// Checked by marksAt at the first space (a row would need a
			// mark per digit).
			nFastai++
			set(' ', ' ')
			continue
		}
		at := m.word[m.back]
		if len(m.word) > 16 || m.back > 2 || strings.IndexByte(m.word, 0) >= 0 {
			panic("progress: bad mark " + m.word)
		}
		if len(m.word)-m.back >= 2 {
			set(at, m.word[m.back+1])
		} else if strings.IndexByte(rareFirst, at) < 0 {
			panic("progress: one-byte mark not in rareFirst: " + m.word)
		}
		if rowOf[at] == 0 {
			rows = append(rows, rows[0])
			rowOf[at] = uint8(len(rows) - 1)
		}
		row := &rows[rowOf[at]]
		k := 0
		for k < len(row) && row[k] != noMatch {
			if row[k].back == uint8(m.back) && row[k].lo == wordOf(m.word) && row[k].loMask == maskOf(len(m.word)) &&
				row[k].hiMask == maskOf(len(m.word)-8) && (len(m.word) <= 8 || row[k].hi == wordOf(m.word[8:])) {
				break // the same word: add its bits
			}
			k++
		}
		if k == len(row) {
			panic("progress: more than 8 marks at " + string(at))
		}
		if row[k] == noMatch {
			row[k] = markCand{back: uint8(m.back), lo: wordOf(m.word), loMask: maskOf(len(m.word)), hiMask: maskOf(len(m.word) - 8)}
			if len(m.word) > 8 {
				row[k].hi = wordOf(m.word[8:])
			}
		}
		row[k].bits |= m.bits
	}
	// A digit then '/': one compare for the bytes 0x30-0x3F then '/'
	// (fDigitSlash is a superset).
	row := &rows[rowOf['/']]
	k := 0
	for row[k] != noMatch {
		k++ // panics when the row is full
	}
	row[k] = markCand{back: 1, lo: '/'<<8 | '0', loMask: 0xFFF0, bits: fDigitSlash}
	if nFastai != 0 && nFastai != 10 {
		panic("progress: Prefilter has some fastai row literals but not all ten")
	}
	if len(rows) > len(table) {
		panic("progress: too many mark rows")
	}
	copy(table[:], rows)
	return pairs, rowOf, table
}()

type markRow [8]markCand

// markCand compares the bytes from back bytes before a position: the
// first eight (masked by loMask) with lo, the next eight with hi.
type markCand struct {
	lo, loMask, hi, hiMask, bits uint64
	back                         uint8
}

var noMatch = markCand{lo: 1} // loMask 0: never equal

// wordOf reads up to eight bytes of w as a little-endian word.
func wordOf(w string) (x uint64) {
	for i := min(len(w), 8) - 1; i >= 0; i-- {
		x = x<<8 | uint64(w[i])
	}
	return x
}

// maskOf has the low n (clamped to 0..8) bytes set.
func maskOf(n int) uint64 {
	switch {
	case n <= 0:
		return 0
	case n >= 8:
		return ^uint64(0)
	}
	return 1<<(8*uint(n)) - 1
}

func hasAt(s string, i int, w string) bool {
	return len(s)-i >= len(w) && s[i:i+len(w)] == w
}

// scanLine finds, in one pass over s, the marks s contains: fPre when
// s has a Prefilter literal, fRaw when it has ESC or CR, and the feature
// bits. Sixteen positions per step look up their pair of bytes in
// markPairs; at the few marked ones marksAt compares the marks of that
// byte's row. One loop iteration per sixteen bytes and per marked
// position (see fastscan.go for why that is what counts).
func scanLine(s string) (f uint64) {
	n := len(s)
	if n < 8 {
		return scanShort(s)
	}
	for b := 0; b < n; b += 16 {
		w, v := ld8(s, b), ld8(s, b+8)
		x := ld8(s, b+16) & 0xff
		hm := pairMarks(w, v&0xff) | pairMarks(v, x)<<8
		for ; hm != 0; hm &= hm - 1 {
			f |= marksAt(s, b+bits.TrailingZeros64(hm))
		}
	}
	return f
}

// pairMarks has bit j set when the pair of bytes at j of w (the next
// byte after w is x) is in markPairs.
func pairMarks(w, x uint64) uint64 {
	k0, k1, k2, k3 := uint16(w), uint16(w>>8), uint16(w>>16), uint16(w>>24)
	k4, k5, k6, k7 := uint16(w>>32), uint16(w>>40), uint16(w>>48), uint16(w>>56|x<<8)
	return markPairs[k0>>6]>>(k0&63)&1 | markPairs[k1>>6]>>(k1&63)&1<<1 |
		markPairs[k2>>6]>>(k2&63)&1<<2 | markPairs[k3>>6]>>(k3&63)&1<<3 |
		markPairs[k4>>6]>>(k4&63)&1<<4 | markPairs[k5>>6]>>(k5&63)&1<<5 |
		markPairs[k6>>6]>>(k6&63)&1<<6 | markPairs[k7>>6]>>(k7&63)&1<<7
}

// scanShort is scanLine for a line of fewer than eight bytes: the same
// scan over a copy padded with zero bytes (which no mark contains).
func scanShort(s string) (f uint64) {
	var buf [16]byte
	copy(buf[:], s)
	p := unsafe.String(&buf[0], 16)
	for i := 0; i < len(s); i++ {
		f |= marksAt(p, i)
	}
	return f
}

// marksAt compares the marks of s[i]'s row at i (0 <= i < len(s),
// len(s) >= 8), all eight of them, unrolled: a leaf function.
func marksAt(s string, i int) uint64 {
	var xb [4]uint64 // the words from i, i-1 and i-2 (zero bytes before s)
	xb[0] = ld8(s, i)
	k := i - 2
	before := -k &^ (-k >> 63) // how far before s: max(-k, 0)
	xb[2] = ld8(s, k+before) << (8 * uint(before) & 63)
	xb[1] = xb[2]>>8 | xb[0]>>48&0xff<<56
	x8 := ld8(s, i+8)
	r := &markRows[markRowOf[byte(xb[0])]&63]
	// fastai's "0       " (a digit, seven spaces), at its first space.
	fastai := fPre & -(eq(xb[1]>>8, 0x20202020202020) & isDigit8(xb[1]&0xff))
	return fastai | r[0].at(&xb, x8) | r[1].at(&xb, x8) | r[2].at(&xb, x8) | r[3].at(&xb, x8) |
		r[4].at(&xb, x8) | r[5].at(&xb, x8) | r[6].at(&xb, x8) | r[7].at(&xb, x8)
}

// isFastaiLiteral reports a Prefilter literal of a digit and seven spaces.
func isFastaiLiteral(w string) bool {
	return len(w) == 8 && isDigit(w[0]) && w[1:] == "       "
}

// at returns c's bits when its word is at the position xb and x8 were read at.
func (c *markCand) at(xb *[4]uint64, x8 uint64) uint64 {
	d := (xb[c.back&3]&c.loMask ^ c.lo) | (x8&c.hiMask ^ c.hi)
	return c.bits & ((d|-d)>>63 - 1)
}

// classify finds, in one pass over s, which markers it contains.
func classify(s string) uint64 { return scanLine(s) }

// parseLine reads s with the format parsers; what a line-logger format
// leaves unknown the record reader fills (record.go).
func parseLine(s string, f uint64, st *state) (u sdk.Progress, ok bool) {
	u, ok = parseFormats(s, f, st)
	if ok && st.source == "keras" && st.epochTotal > 0 && st.epoch == st.epochTotal && st.total > 0 && st.step == st.total &&
		u.Step == 0 && u.Total == 0 && u.Epoch == 0 && u.Percentage == 0 && u.Message == "" {
		// fit's last epoch is done: a line of metrics alone ("Loss: 0.51,
		// Accuracy: 74.87%") reports model.evaluate's, not training's
		st.metrics = st.metrics[:0]
		return sdk.Progress{}, false
	}
	if ok && f&(fProgLow|fProgCap) != 0 && u.Percentage == 0 && u.Total == 0 && !st.side {
		// The generic structure reader refines a named format's answer
		// with the record's own percentage key ("progress": 42.1 in a
		// dict of metrics), which is not a metric (structure.go).
		if p, k, ok := percentKeyNamed(recordText(s)); ok {
			u.Percentage = p
			st.dropMetric(k)
		}
	}
	// (Not MLX's or mmengine's lines: their parsers read them whole.)
	if ok && !st.side && (u.Source == "mmcv" || u.Source == "detectron2") && incomplete(&u, st) {
		if r, ok := readRecord(s, st, true, f&fGeneric != 0, true); ok {
			fillUnknown(&u, &r)
		}
	}
	return u, ok
}

// incomplete reports a line reader's answer without a total or without
// metrics: only then does the record reader look at the line again (a
// guest pays for every look, and most progress lines say it all).
func incomplete(u *sdk.Progress, st *state) bool {
	return u.Total == 0 || len(st.metrics) == 0
}

// fillUnknown sets u's unknown (zero) counters from r.
func fillUnknown(u, r *sdk.Progress) {
	if u.Total == 0 && r.Total != 0 && (u.Step == 0 || u.Step == r.Step) {
		u.Step, u.Total, u.Percentage = r.Step, r.Total, r.Percentage
	}
	if u.Step == 0 {
		u.Step = r.Step
	}
	if u.Epoch == 0 && u.EpochTotal == 0 { // "epoch 0 / 100" knows its total
		u.Epoch, u.EpochTotal = r.Epoch, r.EpochTotal
	}
	if u.Percentage == 0 {
		u.Percentage = r.Percentage
	}
	if u.EpochExact == 0 && r.EpochExact != 0 && (u.Epoch == 0 || u.Epoch == r.Epoch) {
		u.Epoch, u.EpochExact = r.Epoch, r.EpochExact
	}
}

// mayBeKerasBar reports whether s may hold a Keras bar for parseKeras: a
// digit, '/', then "Unknown", or digits then " [", " -" or " ━" (the
// prefixes kerasBar accepts).
func mayBeKerasBar(s string) bool {
	for i := 1; i < len(s); i++ {
		k := indexByte(s[i:], '/')
		if k < 0 {
			return false
		}
		i += k
		if isDigit(s[i-1]) && kerasAfter(s, i) {
			return true
		}
	}
	return false
}

func kerasAfter(s string, i int) bool {
	j := i + 1
	if hasAt(s, j, "Unknown") {
		return true
	}
	j += digitRun(s[j:])
	return j+1 < len(s) && s[j] == ' ' && (s[j+1] == '[' || s[j+1] == '-' || s[j+1] == 0xe2)
}

// mmGate reports whether parseMM may read s through "Epoch" or "Iter":
// parseMM looks at the first of each (not after a letter), which must be
// followed by "(phase)", or by an optional ':', spaces and '['.
func mmGate(s string, f uint64) bool {
	return f&fEpochCap != 0 && mmAfter(s, "Epoch") || f&fIterCap != 0 && mmAfter(s, "Iter")
}

func mmAfter(s, kw string) bool {
	k := index(s, kw)
	if k < 0 || k > 0 && isLetter(s[k-1]) {
		return false
	}
	j := k + len(kw)
	if j < len(s) && s[j] == '(' {
		return true
	}
	if j < len(s) && s[j] == ':' {
		j++
	}
	j = skipSpaces(s, j)
	return j < len(s) && s[j] == '['
}

// kerasHeader reports whether s may be Keras's "Epoch 3/10" header,
// which parseKeras wants as exactly two strings.Fields: after "Epoch"
// and the white space after it, no ASCII white space may follow (s is
// trimmed, so any would separate a third field). Bytes >= 0x80 are
// skipped with the white space: they may be Unicode spaces.
func kerasHeader(s string) bool {
	if len(s) < 6 || s[:6] != "Epoch " {
		return false
	}
	i := 6
	for i < len(s) && (asciiSpace(s[i]) || s[i] >= 0x80) {
		i++
	}
	for ; i < len(s); i++ {
		if asciiSpace(s[i]) {
			return false
		}
	}
	return true
}
