package progress

import (
	"strconv"
	"strings"

	"github.com/runbox/runbox/plugins/builtin/decl"
	"github.com/runbox/runbox/sdk"
)

// A counter across lines of the same shape (issue #24): "[it 120]
// loss=0.53", "[it 130] loss=0.51", ... print no total and no step word
// the keyword reader knows, but a number that rises from one line of the
// shape to the next is the run's progress. A line's shape is its text
// with every number replaced; its counters are its standalone integers
// (not part of a decimal, a clock, a date, a ratio, a name). A line of a
// shape seen before whose first differing counter is higher is at that
// step; a lower one starts the count again (a new pass), said once it
// rises. One line alone says nothing.
//
// What was seen must outlive the batch, or the answer would depend on
// where the host cut the batches: it travels in sdk.ParseInput.State and
// sdk.ParseOutput.State, an opaque string the host keeps for the plugin
// (memo below). A counter speaks only while nothing better has: no
// total known, and the run's step is none or the counter's own.
//
// A declarative entry's {counter} hole (package decl) is the same rule
// for one named shape, kept by entry name.

const memoVersion = "c1"

// maxShapes is how many shapes the memo remembers, the most recent
// first: a training loop prints few shapes in turn.
const maxShapes = 4

type shapeMemo struct {
	h    uint64
	n    int
	vals [4]int64
}

type entryMemo struct {
	name string
	v    int64
}

// memo is what the counters remember between batches.
type memo struct {
	step    int64 // the last step a counter reported (0: none)
	shapes  []shapeMemo
	entries []entryMemo
	dirty   bool
}

func decodeMemo(s string) *memo {
	m := &memo{}
	rest, ok := strings.CutPrefix(s, memoVersion+";")
	if !ok {
		return m // none yet, or another version's: start again
	}
	for rest != "" {
		var tok string
		tok, rest, _ = strings.Cut(rest, ";")
		switch {
		case strings.HasPrefix(tok, "s="):
			m.step, _ = strconv.ParseInt(tok[2:], 10, 64)
		case strings.HasPrefix(tok, "@"):
			name, v, ok := strings.Cut(tok[1:], "=")
			if n, err := strconv.ParseInt(v, 10, 64); ok && err == nil {
				m.entries = append(m.entries, entryMemo{name, n})
			}
		default:
			hs, vs, ok := strings.Cut(tok, ":")
			h, err := strconv.ParseUint(hs, 16, 64)
			if !ok || err != nil || len(m.shapes) == maxShapes {
				continue
			}
			sm := shapeMemo{h: h}
			for _, v := range strings.Split(vs, ",") {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || sm.n == len(sm.vals) {
					break
				}
				sm.vals[sm.n] = n
				sm.n++
			}
			m.shapes = append(m.shapes, sm)
		}
	}
	return m
}

func (m *memo) encode() string {
	b := make([]byte, 0, 96)
	b = append(b, memoVersion...)
	b = append(b, ";s="...)
	b = strconv.AppendInt(b, m.step, 10)
	for _, sm := range m.shapes {
		b = append(b, ';')
		b = strconv.AppendUint(b, sm.h, 16)
		b = append(b, ':')
		for i := 0; i < sm.n; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, sm.vals[i], 10)
		}
	}
	for _, e := range m.entries {
		b = append(append(append(b, ";@"...), e.name...), '=')
		b = strconv.AppendInt(b, e.v, 10)
	}
	return string(b)
}

// counting reports whether a counter may set the run's step now.
func (st *state) counting(m *memo) bool {
	return st.total == 0 && (st.step == 0 || st.step == m.step)
}

// memo returns the batch's memo, decoded from the input on first use.
func (st *state) getMemo() *memo {
	if st.memo == nil {
		st.memo = decodeMemo(st.memoIn)
	}
	return st.memo
}

// countShape reads s's counters against the last line of its shape; u
// is the update a reader gave s (metrics, no step): it gets the step
// when the counter rose.
func (st *state) countShape(s string, u *sdk.Progress) {
	h, vals, n := shapeOf(s)
	if n == 0 {
		return
	}
	m := st.getMemo()
	m.dirty = true
	k := -1
	for i := range m.shapes {
		if m.shapes[i].h == h && m.shapes[i].n == n {
			k = i
			break
		}
	}
	if k < 0 {
		if len(m.shapes) < maxShapes {
			m.shapes = append(m.shapes, shapeMemo{})
		}
		copy(m.shapes[1:], m.shapes[:len(m.shapes)-1])
		m.shapes[0] = shapeMemo{h: h, n: n, vals: vals}
		return
	}
	old := m.shapes[k]
	copy(m.shapes[1:k+1], m.shapes[:k])
	m.shapes[0] = shapeMemo{h: h, n: n, vals: vals}
	for i := 0; i < n; i++ {
		if vals[i] == old.vals[i] {
			continue
		}
		if step, ok := decl.Rise(old.vals[i], vals[i]); ok && st.counting(m) {
			u.Step = step
			m.step = step
		}
		return
	}
}

// countEntry is the counter rule for a declarative entry's {counter}.
func (st *state) countEntry(c decl.Counter, u *sdk.Progress) {
	m := st.getMemo()
	m.dirty = true
	prev := int64(0)
	k := -1
	for i, e := range m.entries {
		if e.name == c.Entry {
			prev, k = e.v, i
			break
		}
	}
	if k < 0 {
		m.entries = append(m.entries, entryMemo{c.Entry, c.Value})
	} else {
		m.entries[k].v = c.Value
	}
	if step, ok := decl.Rise(prev, c.Value); ok && st.counting(m) {
		u.Step = step
		m.step = step
	}
}

// shapeOf hashes s with its numbers replaced (FNV-1a) and returns its
// standalone integers, the first four.
func shapeOf(s string) (h uint64, vals [4]int64, n int) {
	h = 14695981039346656037
	for i := 0; i < len(s); {
		c := s[i]
		if !isDigit(c) {
			h = (h ^ uint64(c)) * 1099511628211
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if n < len(vals) && j-i <= 15 && standalone(s, i, j) {
			v, _ := strconv.ParseInt(s[i:j], 10, 64)
			vals[n] = v
			n++
		}
		h = (h ^ '#') * 1099511628211
		i = j
	}
	return h, vals, n
}

// standalone reports whether the digits s[i:j] are a count of their own:
// not part of a decimal, a clock, a date, a ratio, a percentage, a name
// ("l2", "v3", "bert-base-12"), a thousands group, nor a value after its
// name ("grad_norm: 3", "n=5": a metric that happens to be whole, which
// rises and falls).
func standalone(s string, i, j int) bool {
	k := i
	for k > 0 && (s[k-1] == ' ' || s[k-1] == '\t') {
		k--
	}
	if k > 0 && (s[k-1] == '=' || s[k-1] == ':') {
		return false
	}
	if i > 0 {
		switch c := s[i-1]; {
		case isLetter(c), c == '_', c == '.', c == ':', c == '/', c == '-', c == '+', c == '\\':
			return false
		case c == ',' && i > 1 && isDigit(s[i-2]):
			return false
		}
	}
	if j < len(s) {
		switch c := s[j]; {
		case isLetter(c), c == '_', c == '.', c == ':', c == '/', c == '-', c == '%', c == '\\':
			return false
		case c == ',' && j+1 < len(s) && isDigit(s[j+1]):
			return false
		}
	}
	return true
}
