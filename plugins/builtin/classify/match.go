package classify

import "strings"

// matcher recognises one family of errors on a line. gates are substrings
// of the lowercased line at least one of which every match contains; the
// matcher checks them itself, and matchLine uses their first three bytes as
// a prefilter so that most lines cost one pass over their bytes.
type matcher struct {
	name  string // the function's name: derivedGates is keyed by it
	fn    func(*scanner, int, *line) bool
	gates []string
}

// matchers run in order on every line that is not a traceback frame; the
// first that recognises the line claims it. The order settles lines that
// read as two things: "CUDA error: out of memory" is CUDA_OOM before
// GPU_ERROR, "ImportError: libGL.so.1: cannot open shared object file: No
// such file or directory" is MODULE_NOT_FOUND before FILE_NOT_FOUND.
var matchers = []matcher{
	{"matchShell", matchShell, gateShell}, {"matchGPU", matchGPU, gateGPU}, {"matchDistributed", matchDistributed, gateDistributed},
	{"matchMemory", matchMemory, gateMemory}, {"matchDisk", matchDisk, gateDisk}, {"matchModule", matchModule, gateModule},
	{"matchSyntax", matchSyntax, gateSyntax}, {"matchNetwork", matchNetwork, gateNetwork}, {"matchPermission", matchPermission, gatePermission},
	{"matchFile", matchFile, gateFile}, {"matchArgument", matchArgument, gateArgument}, {"matchShape", matchShape, gateShape},
	{"matchNaN", matchNaN, gateNaN}, {"matchCrash", matchCrash, gateCrash}, {"matchTimeout", matchTimeout, gateTimeout},
	{"matchSignature", matchSignature, sigGates},
}

// gatesOf is a matcher's gates: its own, and every phrase its cases test
// first that none of them covers (gates_gen.go, derived from the source by
// internal/gengates), so that no phrase is unreachable behind the gates.
func gatesOf(m matcher) []string {
	g := append([]string(nil), m.gates...)
	for _, p := range derivedGates[m.name] {
		if !has(p, g...) {
			g = append(g, p)
		}
	}
	return g
}

// gateMask finds, in one pass over a line's bytes, which matchers have a
// gate in it. Gates are keyed by their first four bytes (three for the
// three-byte ones) and hashed into slot tables, so a position costs two
// array loads and almost every one is rejected before the exact check.
type gateRef struct {
	key  uint32
	gate string
	bit  uint16
}

var (
	slots3, slots4 [1 << 16]uint16 // hashed key → index into gateLists (0: none)
	gateLists      = [][]gateRef{nil}
)

func init() {
	for k := range matchers {
		matchers[k].gates = gatesOf(matchers[k])
		m := matchers[k]
		for _, g := range m.gates {
			if len(g) < 3 {
				panic("classify: gate shorter than 3 bytes: " + g)
			}
			ref := gateRef{key: key3(g[0], g[1], g[2]), gate: g, bit: 1 << k}
			table := &slots3
			if len(g) >= 4 {
				ref.key, table = key4(g[0], g[1], g[2], g[3]), &slots4
			}
			h := hash16(ref.key)
			if table[h] == 0 {
				table[h] = uint16(len(gateLists))
				gateLists = append(gateLists, nil)
			}
			gateLists[table[h]] = append(gateLists[table[h]], ref)
		}
	}
}

func key3(a, b, c byte) uint32    { return uint32(a)<<16 | uint32(b)<<8 | uint32(c) }
func key4(a, b, c, d byte) uint32 { return uint32(a)<<24 | uint32(b)<<16 | uint32(c)<<8 | uint32(d) }
func hash16(k uint32) uint32      { return k * 2654435761 >> 16 }

// gateMask returns the matchers with at least one gate in lc.
func gateMask(lc string) uint16 {
	var mask uint16
	for j := 0; j+2 < len(lc); j++ {
		k3 := key3(lc[j], lc[j+1], lc[j+2])
		if s := slots3[hash16(k3)]; s != 0 {
			mask |= exactAt(lc[j:], k3, s)
		}
		if j+3 < len(lc) {
			k4 := k3<<8 | uint32(lc[j+3])
			if s := slots4[hash16(k4)]; s != 0 {
				mask |= exactAt(lc[j:], k4, s)
			}
		}
	}
	return mask
}

func exactAt(s string, key uint32, slot uint16) uint16 {
	var mask uint16
	for _, r := range gateLists[slot] {
		if r.key == key && strings.HasPrefix(s, r.gate) {
			mask |= r.bit
		}
	}
	return mask
}

func matchLine(sc *scanner, i int) {
	l := &sc.lines[i]
	lc := l.lc
	mask := gateMask(lc)
	if l.crlf {
		mask |= 1 // matchShell
	}
	if mask == 0 {
		return
	}
	// Logs repeat themselves (a warning every step): a free-text line seen
	// before gives the same answer, which only moves to the later line.
	free := sc.roles[i] == roleText && sc.tbOf[i] < 0
	if free {
		if k, ok := sc.seen[lc]; ok {
			if k >= 0 && sc.lines[sc.cands[k].at].weak == l.weak {
				sc.cands[k].at = i
			}
			return
		}
		if sc.seen == nil {
			sc.seen = map[string]int{}
		}
		sc.seen[lc] = -1
	}
	n := len(sc.cands)
	defer func() {
		if free && len(sc.cands) > n {
			sc.seen[lc] = len(sc.cands) - 1
		}
	}()
	for k := range matchers {
		if mask&(1<<k) != 0 && matchers[k].fn(sc, i, l) {
			return
		}
	}
}
