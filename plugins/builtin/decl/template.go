package decl

import (
	"errors"
	"strconv"
	"strings"
)

type kind uint8

const (
	kInt     kind = iota // digits
	kCount               // digits with thousands commas
	kNum                 // a decimal number, nan, inf
	kClock               // [[d:]h:]mm:ss, in seconds
	kElapsed             // epochs done (a decimal): epoch only
)

var kinds = map[string]kind{"int": kInt, "count": kCount, "num": kNum, "clock": kClock, "elapsed": kElapsed}

// piece is a literal (lit != "": a blank in it matches any run of blanks)
// or a hole.
type piece struct {
	lit  string
	name string
	kind kind
}

type template struct {
	src        string
	pieces     []piece
	start, end bool // anchored at the line's start, end
}

func (t *template) holes() []piece {
	var out []piece
	for _, p := range t.pieces {
		if p.lit == "" {
			out = append(out, p)
		}
	}
	return out
}

func compile(src string) (t template, err error) {
	t.src = src
	s := src
	if strings.HasPrefix(s, "^") {
		t.start, s = true, s[1:]
	}
	if strings.HasSuffix(s, "$") {
		t.end, s = true, s[:len(s)-1]
	}
	s = strings.TrimLeft(s, " \t")
	if !t.end {
		s = strings.TrimRight(s, " \t")
	}
	if s == "" {
		return t, errors.New("empty template")
	}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			// runs of blanks are one blank: each matches any run
			t.pieces = append(t.pieces, piece{lit: strings.Join(splitKeepEdges(lit.String()), " ")})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) && (s[i+1] == '{' || s[i+1] == '}') {
			lit.WriteByte(s[i+1])
			i++
			continue
		}
		if c != '{' {
			lit.WriteByte(c)
			continue
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return t, errors.New("an unclosed { at byte " + strconv.Itoa(i))
		}
		h := s[i+1 : i+j]
		name, kname, _ := strings.Cut(h, ":")
		if name == "" || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789_/") != "" {
			return t, errors.New("hole {" + h + "}: a name is lower-case letters, digits, _ and /")
		}
		k := defaultKind(name)
		if kname != "" {
			var ok bool
			if k, ok = kinds[kname]; !ok {
				return t, errors.New("hole {" + h + "}: unknown kind " + strconv.Quote(kname) + " (int, count, num, clock, elapsed)")
			}
			if k == kElapsed && name != "epoch" {
				return t, errors.New("hole {" + h + "}: elapsed is for {epoch} only")
			}
		}
		flush()
		if n := len(t.pieces); n > 0 && t.pieces[n-1].lit == "" {
			return t, errors.New("hole {" + h + "} right after another: put text between them")
		}
		t.pieces = append(t.pieces, piece{name: name, kind: k})
		i += j
	}
	flush()
	if t.pieces[0].lit == "" && !t.start && (len(t.pieces) < 2 || t.pieces[0].kind == kElapsed) {
		return t, errors.New("a template that starts with a hole needs text after it to be found by")
	}
	return t, nil
}

// splitKeepEdges splits s (not empty) at runs of blanks, the blanks the
// matcher knows (isBlank: other white space is text), keeping an empty
// field for a blank at either edge (so " = " stays a blank, "=", a blank).
func splitKeepEdges(s string) []string {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' })
	if isBlank(s[0]) {
		f = append([]string{""}, f...)
	}
	if isBlank(s[len(s)-1]) {
		f = append(f, "")
	}
	return f
}

func defaultKind(name string) kind {
	switch name {
	case "step", "total", "epoch", "epoch_total", "counter":
		return kInt
	}
	return kNum
}

// find looks for t in line, filling v; the first place it matches wins.
func (t *template) find(line string, v *values) bool {
	p0 := &t.pieces[0]
	if t.start {
		return t.matchAt(line, skipBlanks(line, 0), 0, v)
	}
	if p0.lit != "" {
		key, _, _ := strings.Cut(strings.TrimLeft(p0.lit, " "), " ")
		lead := strings.Index(p0.lit, key) // blanks before key in p0.lit (0 or 1)
		for k := indexFrom(line, key, 0); k >= 0; k = indexFrom(line, key, k+1) {
			at := k
			if lead > 0 { // the literal's leading blank matches the blanks before key
				at = blanksBefore(line, k)
			}
			if isLetter(key[0]) && k > 0 && isWord(line[k-1]) {
				continue // not the start of a word
			}
			var w values
			if t.matchAt(line, at, 0, &w) {
				*v = w
				return true
			}
		}
		return false
	}
	// a leading hole: find the literal after it, read the value before it
	lit := t.pieces[1].lit
	key, _, _ := strings.Cut(strings.TrimLeft(lit, " "), " ")
	for k := indexFrom(line, key, 0); k >= 0; k = indexFrom(line, key, k+1) {
		end := k
		if lit[0] == ' ' {
			end = blanksBefore(line, k)
		}
		b := end
		for b > 0 && (isDigit(line[b-1]) || line[b-1] == '.' || line[b-1] == ':' || line[b-1] == ',' && p0.kind == kCount) {
			b--
		}
		if b > 0 && line[b-1] == '-' && p0.kind != kClock {
			b--
		}
		if b == end {
			continue
		}
		var w values
		if j, ok := readHole(line, b, p0, &w); !ok || j != end {
			continue
		}
		if t.matchAt(line, end, 1, &w) {
			*v = w
			return true
		}
	}
	return false
}

// matchAt matches t's pieces from the k-th on at line[i:].
func (t *template) matchAt(line string, i, k int, v *values) bool {
	for ; k < len(t.pieces); k++ {
		p := &t.pieces[k]
		if p.lit != "" {
			j, ok := matchLit(line, i, p.lit, k > 0, k+1 < len(t.pieces))
			if !ok {
				return false
			}
			i = j
			continue
		}
		j, ok := readHole(line, i, p, v)
		if !ok {
			return false
		}
		i = j
	}
	if t.end {
		return skipBlanks(line, i) == len(line)
	}
	return true
}

// matchLit matches lit at line[i:]: a blank in lit matches any run of
// blanks, none included, except between two word characters (a hole
// counts as one: its values are numbers), where it needs one at least:
// "Num Epochs" is not "NumEpochs", "Iter {step}" not "Iter5", while
// "< {eta}" reads "<03:04".
func matchLit(line string, i int, lit string, holeBefore, holeAfter bool) (int, bool) {
	for k := 0; k < len(lit); k++ {
		if lit[k] == ' ' {
			before := holeBefore && k == 0 || k > 0 && isWord(lit[k-1])
			after := holeAfter && k == len(lit)-1 || k+1 < len(lit) && isWord(lit[k+1])
			j := skipBlanks(line, i)
			if j == i && before && after {
				return i, false
			}
			i = j
			continue
		}
		if i >= len(line) || line[i] != lit[k] {
			return i, false
		}
		i++
	}
	return i, true
}

func isWord(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' }

// indexFrom is the index in line of key's first place at or after off, -1
// if none.
func indexFrom(line, key string, off int) int {
	if off > len(line) {
		return -1
	}
	if k := strings.Index(line[off:], key); k >= 0 {
		return off + k
	}
	return -1
}

// skipBlanks is the index of the first non-blank at or after i.
func skipBlanks(line string, i int) int {
	for i < len(line) && isBlank(line[i]) {
		i++
	}
	return i
}

// blanksBefore is where the run of blanks that ends at i starts.
func blanksBefore(line string, i int) int {
	for i > 0 && isBlank(line[i-1]) {
		i--
	}
	return i
}

// readHole reads p's value at line[i:] into v.
func readHole(line string, i int, p *piece, v *values) (int, bool) {
	var x float64
	var j int
	var ok bool
	switch p.kind {
	case kInt, kCount:
		var n int64
		n, j, ok = readInt(line, i, p.kind == kCount)
		// a count is not the start of a decimal ("3.5" is no step)
		if ok && j+1 < len(line) && line[j] == '.' && isDigit(line[j+1]) {
			return i, false
		}
		x = float64(n)
	case kNum, kElapsed:
		x, j, ok = readNum(line, i)
	case kClock:
		x, j, ok = readClock(line, i)
	}
	if !ok {
		return i, false
	}
	v.set(p.name, p.kind, x)
	return j, true
}
