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
		for _, w := range []string{"a", "ab", "/s", "━", strings.Repeat("x", 9), "%|", "##PROGRESS##"} {
			if got, want := index(s, w), strings.Index(s, w); got != want {
				t.Fatalf("index(%q, %q) = %d, want %d", s, w, got, want)
			}
			if got, want := lastIndex(s, w), strings.LastIndex(s, w); got != want {
				t.Fatalf("lastIndex(%q, %q) = %d, want %d", s, w, got, want)
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

// TestIndexLastIndex: index and lastIndex against the strings versions on
// random text over small alphabets (many candidates, every alignment).
func TestIndexLastIndex(t *testing.T) {
	x := uint32(2463534242)
	rnd := func(n int) int {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		return int(x % uint32(n))
	}
	for _, alpha := range []string{"ab", "a%|", "#PROGES #", "/s]it, "} {
		for range 3000 {
			b := make([]byte, rnd(80))
			for i := range b {
				b[i] = alpha[rnd(len(alpha))]
			}
			w := make([]byte, 1+rnd(4))
			for i := range w {
				w[i] = alpha[rnd(len(alpha))]
			}
			s := string(b)
			if got, want := index(s, string(w)), strings.Index(s, string(w)); got != want {
				t.Fatalf("index(%q, %q) = %d, want %d", s, w, got, want)
			}
			if got, want := lastIndex(s, string(w)), strings.LastIndex(s, string(w)); got != want {
				t.Fatalf("lastIndex(%q, %q) = %d, want %d", s, w, got, want)
			}
		}
	}
}

// TestMLXSep: mlxSep against a loop over every byte.
func TestMLXSep(t *testing.T) {
	x := uint32(88675123)
	rnd := func(n int) int {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		return int(x % uint32(n))
	}
	const alpha = "ab, \t\x01\x1f!\n\r\v\f0"
	for range 20000 {
		b := make([]byte, rnd(40))
		for i := range b {
			b[i] = alpha[rnd(len(alpha))]
		}
		s := string(b)
		for i := 0; i <= len(s); i++ {
			want := i
			for want < len(s) && s[want] != ',' && !asciiSpace(s[want]) {
				want++
			}
			if got := mlxSep(s, i); got != want {
				t.Fatalf("mlxSep(%q, %d) = %d, want %d", s, i, got, want)
			}
		}
	}
}
