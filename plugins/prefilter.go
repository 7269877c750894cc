package plugins

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"regexp/syntax"
	"strconv"
	"strings"
	"sync"

	"github.com/runbox/runbox/sdk"
)

// prefilter answers "may this line interest the plugin?" for a progress
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
type prefilter struct {
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

// newPrefilter compiles a manifest's prefilter. Entries it cannot compile
// make their literal plain; they are returned as errors, for the log.
func newPrefilter(literals []string, confirms []sdk.PrefilterConfirm) (*prefilter, []error) {
	f := &prefilter{all: len(literals) == 0}
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
	f    *prefilter
	errs []error
}

// cachedPrefilter is newPrefilter, once per distinct manifest prefilter.
func cachedPrefilter(literals []string, confirms []sdk.PrefilterConfirm) (*prefilter, []error) {
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
	f, errs := newPrefilter(literals, confirms)
	prefilters.Store(key.String(), &cachedFilter{f, errs})
	return f, errs
}

// mark3 adds the three bytes a, b, c (from the lowest) of t to f.tri.
func (f *prefilter) mark3(t uint32) {
	h := triHash(t)
	f.tri[h>>6] |= 1 << (h & 63)
}

func triHash(t uint32) uint32 { return t & 0xFFFFFF * 0x9E3779B1 >> 17 }

// match reports whether line passes the prefilter.
func (f *prefilter) match(line string) bool {
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
func (f *prefilter) matchPairs(line string) bool {
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
func (f *prefilter) pairMarks(w, v uint64) uint64 {
	pairs := f.pairs
	return uint64(pairs[uint16(w)]&1) | uint64(pairs[uint16(w>>16)]&1)<<2 |
		uint64(pairs[uint16(w>>32)]&1)<<4 | uint64(pairs[uint16(w>>48)]&1)<<6 |
		uint64(pairs[uint16(v)]&1)<<8 | uint64(pairs[uint16(v>>16)]&1)<<10 |
		uint64(pairs[uint16(v>>32)]&1)<<12 | uint64(pairs[uint16(v>>48)]&1)<<14
}

// pairsAt checks, for each marked pair at i+q (bit q of hm), the
// positions of line from the pair's back before it to it.
func (f *prefilter) pairsAt(line string, i int, hm uint64) bool {
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
func (f *prefilter) triAt(line string, i int) bool {
	h := triHash(uint32(load(line, i)))
	return f.tri[h>>6]&(1<<(h&63)) != 0 && f.at(line, i)
}

// matchTri is match for any prefilter: it looks up the three bytes at
// every position of line in tri, eight per 8-byte load.
func (f *prefilter) matchTri(line string) bool {
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
func (f *prefilter) at(line string, i int) bool {
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

// ---- confirm patterns ------------------------------------------------------

// pattern is a compiled confirm pattern: its alternatives as
// position-bitmask NFAs, each NFA holding as many alternatives as fit in
// 64 positions. A set bit p of a state means "the first p units of some
// alternative (counted from the anchor) are matched".
type pattern struct {
	empty bool // matches the empty text
	nfas  []nfa
}

type nfa struct {
	start  uint64      // states before the first byte (closed over skips)
	skip   uint64      // bit p: unit p may match no byte (?, *)
	accept uint64      // bits at the end of an alternative
	atEnd  uint64      // bits at the end of an alternative anchored by ^ or $
	adv    [256]uint64 // bit p: unit p matches the byte and moves on
	stay   [256]uint64 // bit p: unit p is a star that matches the byte
}

// closure adds the states reachable by skipping optional units.
func (n *nfa) closure(a uint64) uint64 {
	for {
		b := a | (a&n.skip)<<1
		if b == a {
			return a
		}
		a = b
	}
}

func (n *nfa) step(a uint64, c byte) uint64 {
	return n.closure((a&n.adv[c])<<1 | a&n.stay[c])
}

// matchAfter reports whether a prefix of line[e:] matches p (nil: yes).
func (p *pattern) matchAfter(line string, e int) bool {
	if p == nil || p.empty {
		return true
	}
	for k := range p.nfas {
		n := &p.nfas[k]
		a := n.start
		for i := e; i < len(line) && a != 0; i++ {
			if a = n.step(a, line[i]); a&n.accept != 0 {
				return true
			}
		}
		if a&n.atEnd != 0 {
			return true
		}
	}
	return false
}

// matchBefore reports whether a suffix of line[:i] matches p (nil: yes);
// the NFAs of a before pattern hold its alternatives reversed.
func (p *pattern) matchBefore(line string, i int) bool {
	if p == nil || p.empty {
		return true
	}
	for k := range p.nfas {
		n := &p.nfas[k]
		a := n.start
		for j := i - 1; j >= 0 && a != 0; j-- {
			if a = n.step(a, line[j]); a&n.accept != 0 {
				return true
			}
		}
		if a&n.atEnd != 0 {
			return true
		}
	}
	return false
}

// Limits on one pattern, so that a manifest cannot make the host slow.
const (
	maxAlternatives = 64 // after expanding groups and optional groups
	maxUnits        = 63 // per alternative, after expanding repetitions
	maxRepeat       = 16 // in x{n,m}
)

// unit is one step of an alternative: a byte set, or an anchor.
type unit struct {
	set  [4]uint64
	kind uint8
}

const (
	unitOne   uint8 = iota // exactly one byte of set
	unitOpt                // zero or one
	unitStar               // zero or more
	unitBegin              // ^: the start of the line
	unitEnd                // $: the end of the line
)

func (u *unit) has(c byte) bool { return u.set[c>>6]&(1<<(c&63)) != 0 }
func (u *unit) add(c byte)      { u.set[c>>6] |= 1 << (c & 63) }

// compilePattern compiles a confirm pattern; nil for "". reverse: a
// before pattern, matched from the literal backwards.
func compilePattern(src string, reverse bool) (*pattern, error) {
	if src == "" {
		return nil, nil
	}
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil, err
	}
	alts, err := expand(re)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", src, err)
	}
	p := &pattern{}
	var cur *nfa
	used := 0
	for _, a := range alts {
		anchored := false
		for k, u := range a {
			switch {
			case u.kind == unitBegin && reverse && k == 0, u.kind == unitEnd && !reverse && k == len(a)-1:
				anchored = true
			case u.kind == unitBegin:
				return nil, fmt.Errorf("%q: ^ only at the start of a before pattern", src)
			case u.kind == unitEnd:
				return nil, fmt.Errorf("%q: $ only at the end of an after pattern", src)
			}
		}
		if anchored {
			if reverse {
				a = a[1:]
			} else {
				a = a[:len(a)-1]
			}
		}
		if len(a) > maxUnits {
			return nil, fmt.Errorf("%q: more than %d characters in an alternative", src, maxUnits)
		}
		if reverse {
			r := make([]unit, len(a))
			for k, u := range a {
				r[len(a)-1-k] = u
			}
			a = r
		}
		if cur == nil || used+len(a)+1 > 64 {
			p.nfas = append(p.nfas, nfa{})
			cur, used = &p.nfas[len(p.nfas)-1], 0
		}
		base := used
		cur.start |= 1 << base
		for k, u := range a {
			bit := uint64(1) << (base + k)
			if u.kind == unitOpt || u.kind == unitStar {
				cur.skip |= bit
			}
			for c := range 256 {
				if !u.has(byte(c)) {
					continue
				}
				if u.kind == unitStar {
					cur.stay[c] |= bit
				} else {
					cur.adv[c] |= bit
				}
			}
		}
		end := uint64(1) << (base + len(a))
		if anchored {
			cur.atEnd |= end
		} else {
			cur.accept |= end
		}
		used += len(a) + 1
	}
	for k := range p.nfas {
		n := &p.nfas[k]
		n.start = n.closure(n.start)
		if n.start&n.accept != 0 {
			p.empty = true
		}
	}
	return p, nil
}

var errUnsupported = errors.New("unsupported in a confirm pattern")

// expand turns re into its alternatives, each a sequence of units.
func expand(re *syntax.Regexp) ([]alt, error) {
	switch re.Op {
	case syntax.OpNoMatch:
		return nil, nil
	case syntax.OpEmptyMatch:
		return []alt{{}}, nil
	case syntax.OpBeginLine, syntax.OpBeginText:
		return []alt{{{kind: unitBegin}}}, nil
	case syntax.OpEndLine, syntax.OpEndText:
		return []alt{{{kind: unitEnd}}}, nil
	case syntax.OpLiteral:
		a := make(alt, 0, len(re.Rune))
		for _, r := range re.Rune {
			u, err := single(&syntax.Regexp{Op: syntax.OpLiteral, Rune: []rune{r}, Flags: re.Flags})
			if err != nil {
				return nil, err
			}
			a = append(a, u)
		}
		return []alt{a}, nil
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		u, err := single(re)
		return []alt{{u}}, err
	case syntax.OpCapture:
		return expand(re.Sub[0])
	case syntax.OpConcat:
		out := []alt{{}}
		for _, sub := range re.Sub {
			next, err := expand(sub)
			if err != nil {
				return nil, err
			}
			if len(out)*len(next) > maxAlternatives {
				return nil, fmt.Errorf("more than %d alternatives", maxAlternatives)
			}
			prod := make([]alt, 0, len(out)*len(next))
			for _, a := range out {
				for _, b := range next {
					prod = append(prod, append(append(alt{}, a...), b...))
				}
			}
			out = prod
		}
		return out, nil
	case syntax.OpAlternate:
		var out []alt
		for _, sub := range re.Sub {
			next, err := expand(sub)
			if err != nil {
				return nil, err
			}
			out = append(out, next...)
			if len(out) > maxAlternatives {
				return nil, fmt.Errorf("more than %d alternatives", maxAlternatives)
			}
		}
		return out, nil
	case syntax.OpQuest:
		if u, err := single(re.Sub[0]); err == nil {
			u.kind = unitOpt
			return []alt{{u}}, nil
		}
		out, err := expand(re.Sub[0])
		if err != nil {
			return nil, err
		}
		if len(out)+1 > maxAlternatives {
			return nil, fmt.Errorf("more than %d alternatives", maxAlternatives)
		}
		return append(out, alt{}), nil
	case syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		u, err := single(re.Sub[0])
		if err != nil {
			return nil, fmt.Errorf("repetition of more than one character: %w", errUnsupported)
		}
		lo, hi := 0, -1
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
		}
		if lo > maxRepeat || hi > maxRepeat {
			return nil, fmt.Errorf("repetition over %d", maxRepeat)
		}
		var a alt
		for range lo {
			a = append(a, u)
		}
		switch {
		case hi < 0:
			u.kind = unitStar
			a = append(a, u)
		default:
			u.kind = unitOpt
			for range hi - lo {
				a = append(a, u)
			}
		}
		return []alt{a}, nil
	}
	return nil, fmt.Errorf("%s: %w", re, errUnsupported)
}

type alt []unit

// single compiles re to one unit when it matches exactly one character.
func single(re *syntax.Regexp) (unit, error) {
	var u unit
	switch re.Op {
	case syntax.OpCapture:
		return single(re.Sub[0])
	case syntax.OpLiteral:
		if len(re.Rune) != 1 {
			return u, errUnsupported
		}
		r := re.Rune[0]
		if r >= 0x80 {
			return u, fmt.Errorf("non-ASCII character %q (a byte >= 0x80 is matched by . or a negated class)", r)
		}
		u.add(byte(r))
		if re.Flags&syntax.FoldCase != 0 && 'a' <= r|0x20 && r|0x20 <= 'z' {
			u.add(byte(r) | 0x20)
			u.add(byte(r) &^ 0x20)
		}
		return u, nil
	case syntax.OpCharClass:
		for k := 0; k+1 < len(re.Rune); k += 2 {
			lo, hi := re.Rune[k], re.Rune[k+1]
			for r := lo; r <= min(hi, 0x7f); r++ {
				u.add(byte(r))
			}
			if lo <= 0xfffd && 0xfffd <= hi {
				for c := 0x80; c < 0x100; c++ {
					u.add(byte(c))
				}
			}
		}
		return u, nil
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		for c := range 256 {
			if c != '\n' || re.Op == syntax.OpAnyChar {
				u.add(byte(c))
			}
		}
		return u, nil
	}
	return u, errUnsupported
}
