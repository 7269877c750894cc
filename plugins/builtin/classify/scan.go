package classify

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// role says what part a line plays in the output's structure.
type role uint8

const (
	roleText  role = iota // free text
	roleFrame             // traceback header, frame or source line: never matched
	roleExc               // the exception line that ends a traceback
	roleMsg               // continuation of an exception message
)

// traceback is one Python traceback (or an orphan exception line whose
// header was cut off by the tail).
type traceback struct {
	exc      int // line index of the exception line, -1 while unknown
	typ, msg string
	group    int  // chained tracebacks share a group
	cause    int  // higher = nearer the root cause within the group
	weak     bool // "Exception ignored in", or logged as a warning
	wrapper  bool // a launcher wrapper: ChildFailedError, CalledProcessError
	indent   int
	frame    frame // last frame
	user     frame // last frame outside site-packages and the stdlib
}

type frame struct{ file, line, fn string }

// keyState follows the traceback being printed on one stream label, so
// interleaved "[rank0]:" and "[rank1]:" tracebacks stay apart.
type keyState struct {
	key       string
	tb        int // traceback in progress, -1 for none
	phase     int // 0 none, 1 frames, 2 exception message
	n         int // lines seen in the current phase
	chain     bool
	prev      int // last traceback on this key
	afterFile bool
	ignored   bool // the previous line said "Exception ignored in"
}

type scanner struct {
	in      *sdk.ClassifyInput
	lines   []line
	roles   []role
	tbOf    []int32
	tbs     []traceback
	states  []keyState
	cands   []cand
	groups  int
	file    frame // last `File "x", line N` seen outside a traceback (SyntaxError)
	fileAt  int
	seen    map[string]int // free-text line → its candidate (-1: none)
	sender  int            // otherSender's answer: 0 unknown, -1 none, else line+1
	caretAt int            // a caret under a source line outside a traceback, 0: none
}

func scan(in *sdk.ClassifyInput) *scanner {
	sc := &scanner{in: in, lines: splitLines(in.StdoutTail, in.StderrTail)}
	sc.roles = make([]role, len(sc.lines))
	sc.tbOf = make([]int32, len(sc.lines))
	for i := range sc.lines {
		sc.tbOf[i] = -1
		sc.structure(i)
		if sc.roles[i] != roleFrame && sc.lines[i].text != "" {
			matchLine(sc, i)
		}
	}
	return sc
}

func (sc *scanner) state(key string) *keyState {
	for k := range sc.states {
		if sc.states[k].key == key {
			return &sc.states[k]
		}
	}
	sc.states = append(sc.states, keyState{key: key, tb: -1, prev: -1})
	return &sc.states[len(sc.states)-1]
}

// structure assigns line i its role and traceback.
func (sc *scanner) structure(i int) {
	l := &sc.lines[i]
	st := sc.state(l.key)
	lc := l.lc
	if l.box {
		sc.roles[i] = roleFrame
		if st.phase == 1 {
			sc.tbOf[i] = int32(st.tb)
		}
		return
	}
	if hasTracebackHeader(lc) && !quotesHeader(l.text) {
		sc.startTB(i, st, strings.HasPrefix(lc, "original traceback"))
		return
	}
	if strings.HasPrefix(lc, "the above exception was the direct cause") || strings.HasPrefix(lc, "during handling of the above exception") {
		st.chain, st.phase, st.tb = true, 0, -1
		sc.roles[i] = roleFrame
		return
	}
	switch st.phase {
	case 1:
		sc.inFrames(i, st)
		return
	case 2:
		st.n++
		if l.text == "" || st.n > 40 {
			st.phase, st.tb = 0, -1
		} else {
			sc.roles[i], sc.tbOf[i] = roleMsg, int32(st.tb)
			return
		}
	}
	st.ignored = strings.HasPrefix(lc, "exception ignored in")
	if f, ok := parseFrame(l.text); ok {
		sc.file, sc.fileAt, st.afterFile = f, i, true
		sc.roles[i] = roleFrame
		return
	}
	if st.afterFile && l.indent > 0 {
		st.afterFile = false
		sc.roles[i] = roleFrame
		return
	}
	st.afterFile = false
	if isCaret(l.text) {
		sc.roles[i] = roleFrame
		if sc.file.file != "" && i-sc.fileAt == 2 {
			sc.caretAt = i // a source line pointed at, outside a traceback
		}
		return
	}
	if typ, msg, ok := parseException(l.text, true); ok && !l.weak {
		var f frame
		if sc.file.file != "" && i-sc.fileAt <= 4 {
			f = sc.file
		}
		sc.tbs = append(sc.tbs, traceback{exc: i, typ: typ, msg: msg, group: sc.groups, frame: f, user: f})
		sc.groups++
		t := len(sc.tbs) - 1
		sc.markWrapper(t)
		sc.roles[i], sc.tbOf[i] = roleExc, int32(t)
		st.prev, st.tb, st.phase, st.n = t, t, 2, 0
	}
}

func (sc *scanner) startTB(i int, st *keyState, original bool) {
	l := &sc.lines[i]
	tb := traceback{exc: -1, group: sc.groups, indent: l.indent, weak: l.weak || st.ignored}
	switch {
	case original && st.prev >= 0: // DataLoader worker: the inner one is the root
		tb.group, tb.cause = sc.tbs[st.prev].group, sc.tbs[st.prev].cause+1
		tb.weak = sc.tbs[st.prev].weak
	case st.chain && st.prev >= 0: // the new one wraps the previous
		tb.group, tb.cause = sc.tbs[st.prev].group, sc.tbs[st.prev].cause-1
	default:
		sc.groups++
	}
	sc.tbs = append(sc.tbs, tb)
	t := len(sc.tbs) - 1
	sc.roles[i], sc.tbOf[i] = roleFrame, int32(t)
	st.tb, st.prev, st.phase, st.n, st.chain, st.afterFile, st.ignored = t, t, 1, 0, false, false, false
}

func (sc *scanner) inFrames(i int, st *keyState) {
	l := &sc.lines[i]
	tb := &sc.tbs[st.tb]
	st.n++
	sc.tbOf[i] = int32(st.tb)
	if f, ok := parseFrame(l.text); ok {
		tb.frame = f
		if isUserFile(f.file) {
			tb.user = f
		}
		sc.roles[i], st.afterFile = roleFrame, true
		return
	}
	if l.text == "" || isCaret(l.text) || strings.HasPrefix(l.text, "[Previous line repeated") || l.text == "..." {
		sc.roles[i] = roleFrame
		return
	}
	if typ, msg, ok := parseException(l.text, false); ok && (l.indent <= tb.indent+1 || !st.afterFile) {
		tb.exc, tb.typ, tb.msg = i, typ, msg
		sc.markWrapper(st.tb)
		sc.roles[i] = roleExc
		st.phase, st.n, st.afterFile = 2, 0, false
		return
	}
	if st.afterFile || l.indent > tb.indent+1 {
		st.afterFile = false
		sc.roles[i] = roleFrame
		return
	}
	sc.tbOf[i] = -1 // interleaved output from elsewhere
	if st.n > 400 {
		st.phase, st.tb = 0, -1
	}
}

func (sc *scanner) markWrapper(t int) {
	tb := &sc.tbs[t]
	typ := tb.typ
	if k := strings.LastIndexByte(typ, '.'); k >= 0 {
		typ = typ[k+1:]
	}
	switch {
	case typ == "ChildFailedError", typ == "CalledProcessError", strings.HasPrefix(typ, "RayTaskError"),
		typ == "RayActorError", typ == "BrokenProcessPool", typ == "ProcessRaisedException", typ == "ProcessExitedException":
		tb.wrapper = true
	}
}

// parseFrame reads `File "x.py", line 12, in main`, IPython's
// `File ~/x.py:12, in main()` and `Cell In[3], line 4`.
func parseFrame(t string) (frame, bool) {
	switch {
	case strings.HasPrefix(t, `File "`):
		rest := t[6:]
		q := strings.IndexByte(rest, '"')
		if q < 0 {
			return frame{}, false
		}
		f := frame{file: rest[:q]}
		rest = rest[q+1:]
		if k := strings.Index(rest, "line "); k >= 0 {
			j := k + 5
			for j < len(rest) && isDigit(rest[j]) {
				j++
			}
			f.line = rest[k+5 : j]
		}
		if k := strings.Index(rest, ", in "); k >= 0 {
			f.fn = strings.TrimSpace(rest[k+5:])
		}
		return f, true
	case strings.HasPrefix(t, "File ~") || strings.HasPrefix(t, "File /") || strings.HasPrefix(t, "File <"):
		rest := t[5:]
		f := frame{file: rest}
		if k := strings.Index(rest, ", in "); k >= 0 {
			f.file, f.fn = rest[:k], strings.TrimSuffix(rest[k+5:], "()")
		}
		if k := strings.LastIndexByte(f.file, ':'); k > 0 && allDigits(f.file[k+1:]) {
			f.file, f.line = f.file[:k], f.file[k+1:]
		}
		return f, true
	case strings.HasPrefix(t, "Cell In["), strings.HasPrefix(t, "----> "), strings.HasPrefix(t, "Input In ["):
		return frame{file: t}, true
	}
	return frame{}, false
}

func isUserFile(f string) bool {
	return f != "" && !has(f, "site-packages", "dist-packages", "/lib/python", "\\lib\\", "<frozen", "<string>", "/usr/lib/")
}

// isCaret matches the "^^^^^" and "~~~^^^" markers of Python 3.11+.
func isCaret(t string) bool {
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] != '^' && t[i] != '~' && t[i] != ' ' {
			return false
		}
	}
	return true
}

// parseException reads "pkg.mod.SomeError: message". strict is for lines
// found outside a traceback (its header may have been cut off): the name
// must then end like an exception class.
func parseException(t string, strict bool) (typ, msg string, ok bool) {
	i, lastStart := 0, 0
	for {
		j := i
		for j < len(t) && (isLetter(t[j]) || isDigit(t[j]) || t[j] == '_') {
			j++
		}
		if j == i || isDigit(t[i]) {
			return "", "", false
		}
		if j+1 < len(t) && t[j] == '.' && t[j+1] != ' ' {
			lastStart, i = j+1, j+1
			continue
		}
		i = j
		break
	}
	name := t[:i]
	last := strings.TrimLeft(t[lastStart:i], "_")
	if last == "" || last[0] < 'A' || last[0] > 'Z' || strings.HasSuffix(last, "Warning") {
		return "", "", false
	}
	rest := t[i:]
	if strings.HasPrefix(rest, "(") {
		k := strings.IndexByte(rest, ')')
		if k < 0 || strings.ContainsAny(rest[:k], " ") {
			return "", "", false
		}
		name, rest = t[:i+k+1], rest[k+1:]
	}
	switch {
	case rest == "" || rest == ":":
	case strings.HasPrefix(rest, ": "):
		msg = strings.TrimSpace(rest[2:])
	default:
		return "", "", false
	}
	if strict && !exceptionLike(last, lastStart > 0, msg) {
		return "", "", false
	}
	return name, msg, true
}

func exceptionLike(last string, dotted bool, msg string) bool {
	switch last {
	case "Error", "Exception":
		return dotted || msg != "" && last == "Exception"
	case "KeyboardInterrupt", "SystemExit", "StopIteration", "GeneratorExit":
		return true
	}
	for _, suf := range []string{"Error", "Exception", "Interrupt", "Exit", "Failure", "Failed", "Fault", "Timeout"} {
		if strings.HasSuffix(last, suf) {
			return true
		}
	}
	return false
}

// quotesHeader: an exception line whose message carries another
// traceback as an escaped string (Python 2 DataLoader workers re-raised
// `KeyError: 'Traceback (most recent call last):\n  File ...'`) ends the
// traceback it is in; it does not start one.
func quotesHeader(t string) bool {
	_, msg, ok := parseException(t, false)
	return ok && strings.Contains(msg, "Traceback (most recent call last)")
}

// hasTracebackHeader finds "traceback (most recent call last)" by its
// rarer '(' so that lines full of t's do not cost a search each.
func hasTracebackHeader(lc string) bool {
	for i := strings.IndexByte(lc, '('); i >= 0; {
		if strings.HasPrefix(lc[i:], "(most recent call last)") && strings.HasSuffix(lc[:i], "traceback ") {
			return true
		}
		k := strings.IndexByte(lc[i+1:], '(')
		if k < 0 {
			return false
		}
		i += 1 + k
	}
	return false
}
