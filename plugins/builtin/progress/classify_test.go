package progress

import (
	"strings"
	"testing"
)

// scanLineRef is scanLine's definition: the bits of every mark whose
// word s contains, and fDigitSlash for a byte 0x30-0x3F before a '/'.
func scanLineRef(s string) (f uint64) {
	for _, m := range marks {
		if strings.Contains(s, m.word) {
			f |= m.bits
		}
	}
	for i := 1; i < len(s); i++ {
		if s[i] == '/' && s[i-1]&0xF0 == 0x30 {
			f |= fDigitSlash
		}
	}
	return f
}

func FuzzScanLine(f *testing.F) {
	for _, l := range SyntheticMix(300) {
		f.Add(l)
	}
	for _, c := range edgeCases {
		for _, l := range c.lines {
			f.Add(l)
		}
	}
	for _, l := range confirmSeeds {
		f.Add(l)
	}
	for _, m := range marks {
		f.Add(m.word)
		f.Add("x" + m.word)
		f.Add("12345678" + m.word + "x")
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := scanLine(s), scanLineRef(s); got != want {
			t.Fatalf("scanLine(%q) = %#x, want %#x (diff %#x)", s, got, want, got^want)
		}
		if got, want := scanLine(s)&fPre != 0, hasPrefilter(s); got != want {
			t.Fatalf("scanLine(%q) prefilter %v, want %v", s, got, want)
		}
	})
}

func TestScanLineMarks(t *testing.T) {
	for _, m := range marks {
		for _, s := range []string{m.word, " " + m.word, "ab" + m.word + "cd", strings.Repeat(".", 13) + m.word} {
			if got := scanLine(s); got&m.bits != m.bits {
				t.Errorf("scanLine(%q) = %#x, lacks %#x", s, got, m.bits)
			}
		}
	}
	for i := 0; i < 40; i++ {
		s := strings.Repeat("x", i) + "7/s"
		if got := scanLine(s); got&(fDigitSlash|fSlashS) != fDigitSlash|fSlashS {
			t.Errorf("scanLine(%q) = %#x", s, got)
		}
	}
}
