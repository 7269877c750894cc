package progress

import (
	"math/bits"
	"runtime"
	"unsafe"
)

// Under wazero with close-on-context-done every loop iteration costs an
// exit to the host, so the scans here look at eight or sixteen positions
// per iteration in straight-line code and fall back to one position per
// iteration only where something may match.

// index is strings.Index(s, w) for a non-empty w.
func index(s, w string) int {
	n := len(w)
	c := w[0]
	i := 0
	for ; i+16+n <= len(s)+1; i += 16 {
		t := s[i : i+16]
		if t[0] != c && t[1] != c && t[2] != c && t[3] != c &&
			t[4] != c && t[5] != c && t[6] != c && t[7] != c &&
			t[8] != c && t[9] != c && t[10] != c && t[11] != c &&
			t[12] != c && t[13] != c && t[14] != c && t[15] != c {
			continue
		}
		if t[0] == c && s[i+0:i+0+n] == w {
			return i + 0
		}
		if t[1] == c && s[i+1:i+1+n] == w {
			return i + 1
		}
		if t[2] == c && s[i+2:i+2+n] == w {
			return i + 2
		}
		if t[3] == c && s[i+3:i+3+n] == w {
			return i + 3
		}
		if t[4] == c && s[i+4:i+4+n] == w {
			return i + 4
		}
		if t[5] == c && s[i+5:i+5+n] == w {
			return i + 5
		}
		if t[6] == c && s[i+6:i+6+n] == w {
			return i + 6
		}
		if t[7] == c && s[i+7:i+7+n] == w {
			return i + 7
		}
		if t[8] == c && s[i+8:i+8+n] == w {
			return i + 8
		}
		if t[9] == c && s[i+9:i+9+n] == w {
			return i + 9
		}
		if t[10] == c && s[i+10:i+10+n] == w {
			return i + 10
		}
		if t[11] == c && s[i+11:i+11+n] == w {
			return i + 11
		}
		if t[12] == c && s[i+12:i+12+n] == w {
			return i + 12
		}
		if t[13] == c && s[i+13:i+13+n] == w {
			return i + 13
		}
		if t[14] == c && s[i+14:i+14+n] == w {
			return i + 14
		}
		if t[15] == c && s[i+15:i+15+n] == w {
			return i + 15
		}
	}
	if i+8+n <= len(s)+1 {
		if t := s[i : i+8]; t[0] != c && t[1] != c && t[2] != c && t[3] != c &&
			t[4] != c && t[5] != c && t[6] != c && t[7] != c {
			i += 8
		}
	}
	for ; i+n <= len(s); i++ {
		if s[i] == c && s[i:i+n] == w {
			return i
		}
	}
	return -1
}

// lastIndex is strings.LastIndex(s, w) for a non-empty w: sixteen
// positions per step, backwards (the strings version hashes one byte per
// loop iteration).
func lastIndex(s, w string) int {
	n := len(w)
	c := w[0]
	i := len(s) - n // the last position w may start at
	for ; i >= 15; i -= 16 {
		t := s[i-15 : i+1]
		if t[0] != c && t[1] != c && t[2] != c && t[3] != c &&
			t[4] != c && t[5] != c && t[6] != c && t[7] != c &&
			t[8] != c && t[9] != c && t[10] != c && t[11] != c &&
			t[12] != c && t[13] != c && t[14] != c && t[15] != c {
			continue
		}
		for k := 15; k >= 0; k-- {
			if p := i - 15 + k; t[k] == c && s[p:p+n] == w {
				return p
			}
		}
	}
	for ; i >= 0; i-- {
		if s[i] == c && s[i:i+n] == w {
			return i
		}
	}
	return -1
}

// isASCII reports whether s has no byte >= 0x80.
func isASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		t := s[i : i+8]
		if (t[0]|t[1]|t[2]|t[3]|t[4]|t[5]|t[6]|t[7])&0x80 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i]&0x80 != 0 {
			return false
		}
	}
	return true
}

// asciiSpace is strings.Fields' ASCII space.
func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// noFold reports whether no byte of t is c when folded with 0x20.
func noFold(t string, c byte) bool {
	return t[0]|0x20 != c && t[1]|0x20 != c && t[2]|0x20 != c && t[3]|0x20 != c &&
		t[4]|0x20 != c && t[5]|0x20 != c && t[6]|0x20 != c && t[7]|0x20 != c
}

// letterMask has bit c-'a' set for every byte of s that folds (|0x20) to
// the ASCII letter c; indexFold can find a word only if the mask holds
// all of the word's letters.
func letterMask(s string) (m uint32) {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; 'a' <= c && c <= 'z' {
			m |= 1 << (c - 'a')
		}
	}
	return m
}

var (
	lmEpoch      = letterMask("epoch")
	lmSanity     = letterMask("sanity check")
	lmVal        = letterMask("val")
	lmEval       = letterMask("eval")
	lmTest       = letterMask("test")
	lmPredict    = letterMask("predict")
	lmTrain      = letterMask("train")
	lmDataLoader = letterMask("DataLoader")
)

// wordSet is a list of lowercase words, each with the letters it holds:
// a word with a letter the text lacks cannot be in it, and is not
// searched for (each search costs a guest dearly).
type wordSet struct {
	w []string
	m []uint32
}

func newWordSet(ws ...string) wordSet {
	s := wordSet{w: ws, m: make([]uint32, len(ws))}
	for i, w := range ws {
		s.m[i] = letterMask(w)
	}
	return s
}

// in reports whether one of the words is in s (ASCII case folded); lm is
// letterMask(s).
func (ws *wordSet) in(s string, lm uint32) bool {
	for i, m := range ws.m {
		if m&^lm == 0 && indexFold(s, ws.w[i]) >= 0 {
			return true
		}
	}
	return false
}

// Under wazero with close-on-context-done, the cost that dominates a
// guest is a check for a timeout, made at every loop iteration and on
// entry to every function that calls another (a leaf function, with no
// loop and no call, costs none: its entry is no loop in the code the Go
// compiler makes for wasm). A bounds check that may panic is a call. So
// the hot scanners below are leaf functions that read eight bytes at a
// time with unchecked loads whose bounds they establish themselves.

// unalignedLE is true where a little-endian word can be loaded from any
// address (the platforms that run the guest and the tests).
const unalignedLE = runtime.GOARCH == "wasm" || runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64"

// word returns s[j:j+8] as a little-endian word; 0 <= j <= len(s)-8 is
// the caller's to ensure (unchecked where unalignedLE).
func word(s string, j int) uint64 {
	if unalignedLE {
		return *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.StringData(s)), j))
	}
	return load8(s[j:])
}

// ld8 returns the eight bytes of s from k >= 0 as a little-endian word,
// bytes past the end of s read as zero (len(s) >= 8). It is branch-free:
// min and max become jumps in larger functions.
func ld8(s string, k int) uint64 {
	d := k - (len(s) - 8) // > 0: how far past the last word
	d &^= d >> 63         // max(d, 0)
	keep := uint64((d - 8) >> 63)
	return word(s, k-d) >> (8 * uint(d) & 63) & keep
}

// load8 reads s[0:8] as a little-endian word (len(s) >= 8). The Go
// compiler merges the byte loads into one on amd64 and arm64 but not on
// wasm, where a single (unaligned, little-endian) i64.load does it.
func load8(s string) uint64 {
	_ = s[7]
	if runtime.GOARCH == "wasm" {
		return *(*uint64)(unsafe.Pointer(unsafe.StringData(s)))
	}
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// nonDigits has the top bit of every byte of x that is not an ASCII
// digit set (exact up to the first such byte; later ones may be wrong).
func nonDigits(x uint64) uint64 {
	const f0, d0, six, low7 = 0xF0F0F0F0F0F0F0F0, 0x3030303030303030, 0x0606060606060606, 0x7F7F7F7F7F7F7F7F
	// A byte of y is zero iff that byte of x is a digit: its high nibble
	// is 3, and stays 3 when 6 is added (the low nibble is at most 9).
	// The addition carries into the next byte only from a byte >= 0xFA.
	y := (x&f0 ^ d0) | ((x+six)&f0 ^ d0)
	return ((y&low7 + low7) | y) &^ low7
}

// nonDigitsExact is nonDigits exact for every byte (no carry crosses
// from one byte to the next).
func nonDigitsExact(x uint64) uint64 {
	const f0, d0, f, six, low7 = 0xF0F0F0F0F0F0F0F0, 0x3030303030303030, 0x0F0F0F0F0F0F0F0F, 0x0606060606060606, 0x7F7F7F7F7F7F7F7F
	// Zero iff a digit: high nibble 3, and low nibble + 6 under 16.
	y := (x&f0 ^ d0) | (x&f+six)&f0
	return ((y&low7 + low7) | y) &^ low7
}

// digitRun returns how many leading bytes of s are ASCII digits, eight
// bytes per step.
func digitRun(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if t := nonDigits(load8(s[i:])); t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
	}
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// indexByte is strings.IndexByte, eight bytes per step (the runtime's
// wasm version looks at one byte per loop iteration).
func indexByte(s string, c byte) int {
	const lsb, msb = 0x0101010101010101, 0x8080808080808080
	pat := lsb * uint64(c)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := load8(s[i:]) ^ pat
		if t := (x - lsb) &^ x & msb; t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
	}
	for ; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}
