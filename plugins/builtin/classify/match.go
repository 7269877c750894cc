package classify

// matcher recognises one family of errors on a line. gates are substrings
// of the lowercased line at least one of which every match contains; the
// matcher checks them itself, and matchLine uses their first three bytes as
// a prefilter so that most lines cost one pass over their bytes.
type matcher struct {
	fn    func(*scanner, int, *line) bool
	gates []string
}

// matchers run in order on every line that is not a traceback frame; the
// first that recognises the line claims it. The order settles lines that
// read as two things: "CUDA error: out of memory" is CUDA_OOM before
// GPU_ERROR, "ImportError: libGL.so.1: cannot open shared object file: No
// such file or directory" is MODULE_NOT_FOUND before FILE_NOT_FOUND.
var matchers = []matcher{
	{matchShell, gateShell}, {matchGPU, gateGPU}, {matchDistributed, gateDistributed}, {matchMemory, gateMemory},
	{matchDisk, gateDisk}, {matchModule, gateModule}, {matchSyntax, gateSyntax}, {matchNetwork, gateNetwork},
	{matchPermission, gatePermission}, {matchFile, gateFile}, {matchArgument, gateArgument}, {matchShape, gateShape},
	{matchNaN, gateNaN}, {matchCrash, gateCrash},
}

// triTable maps a hashed trigram to the matchers with a gate starting with it.
var triTable = func() *[1 << 16]uint16 {
	var t [1 << 16]uint16
	for k, m := range matchers {
		for _, g := range m.gates {
			if len(g) < 3 {
				panic("classify: gate shorter than 3 bytes: " + g)
			}
			t[tri(g[0], g[1], g[2])] |= 1 << k
		}
	}
	return &t
}()

func tri(a, b, c byte) uint32 {
	return (uint32(a)<<16 | uint32(b)<<8 | uint32(c)) * 2654435761 >> 16
}

func matchLine(sc *scanner, i int) {
	l := &sc.lines[i]
	lc := l.lc
	var mask uint16
	for j := 0; j+2 < len(lc); j++ {
		mask |= triTable[tri(lc[j], lc[j+1], lc[j+2])]
	}
	if l.crlf {
		mask |= 1 // matchShell
	}
	for k := range matchers {
		if mask&(1<<k) != 0 && matchers[k].fn(sc, i, l) {
			return
		}
	}
}
