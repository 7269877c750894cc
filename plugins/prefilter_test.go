package plugins

import (
	"strings"
	"testing"

	"github.com/runbox/runbox/plugins/builtin/progress"
)

// matchSlow is the definition prefilter.match implements.
func matchSlow(literals []string, line string) bool {
	if len(literals) == 0 {
		return true
	}
	for _, lit := range literals {
		if strings.Contains(line, lit) {
			return true
		}
	}
	return false
}

var prefilterSets = [][]string{
	nil, {""}, {"a"}, {"ab"}, {"x", "yz", "━"}, {"step", "##PROGRESS##"}, progress.Manifest.Prefilter,
}

func TestPrefilterMatchesContains(t *testing.T) {
	lines := append(progress.SyntheticMix(5000), "", "a", "b", "ab", "xa", "zzzx", "yz", "y", "━", "\xe2",
		"st", "step", "ste", "1       ", "1      ", "]\t", "]", "%|", "%")
	for _, lits := range prefilterSets {
		f := newPrefilter(lits)
		for _, l := range lines {
			if got, want := f.match(l), matchSlow(lits, l); got != want {
				t.Fatalf("%q in %q: got %v, want %v", lits, l, got, want)
			}
		}
	}
}

func FuzzPrefilter(f *testing.F) {
	for _, l := range progress.SyntheticMix(200) {
		f.Add(l, "tep")
	}
	f.Fuzz(func(t *testing.T, line, lit string) {
		for _, lits := range append(prefilterSets, []string{lit}, []string{lit, "x"}) {
			if got, want := newPrefilter(lits).match(line), matchSlow(lits, line); got != want {
				t.Fatalf("%q in %q: got %v, want %v", lits, line, got, want)
			}
		}
	})
}

// BenchmarkPrefilter: the host-side prefilter over the benchmark mix, one
// pass with the table against strings.Contains per literal.
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
	b.Run("contains", func(b *testing.B) { count(b, func(l string) bool { return matchSlow(lits, l) }) })
	f := newPrefilter(lits)
	b.Run("table", func(b *testing.B) { count(b, f.match) })
}
