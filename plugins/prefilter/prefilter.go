// Package prefilter decides, without calling a plugin, whether an output
// line may interest a progress plugin: its manifest's Prefilter literals,
// each confirmed by the text around it where PrefilterConfirm says so
// (docs/PLUGINS.md). One pass over the line whatever the number of
// literals; confirm patterns are small NFAs anchored at the literal.
package prefilter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"sync"

	"github.com/runbox/runbox/sdk"
)

// Filter answers "may this line interest the plugin?" for a progress
// plugin's manifest: does the line contain one of its Prefilter literals,
// at an occurrence that one of the literal's PrefilterConfirm entries
// accepts when it has any? One pass over the line, whatever the number of
// literals.
//
// A 64 Ki-bit set marks the first two bytes of every literal (a one-byte
// literal marks every pair it starts); the scan tests eight positions per
// step with one 8-byte load and eight bit tests, and only where a pair is
// marked compares the literals that start with that byte. Confirm
// patterns run only on a literal that is there, as small bit-parallel
// NFAs anchored at the literal: no backtracking, and most of them fail
// within a few bytes.
type Filter struct {
	all     bool                 // no literals, or an empty plain one: every line
	empty   *literal             // an empty literal with confirm entries
	single  [256]*literal        // one-byte literals
	tri     [1 << 15 / 64]uint64 // first three bytes of every literal, hashed
	byFirst [256][]*literal      // longer literals by first byte
	// pairs, when no literal is a single byte, marks two adjacent byte
	// pairs of every literal, at offsets j and j+1 (0 <= j <= 3, where
	// the pairs look rarest in text; a two-byte literal: itself, and its
	// second byte followed by any byte): matchPairs looks at every other
	// position only (see there). A literal at p shows a marked pair at p
	// +j or p+j+1, so a marked pair at q sends q-j-1 ... q to at. An
	// entry, by the pair's bytes a | b<<8, is 1 | back<<1 for a marked
	// pair, back the largest j+1 of its literals; 0 for the others.
	pairs *[1 << 16]uint8
}

// literal is one Prefilter literal and its confirm entries (none: plain).
// w0 and w1 hold its first and second eight bytes, little-endian, under
// the masks m0 and m1 (a literal of more than 16 bytes compares the rest
// as a string).
type literal struct {
	s       string
	confirm []confirm
	w0, m0  uint64
	w1, m1  uint64
}

func newLiteral(s string) *literal {
	l := &literal{s: s}
	for i := min(len(s), 8) - 1; i >= 0; i-- {
		l.w0, l.m0 = l.w0<<8|uint64(s[i]), l.m0<<8|0xff
	}
	for i := min(len(s), 16) - 1; i >= 8; i-- {
		l.w1, l.m1 = l.w1<<8|uint64(s[i]), l.m1<<8|0xff
	}
	return l
}

// at reports whether l occurs at line[i:], given the eight bytes there
// (zero past the end of line).
func (l *literal) at(line string, i int, x uint64) bool {
	if x&l.m0 != l.w0 || len(line)-i < len(l.s) {
		return false
	}
	return len(l.s) <= 8 || load(line, i+8)&l.m1 == l.w1 && (len(l.s) <= 16 || line[i+16:i+len(l.s)] == l.s[16:])
}

// load returns the eight bytes of s from i as a little-endian word, zero
// bytes past the end.
func load(s string, i int) uint64 {
	if i+8 <= len(s) {
		t := s[i : i+8]
		return uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
			uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
	}
	var x uint64
	for k := len(s) - 1; k >= i; k-- {
		x = x<<8 | uint64(s[k])
	}
	return x
}

// confirm is one compiled sdk.PrefilterConfirm; nil patterns always match.
type confirm struct {
	before, after *pattern
}

// New compiles a manifest's prefilter. Entries it cannot compile
// make their literal plain; they are returned as errors, for the log.
func New(literals []string, confirms []sdk.PrefilterConfirm) (*Filter, []error) {
	f := &Filter{all: len(literals) == 0}
	var errs []error
	type state struct {
		entries []confirm
		plain   bool // an entry matches always, or could not be compiled
	}
	conf := map[string]*state{}
	for _, c := range confirms {
		st := conf[c.Literal]
		if st == nil {
			st = &state{}
			conf[c.Literal] = st
		}
		before, err1 := compilePattern(c.Before, true)
		after, err2 := compilePattern(c.After, false)
		if err := errors.Join(err1, err2); err != nil {
			errs = append(errs, fmt.Errorf("prefilter_confirm for %q: %w", c.Literal, err))
			st.plain = true
			continue
		}
		if before == nil && after == nil {
			st.plain = true
		}
		st.entries = append(st.entries, confirm{before, after})
	}
	pairs := new([1 << 16]uint8)
	markPair := func(a, b byte, back int) {
		k := uint16(a) | uint16(b)<<8
		pairs[k] = max(pairs[k], 1|uint8(back)<<1)
	}
	for _, s := range literals {
		switch {
		case len(s) == 1:
			pairs = nil // a lone byte is in no pair: matchTri
		case pairs == nil || len(s) == 0:
		case len(s) == 2:
			markPair(s[0], s[1], 1)
			for c := range 256 {
				markPair(s[1], byte(c), 1)
			}
		default:
			j := 0
			for k := 1; k+3 <= len(s) && k <= 3; k++ {
				if pairCommon(s[k:k+3]) < pairCommon(s[j:j+3]) {
					j = k
				}
			}
			markPair(s[j], s[j+1], j+1)
			markPair(s[j+1], s[j+2], j+1)
		}
	}
	f.pairs = pairs
	for _, s := range literals {
		l := newLiteral(s)
		if st := conf[s]; st != nil && !st.plain {
			l.confirm = st.entries
		}
		switch len(s) {
		case 0:
			if l.confirm == nil {
				f.all = true
			} else {
				f.empty = l
			}
		case 1:
			if f.single[s[0]] == nil || l.confirm == nil {
				f.single[s[0]] = l
			}
			for t := range uint32(1 << 16) {
				f.mark3(uint32(s[0]) | t<<8)
			}
		case 2:
			for c := range uint32(256) {
				f.mark3(uint32(s[0]) | uint32(s[1])<<8 | c<<16)
			}
			f.byFirst[s[0]] = append(f.byFirst[s[0]], l)
		default:
			f.mark3(uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16)
			f.byFirst[s[0]] = append(f.byFirst[s[0]], l)
		}
	}
	return f, errs
}

// prefilters caches compiled prefilters by manifest content: a Parser is
// made per run, and compiling confirm patterns costs about a millisecond.
// Entries are few (one per distinct progress manifest) and immutable.
var prefilters sync.Map // string -> *cachedFilter

type cachedFilter struct {
	f    *Filter
	errs []error
}

// Cached is New, once per distinct manifest prefilter.
func Cached(literals []string, confirms []sdk.PrefilterConfirm) (*Filter, []error) {
	var key strings.Builder
	for _, l := range literals {
		key.WriteString(strconv.Quote(l))
	}
	key.WriteByte('|')
	for _, c := range confirms {
		key.WriteString(strconv.Quote(c.Literal) + strconv.Quote(c.Before) + strconv.Quote(c.After))
	}
	if c, ok := prefilters.Load(key.String()); ok {
		return c.(*cachedFilter).f, c.(*cachedFilter).errs
	}
	f, errs := New(literals, confirms)
	prefilters.Store(key.String(), &cachedFilter{f, errs})
	return f, errs
}

// mark3 adds the three bytes a, b, c (from the lowest) of t to f.tri.
func (f *Filter) mark3(t uint32) {
	h := triHash(t)
	f.tri[h>>6] |= 1 << (h & 63)
}

func triHash(t uint32) uint32 { return t & 0xFFFFFF * 0x9E3779B1 >> 17 }

// Match reports whether line passes the prefilter.
func (f *Filter) Match(line string) bool {
	if f.all {
		return true
	}
	n := len(line)
	if f.empty != nil {
		// An empty literal occurs everywhere: rare, checked the slow way.
		for i := 0; i <= n; i++ {
			if f.empty.confirmed(line, i, i) {
				return true
			}
		}
	}
	if f.pairs != nil {
		return f.matchPairs(line)
	}
	return f.matchTri(line)
}

// matchPairs is match for a prefilter with pairs: it looks up the byte
// pair at every even position of line in pairs, four per 8-byte load.
// An occurrence of a literal (two bytes or more) at p shows its pair at
// offset j at p+j when p+j is even, else its pair at offset j+1; so a
// marked pair at q sends positions q-back ... q to at (through tri
// first). The last bytes are looked at the same way, padded with zero
// bytes to 16.
func (f *Filter) matchPairs(line string) bool {
	n := len(line)
	i := 0
	for ; i+16 <= n; i += 16 {
		t := line[i : i+16]
		w := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
			uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
		v := uint64(t[8]) | uint64(t[9])<<8 | uint64(t[10])<<16 | uint64(t[11])<<24 |
			uint64(t[12])<<32 | uint64(t[13])<<40 | uint64(t[14])<<48 | uint64(t[15])<<56
		if hm := f.pairMarks(w, v); hm != 0 && f.pairsAt(line, i, hm) {
			return true
		}
	}
	if i < n {
		// The last bytes, padded with zero bytes: a pair that holds one
		// only sends positions inside line to at.
		var buf [16]byte
		copy(buf[:], line[i:])
		w, v := binary.LittleEndian.Uint64(buf[:8]), binary.LittleEndian.Uint64(buf[8:])
		if hm := f.pairMarks(w, v); hm != 0 && f.pairsAt(line, i, hm) {
			return true
		}
	}
	return false
}

// pairMarks has bit 2k set when the pair of bytes 2k, 2k+1 of the 16
// bytes w, v (little-endian) is marked in pairs.
func (f *Filter) pairMarks(w, v uint64) uint64 {
	pairs := f.pairs
	return uint64(pairs[uint16(w)]&1) | uint64(pairs[uint16(w>>16)]&1)<<2 |
		uint64(pairs[uint16(w>>32)]&1)<<4 | uint64(pairs[uint16(w>>48)]&1)<<6 |
		uint64(pairs[uint16(v)]&1)<<8 | uint64(pairs[uint16(v>>16)]&1)<<10 |
		uint64(pairs[uint16(v>>32)]&1)<<12 | uint64(pairs[uint16(v>>48)]&1)<<14
}

// pairsAt checks, for each marked pair at i+q (bit q of hm), the
// positions of line from the pair's back before it to it.
func (f *Filter) pairsAt(line string, i int, hm uint64) bool {
	n := len(line)
	for ; hm != 0; hm &= hm - 1 {
		q := i + bits.TrailingZeros64(hm)
		if q >= n {
			break // a pair of padding only: no literal ends past line
		}
		k := uint16(line[q])
		if q+1 < n {
			k |= uint16(line[q+1]) << 8
		} // else the pair's second byte is padding: zero
		for p := max(q-int(f.pairs[k]>>1), 0); p <= q; p++ {
			if f.triAt(line, p) {
				return true
			}
		}
	}
	return false
}

// pairCommon scores how common the two pairs of the three bytes t are in
// log text, roughly: spaces and digits most, then vowels; a pair that
// repeats counts once.
func pairCommon(t string) int {
	w := func(c byte) int {
		switch {
		case c == ' ':
			return 8
		case '0' <= c && c <= '9':
			return 6
		case strings.IndexByte("aeiou", c) >= 0:
			return 4
		case 'a' <= c && c <= 'z':
			return 2
		}
		return 1
	}
	if t[0] == t[1] && t[1] == t[2] {
		return w(t[0]) * w(t[1])
	}
	return w(t[0])*w(t[1]) + w(t[1])*w(t[2])
}

// triAt is at behind the check of tri.
func (f *Filter) triAt(line string, i int) bool {
	h := triHash(uint32(load(line, i)))
	return f.tri[h>>6]&(1<<(h&63)) != 0 && f.at(line, i)
}

// matchTri is match for any prefilter: it looks up the three bytes at
// every position of line in tri, eight per 8-byte load.
func (f *Filter) matchTri(line string) bool {
	n := len(line)
	if n == 0 {
		return false
	}
	i := 0
	for ; i+10 <= n; i += 8 {
		t := line[i : i+10]
		w := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
			uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
		x := uint64(t[8]) | uint64(t[9])<<8
		h0, h1, h2, h3 := triHash(uint32(w)), triHash(uint32(w>>8)), triHash(uint32(w>>16)), triHash(uint32(w>>24))
		h4, h5, h6, h7 := triHash(uint32(w>>32)), triHash(uint32(w>>40)), triHash(uint32(w>>48|x<<16)), triHash(uint32(w>>56|x<<8))
		hm := f.tri[h0>>6]>>(h0&63)&1 | f.tri[h1>>6]>>(h1&63)&1<<1 |
			f.tri[h2>>6]>>(h2&63)&1<<2 | f.tri[h3>>6]>>(h3&63)&1<<3 |
			f.tri[h4>>6]>>(h4&63)&1<<4 | f.tri[h5>>6]>>(h5&63)&1<<5 |
			f.tri[h6>>6]>>(h6&63)&1<<6 | f.tri[h7>>6]>>(h7&63)&1<<7
		for ; hm != 0; hm &= hm - 1 {
			if f.at(line, i+bits.TrailingZeros64(hm)) {
				return true
			}
		}
	}
	for ; i < n; i++ {
		// The last bytes: the three from i with zero bytes past the end.
		h := triHash(uint32(load(line, i)))
		if f.tri[h>>6]&(1<<(h&63)) != 0 && f.at(line, i) {
			return true
		}
	}
	return false
}

// at reports whether a literal starts at line[i] and passes.
func (f *Filter) at(line string, i int) bool {
	c := line[i]
	if l := f.single[c]; l != nil && l.confirmed(line, i, i+len(l.s)) {
		return true
	}
	x := load(line, i)
	for _, l := range f.byFirst[c] {
		if l.at(line, i, x) && l.confirmed(line, i, i+len(l.s)) {
			return true
		}
	}
	return false
}

// confirmed reports whether the occurrence line[i:e] of l lets the line
// through.
func (l *literal) confirmed(line string, i, e int) bool {
	if l.confirm == nil {
		return true
	}
	for _, c := range l.confirm {
		if c.before.matchBefore(line, i) && c.after.matchAfter(line, e) {
			return true
		}
	}
	return false
}
