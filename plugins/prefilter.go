package plugins

// prefilter answers "does line contain one of these literals?" in one pass
// over the line, whatever the number of literals: it is what a progress
// plugin's manifest asks the host to apply to every output line.
//
// A 64 Ki-bit set marks the first two bytes of every literal (one load and
// one bit test per position of the line; a one-byte literal marks every
// pair it starts); literals are bucketed by first byte and compared only
// where the pair matched. The answer is exactly that of
// strings.Contains on each literal (an empty literal matches everything).
type prefilter struct {
	all     bool                 // no literals, or an empty one: every line
	single  [256]bool            // one-byte literals
	pairs   [1 << 16 / 64]uint64 // first two bytes of the longer literals
	byFirst [256][]string        // longer literals by first byte
}

func newPrefilter(literals []string) *prefilter {
	f := &prefilter{all: len(literals) == 0}
	for _, lit := range literals {
		switch len(lit) {
		case 0:
			f.all = true
		case 1:
			f.single[lit[0]] = true
			for b := range 256 {
				k := uint16(lit[0])<<8 | uint16(b)
				f.pairs[k>>6] |= 1 << (k & 63)
			}
		default:
			k := uint16(lit[0])<<8 | uint16(lit[1])
			f.pairs[k>>6] |= 1 << (k & 63)
			f.byFirst[lit[0]] = append(f.byFirst[lit[0]], lit)
		}
	}
	return f
}

// match reports whether line contains one of the literals.
func (f *prefilter) match(line string) bool {
	if f.all {
		return true
	}
	n := len(line)
	if n == 0 {
		return false
	}
	for i := 0; i+1 < n; i++ {
		c := line[i]
		k := uint16(c)<<8 | uint16(line[i+1])
		if f.pairs[k>>6]&(1<<(k&63)) != 0 && f.at(line, i) {
			return true
		}
	}
	return f.single[line[n-1]]
}

// at reports whether a literal starts at line[i] (i+1 < len(line)).
func (f *prefilter) at(line string, i int) bool {
	c := line[i]
	if f.single[c] {
		return true
	}
	for _, lit := range f.byFirst[c] {
		if len(lit) <= len(line)-i && lit[1] == line[i+1] && line[i:i+len(lit)] == lit {
			return true
		}
	}
	return false
}
