package progress

import (
	"strings"

	"github.com/runbox/runbox/plugins/builtin/decl"
	"github.com/runbox/runbox/sdk"
)

// A reader is the code behind a format entry (formats.go): its gate, which
// only skips a reader that could not accept the line, and the reader.
// need is a cheap first gate: the reader runs only when the line has one
// of these feature bits (scanLine); 0: always ask gate.
type reader struct {
	need uint64
	gate func(s string, f uint64) bool
	read func(s string, f uint64, st *state) (sdk.Progress, bool)
	// final: once the gate passes, the reader's answer is the line's
	// (no later reader is tried).
	final bool
}

// readers binds format names to their code. A declarative format (its
// decl entries, formats.go) has only its cheap gate here, or nothing: its
// reader is readDecl. A format with neither is read by another entry's
// (its fields say which); TestFormatsHaveReaders checks every name on both
// sides.
var readers = map[string]reader{
	"runbox": {need: fRunbox, final: true,
		read: func(s string, _ uint64, _ *state) (sdk.Progress, bool) { return parseRunbox(s) }},
	// tqdm reads "%|" bars, rich bars (━ and •) and bars without a bar
	// that show a rate.
	"tqdm": {need: fPctBar | fTqdmRate | fHeavy,
		gate: func(_ string, f uint64) bool {
			return f&(fPctBar|fTqdmRate) != 0 || f&(fHeavy|fBullet) == fHeavy|fBullet
		},
		read: func(s string, _ uint64, st *state) (sdk.Progress, bool) { return parseTqdm(s, st) }},
	// keras reads an "Epoch 3/10" header (two fields) or a count followed
	// by a bar.
	"keras": {need: fDigitSlash,
		gate: func(s string, f uint64) bool {
			return f&(fEpochCap|fETA|fSlashS|fHeavy|fLossLow) != 0 && (mayBeKerasBar(s) || kerasHeader(s))
		},
		read: func(s string, _ uint64, st *state) (sdk.Progress, bool) { return parseKeras(s, st) }},
	"hf-dict": {need: fBraceQuote,
		gate: func(_ string, f uint64) bool { return f&(fEpochLow|fLossAny) != 0 },
		read: func(s string, _ uint64, st *state) (sdk.Progress, bool) { return parseHFDict(s, st) }},
	// mlx-start is data (formats.go); the gate is its cheap bit.
	"mlx-start": {need: fStarting},
	"mlx": {need: fIterSpace,
		read: func(s string, _ uint64, st *state) (sdk.Progress, bool) { return parseMLX(s, st) }},
	"mm": {need: fIterColon | fEpochCap | fIterCap,
		gate: func(s string, f uint64) bool {
			return f&fIterColon != 0 || f&fBracket != 0 && mmGate(s, f)
		},
		read: func(s string, _ uint64, st *state) (sdk.Progress, bool) { return parseMM(s, st) }},
	"boost": {need: fBracketTab,
		read: func(s string, _ uint64, st *state) (sdk.Progress, bool) { return parseBoost(s, st) }},
	"fastai": {
		gate: func(s string, f uint64) bool {
			return f&fPctBracket != 0 || isDigit(s[0]) || strings.HasPrefix(s, "epoch")
		},
		read: parseFastai},
	// (Every reader from here on needs a keyword of fGeneric: a line with
	// none goes to the record reader, through the keyword entry.)
	// hf-notebook and hf-banner are data (formats.go): only their cheap
	// gates are code.
	"hf-notebook": {need: fEpochCap,
		gate: func(s string, _ uint64) bool { return s[0] == '[' && s[len(s)-1] == ']' }},
	"hf-banner": {need: fEpochsEq | fStepsEq,
		gate: func(_ string, f uint64) bool {
			return f&fBrace == 0 && (f&fEpochCap != 0 && f&fEpochsEq != 0 || f&fEpochCap == 0 && f&fStepsEq != 0)
		}},
	"keyword": {final: true, read: readKeyword},
}

// bound is formats' readers in the table's order: a declarative
// format's is readDecl over its entries, behind the gate readers gives it.
var bound = func() []reader {
	var out []reader
	for k := range formats {
		f := &formats[k]
		r, ok := readers[f.name]
		if len(f.decl) > 0 {
			for i := range f.decl {
				if err := f.decl[i].Compile(); err != nil {
					panic("progress: format " + f.name + ": " + err.Error())
				}
			}
			r.read, ok = readDecl(f.decl), true
		}
		if ok {
			out = append(out, r)
		}
	}
	return out
}()

// readDecl is the one generic reader of declarative entries (package
// decl), the one a bundle's rules file is read by too: the first entry
// that reads the line gives its update.
func readDecl(es []decl.Entry) func(s string, f uint64, st *state) (sdk.Progress, bool) {
	return func(s string, _ uint64, st *state) (sdk.Progress, bool) {
		for i := range es {
			u, c, ok := es[i].Read(s, st.addMetric)
			if !ok {
				st.metrics = st.metrics[:0]
				continue
			}
			if c.Entry != "" {
				st.countEntry(c, &u)
			}
			return u, true
		}
		return sdk.Progress{}, false
	}
}

// parseFormats runs the readers that can match s, in the format table's
// order (most specific first); a reader that declines leaves no metrics.
func parseFormats(s string, f uint64, st *state) (u sdk.Progress, ok bool) {
	for i := range bound {
		r := &bound[i]
		if r.need != 0 && f&r.need == 0 || r.gate != nil && !r.gate(s, f) {
			continue
		}
		st.metrics = st.metrics[:0]
		if u, ok = r.read(s, f, st); ok || r.final {
			return u, ok
		}
	}
	st.metrics = st.metrics[:0]
	return u, false
}

// readKeyword is the keyword entry's reader: "Epoch 3/10", "step 45",
// "Progress: 45%" with the metrics beside them (parseGeneric), the record
// reader for what it leaves unknown, and the record reader alone for a
// line with no keyword.
func readKeyword(s string, f uint64, st *state) (u sdk.Progress, ok bool) {
	if f&fGeneric == 0 {
		return readRecord(s, st, false, false, true)
	}
	if evalRecord(s) {
		return u, false // an evaluation report ("Test set: Average loss: ...")
	}
	if u, ok = parseGeneric(s, f, st); !ok {
		st.metrics = st.metrics[:0]
		return readRecord(s, st, false, true, f&fOpen != 0)
	}
	if st.total > 0 && u.Total > 0 && u.Total != st.total && f&fBracket != 0 {
		// Two counters, "[1/3][100/1000] | 399/1932 batches": the one
		// whose total the run announced ("Total optimization steps =
		// 1000") is the run's.
		if e, et, n, m, ok := bracketPairs(recordText(s)); ok && m == st.total {
			u.Step, u.Total, u.Percentage = n, m, pct(n, m)
			if u.Epoch == 0 {
				u.Epoch, u.EpochTotal = e, et
			}
		}
	}
	// The record reader knows shapes the keyword reader does not (a
	// spaced total, bracket pairs, names of several words): it fills
	// what the keyword reader left unknown.
	if incomplete(&u, st) {
		if r, ok := readRecord(s, st, true, true, true); ok {
			fillUnknown(&u, &r)
		}
	}
	return u, true
}
