package prefilter

import (
	"errors"
	"fmt"
	"regexp/syntax"
)

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
