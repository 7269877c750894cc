package progress

import (
	"strings"
	"testing"
)

func FuzzFastscan(f *testing.F) {
	for _, s := range []string{"", "0", "123456789", "12345678x", "1234567\xff9", "\xfa9", "abc", "/12 [", "9999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := 0
		for n < len(s) && isDigit(s[n]) {
			n++
		}
		if got := digitRun(s); got != n {
			t.Fatalf("digitRun(%q) = %d, want %d", s, got, n)
		}
		for e := 0; e <= len(s); e++ {
			want := 0
			for want < 16 && e-want > 0 && isDigit(s[e-want-1]) {
				want++
			}
			if got := digitsBefore(s, e); got != want {
				t.Fatalf("digitsBefore(%q, %d) = %d, want %d", s, e, got, want)
			}
		}
		for _, w := range []string{"a", "ab", "/s", "━", strings.Repeat("x", 9)} {
			if got, want := index(s, w), strings.Index(s, w); got != want {
				t.Fatalf("index(%q, %q) = %d, want %d", s, w, got, want)
			}
		}
	})
}

func TestDigitRun(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 17; pos++ {
			b := []byte(strings.Repeat("7", 17))
			b[pos] = byte(c)
			want := pos
			if isDigit(byte(c)) {
				want = 17
			}
			if got := digitRun(string(b)); got != want {
				t.Fatalf("digitRun(%q) = %d, want %d", b, got, want)
			}
		}
	}
}
