package prefilter

import (
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/runbox/runbox/plugins/builtin/progress"
	"github.com/runbox/runbox/sdk"
)

// manifestFilter is the prefilter the host builds for m; m's entries must
// all compile.
func manifestFilter(t testing.TB, m sdk.Manifest) *Filter {
	t.Helper()
	f, errs := New(m.Prefilter, m.PrefilterConfirm)
	if len(errs) > 0 {
		t.Fatalf("%s: %v", m.Name, errs)
	}
	return f
}

// matchSlow is the definition Filter.Match implements: some literal
// occurs in line, and if the literal has confirm entries (all of them
// valid), one of them matches around that occurrence: Before as
// `(?:P)\z` on the text before it, After as `\A(?:P)` on the text after
// it, with every byte >= 0x80 read as U+FFFD.
func matchSlow(t testing.TB, literals []string, confirms []sdk.PrefilterConfirm, line string) bool {
	if len(literals) == 0 {
		return true
	}
	for _, lit := range literals {
		var entries []sdk.PrefilterConfirm
		plain := true
		for _, c := range confirms {
			if c.Literal != lit {
				continue
			}
			if !validConfirm(c) {
				plain, entries = true, nil
				break
			}
			plain = false
			entries = append(entries, c)
		}
		for i := 0; i+len(lit) <= len(line); i++ {
			if line[i:i+len(lit)] != lit {
				continue
			}
			if plain {
				return true
			}
			for _, c := range entries {
				if refMatch(t, `(?:`+c.Before+`)\z`, line[:i]) && refMatch(t, `\A(?:`+c.After+`)`, line[i+len(lit):]) {
					return true
				}
			}
		}
	}
	return false
}

func validConfirm(c sdk.PrefilterConfirm) bool {
	_, err1 := compilePattern(c.Before, true)
	_, err2 := compilePattern(c.After, false)
	return err1 == nil && err2 == nil
}

var refCache sync.Map // pattern -> *regexp.Regexp

func refMatch(t testing.TB, pat, text string) bool {
	re, ok := refCache.Load(pat)
	if !ok {
		c, err := regexp.Compile(pat)
		if err != nil {
			t.Fatalf("reference %q: %v", pat, err)
		}
		re, _ = refCache.LoadOrStore(pat, c)
	}
	rs := make([]rune, 0, len(text))
	for i := 0; i < len(text); i++ {
		if c := text[i]; c < 0x80 {
			rs = append(rs, rune(c))
		} else {
			rs = append(rs, 0xfffd)
		}
	}
	return re.(*regexp.Regexp).MatchString(string(rs))
}

var prefilterSets = [][]string{
	nil, {""}, {"a"}, {"ab"}, {"x", "yz", "━"}, {"step", "##PROGRESS##"}, progress.Manifest.Prefilter,
}

func testLines() []string {
	return append(progress.SyntheticMix(5000), "", "a", "b", "ab", "xa", "zzzx", "yz", "y", "━", "\xe2",
		"st", "step", "ste", "1       ", "1      ", "]\t", "]", "%|", "%",
		"Step 5/10", "every 500 steps", "steps: 45/100", "45/100 steps", "a step 3", "stepstep 4",
		"batch 7 of 50", "dispatch 7", "Iter(train) [ 50/100]", "iter: 5", "writer 5", "Progress: 45%",
		"\x1b[1mStep\x1b[0m 5", "step é5", "é step 5", "step\t\t\t\t9", "STEP 1", "Batches 4/5", "abab", "ba")
}

func TestPrefilterMatchesContains(t *testing.T) {
	lines := testLines()
	for _, lits := range prefilterSets {
		f, _ := New(lits, nil)
		for _, l := range lines {
			if got, want := f.Match(l), matchSlow(t, lits, nil, l); got != want {
				t.Fatalf("%q in %q: got %v, want %v", lits, l, got, want)
			}
		}
	}
}

// confirmSets: literal sets with confirm entries, valid and not.
var confirmSets = []struct {
	lits     []string
	confirms []sdk.PrefilterConfirm
}{
	{[]string{"tep"}, []sdk.PrefilterConfirm{{Literal: "tep", After: `[ \t:=]*\d`}}},
	{[]string{"tep", "##PROGRESS##"}, []sdk.PrefilterConfirm{
		{Literal: "tep", After: `(?i:ation)?[ \t:=\[(#]*\d`},
		{Literal: "tep", After: `(?i:s|es|ations)[ \t:=\[(#]*\d+(?:/| of )\d`},
		{Literal: "tep", Before: `\d/\d+ [Ss]`},
		{Literal: "tep", Before: `\x1b.*`}, {Literal: "tep", After: `.*\x1b`},
	}},
	{[]string{"a", "b"}, []sdk.PrefilterConfirm{{Literal: "a", Before: `^b*`}, {Literal: "b", After: `a?$`}}},
	{[]string{"", "x"}, []sdk.PrefilterConfirm{{Literal: "", Before: `^`, After: `st`}}},
	{[]string{"ste", "step"}, []sdk.PrefilterConfirm{{Literal: "ste", After: `p\s\d`}, {Literal: "ste", Before: `(?:é)`}}}, // invalid: plain
	{[]string{"step"}, []sdk.PrefilterConfirm{{Literal: "step", After: `[^a-z]{1,3}\d`}, {Literal: "step", Before: `(?:^|[^\w])`}}},
	{[]string{"step"}, []sdk.PrefilterConfirm{{Literal: "step", Before: `(?:^|\W)`, After: `.?.?\d`}}},
	{[]string{"atch", "Iter", "rogress"}, []sdk.PrefilterConfirm{
		{Literal: "atch", After: `(?:es)?\s*\d`}, {Literal: "Iter", After: `(?:\([^)]*\))?:?[ \t]*\[`},
		{Literal: "rogress", After: `[: ]*\d+(?:\.\d*)? ?%`}, {Literal: "rogress", Before: `(?i)p`, After: `x{2,4}y*z+`},
	}},
	{[]string{"ba"}, []sdk.PrefilterConfirm{{Literal: "ba", After: ``}}}, // empty entry: plain
	{[]string{"a"}, []sdk.PrefilterConfirm{{Literal: "zz", After: `x`}}}, // entry for no literal: ignored
	{progress.Manifest.Prefilter, progress.Manifest.PrefilterConfirm},
}

func TestPrefilterConfirm(t *testing.T) {
	lines := testLines()
	for _, c := range confirmSets {
		f, _ := New(c.lits, c.confirms)
		for _, l := range lines {
			if got, want := f.Match(l), matchSlow(t, c.lits, c.confirms, l); got != want {
				t.Fatalf("%q %q in %q: got %v, want %v", c.lits, c.confirms, l, got, want)
			}
		}
	}
	// Spot checks of the definition itself.
	f, errs := New(confirmSets[1].lits, confirmSets[1].confirms)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for l, want := range map[string]bool{
		"Step 5/10": true, "every 500 steps": false, "every 500 steps 1234": false, "steps: 45/100": true,
		"45/100 steps": true, "next step is": false, "\x1b[1mStep\x1b[0m 5": true, "##PROGRESS## {}": true,
		"Iteration steps 3 of 4": true, "steps of 3 of 4": false, "stepS 3 of 4": true, "step": false,
	} {
		if got := f.Match(l); got != want {
			t.Errorf("%q: got %v, want %v", l, got, want)
		}
	}
}

func TestPrefilterConfirmInvalid(t *testing.T) {
	for _, p := range []string{`(ab)*`, `a\b`, `é`, `x{17}`, `(`, `a$b`, `^a`} {
		f, errs := New([]string{"lit"}, []sdk.PrefilterConfirm{{Literal: "lit", After: p}, {Literal: "lit", After: `x`}})
		if len(errs) != 1 {
			t.Errorf("%q: errors %v, want one", p, errs)
		}
		if !f.Match("a lit b") {
			t.Errorf("%q: an invalid entry must leave its literal plain", p)
		}
	}
	if _, errs := New([]string{"lit"}, []sdk.PrefilterConfirm{{Literal: "lit", Before: `a$`}}); len(errs) != 1 {
		t.Errorf("$ in a before pattern accepted")
	}
	if _, errs := New([]string{"lit"}, []sdk.PrefilterConfirm{{Literal: "lit", Before: `^a|^b`, After: `[^\d]?(?i)x{0,16}$`}}); len(errs) != 0 {
		t.Errorf("valid entry refused: %v", errs)
	}
}

func FuzzPrefilter(f *testing.F) {
	for _, l := range progress.SyntheticMix(200) {
		f.Add(l, "tep", `[ \t:=]*\d`, ``)
	}
	for _, l := range testLines()[5000:] {
		f.Add(l, "tep", `(?i:s|es)?[ :]*\d`, `\d/\d+ [Ss]|^`)
	}
	f.Fuzz(func(t *testing.T, line, lit, after, before string) {
		for _, lits := range append(prefilterSets, []string{lit}, []string{lit, "x"}) {
			got, _ := New(lits, nil)
			if got, want := got.Match(line), matchSlow(t, lits, nil, line); got != want {
				t.Fatalf("%q in %q: got %v, want %v", lits, line, got, want)
			}
		}
		// The reference compiles every pattern the host accepts.
		for _, p := range []string{`(?:` + after + `)`, `(?:` + before + `)`} {
			if _, err := regexp.Compile(p); err != nil {
				return
			}
		}
		for _, lits := range [][]string{{lit}, {lit, "x"}, {"a", lit}} {
			confs := []sdk.PrefilterConfirm{{Literal: lit, Before: before, After: after}, {Literal: "x", After: after}}
			got, _ := New(lits, confs)
			if got, want := got.Match(line), matchSlow(t, lits, confs, line); got != want {
				t.Fatalf("%q %q in %q: got %v, want %v", lits, confs, line, got, want)
			}
		}
	})
}

// BenchmarkPrefilter: the host-side prefilter over the benchmark mix: one
// pass with the table against strings.Contains per literal, and the
// progress plugin's full prefilter (literals and confirm entries).
func BenchmarkPrefilter(b *testing.B) {
	lines := progress.SyntheticMix(10000)
	lits := progress.Manifest.Prefilter
	count := func(b *testing.B, match func(string) bool) {
		n := 0
		for b.Loop() {
			n = 0
			for _, l := range lines {
				if match(l) {
					n++
				}
			}
		}
		b.ReportMetric(float64(b.N*len(lines))/b.Elapsed().Seconds(), "lines/s")
		b.ReportMetric(float64(n)/float64(len(lines))*100, "%passed")
	}
	b.Run("contains", func(b *testing.B) {
		count(b, func(l string) bool {
			for _, lit := range lits {
				if strings.Contains(l, lit) {
					return true
				}
			}
			return false
		})
	})
	f, _ := New(lits, nil)
	b.Run("literals", func(b *testing.B) { count(b, f.Match) })
	b.Run("confirmed", func(b *testing.B) { count(b, manifestFilter(b, progress.Manifest).Match) })
	// matchTri: the scan of every position, which match uses when a
	// literal is a single byte.
	b.Run("confirmed-tri", func(b *testing.B) { count(b, manifestFilter(b, progress.Manifest).matchTri) })
}

// TestPrefilterPairs: match through pairs (no literal of one byte) agrees
// with matchTri, the scan of every position, on random literals and
// lines over small alphabets (many occurrences, at every offset and near
// both ends of a line), including literals whose pairs are chosen past
// their first bytes (spaces, digits).
func TestPrefilterPairs(t *testing.T) {
	x := uint64(88172645463325252)
	rnd := func(n int) int { // xorshift64
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return int(x % uint64(n))
	}
	word := func(alpha string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alpha[rnd(len(alpha))]
		}
		return string(b)
	}
	for _, alpha := range []string{"ab", "ab 0", "a1 \t|%]", "ste p0\xe2\x94", "a\x00b"} {
		for range 300 {
			var lits []string
			for range 1 + rnd(4) {
				lits = append(lits, word(alpha, 2+rnd(8)))
			}
			f, _ := New(lits, nil)
			if f.pairs == nil {
				t.Fatalf("%q: no pairs", lits)
			}
			for range 40 {
				l := word(alpha, rnd(70))
				if got, want := f.Match(l), f.matchTri(l); got != want {
					t.Fatalf("%q in %q: pairs %v, tri %v", lits, l, got, want)
				}
			}
		}
	}
	for _, c := range confirmSets {
		f, _ := New(c.lits, c.confirms)
		if f.pairs == nil {
			continue
		}
		for _, l := range testLines() {
			if got, want := f.Match(l), f.matchTri(l); got != want {
				t.Fatalf("%q in %q: pairs %v, tri %v", c.lits, l, got, want)
			}
		}
	}
}
