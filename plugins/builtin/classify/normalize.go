package classify

import (
	"strings"
)

// line is one output line after normalisation: terminal escapes, markdown
// quoting and per-line prefixes (timestamps, log levels, rank labels) removed.
type line struct {
	text   string // normalised content, leading whitespace removed
	lc     string // text, ASCII-lowercased (same byte offsets)
	indent int    // leading whitespace of the content after the prefixes
	key    string // stream label ("rank0", "pid=12"); "" when none
	weak   bool   // logged at warning/info/debug level or a Python warning
	crlf   bool   // a carriage return sat inside a quoted name: CRLF script
	box    bool   // a row of a rich-formatted traceback box: source code, never matched
}

// splitLines normalises stdout then stderr tails into lines. The lowercased
// copies share one buffer so the whole pass costs a handful of allocations.
func splitLines(tails ...string) []line {
	n, size := 0, 0
	for _, t := range tails {
		n += strings.Count(t, "\n") + 1
		size += len(t)
	}
	lines := make([]line, 0, n)
	type span struct{ a, b int }
	spans := make([]span, 0, n)
	buf := make([]byte, 0, size)
	for _, t := range tails {
		for len(t) > 0 {
			raw := t
			if i := strings.IndexByte(t, '\n'); i >= 0 {
				raw, t = t[:i], t[i+1:]
			} else {
				t = ""
			}
			l, ok := normalize(raw)
			if !ok {
				continue
			}
			for _, p := range splitTraceback(l) {
				a := len(buf)
				buf = lowerInto(buf, p.text)
				spans = append(spans, span{a, len(buf)})
				lines = append(lines, p)
			}
		}
	}
	all := string(buf)
	for i := range lines {
		lines[i].lc = all[spans[i].a:spans[i].b]
	}
	return lines
}

// splitTraceback separates a traceback header that is glued to other text —
// a progress bar or log line with no newline before it, or a paste whose
// line breaks were lost ("...of binary: python   Traceback (most recent
// call last):  File "x.py", line 3") — so each part is read on its own.
func splitTraceback(l line) []line {
	const hdr = "Traceback (most recent call last):"
	k := strings.Index(l.text, hdr)
	if k < 0 {
		return []line{l}
	}
	var out []line
	if head := strings.TrimRight(l.text[:k], " \t"); head != "" {
		if strings.HasSuffix(strings.ToLower(head), "original") {
			return []line{l} // torch's "Original Traceback" from a worker
		}
		h := l
		h.text = head
		out = append(out, h)
	}
	t := l
	t.text, t.weak = hdr, false
	if k > 0 {
		t.indent = 0
	}
	out = append(out, t)
	if rest := strings.TrimSpace(l.text[k+len(hdr):]); strings.HasPrefix(rest, "File \"") {
		out = append(out, flatFrames(t, rest)...)
	} else if rest != "" {
		return []line{l}
	}
	return out
}

// flatFrames splits the frames of a traceback whose line breaks were lost
// (`File "a.py", line 3, in f     x = g()   File "b.py", ... KeyError: 'k'`)
// into frame, source and exception lines. A frame's source starts after the
// run of spaces that followed its newline; the exception is the first
// exception-like token in the last source.
func flatFrames(t line, rest string) []line {
	var out []line
	emit := func(text string, indent int) {
		if text = strings.TrimSpace(text); text != "" {
			f := t
			f.text, f.indent = text, indent
			out = append(out, f)
		}
	}
	for rest != "" {
		next := strings.Index(rest[1:], "File \"")
		seg := rest
		if next >= 0 {
			seg, rest = rest[:next+1], rest[next+1:]
		} else {
			rest = ""
		}
		head, src := seg, ""
		if k := strings.Index(seg, ", in "); k >= 0 {
			if j := strings.Index(seg[k:], "  "); j >= 0 {
				head, src = seg[:k+j], seg[k+j:]
			}
		}
		emit(head, 2)
		if rest == "" {
			if at := excStart(src); at >= 0 {
				emit(src[:at], 4)
				emit(src[at:], 0)
				break
			}
		}
		emit(src, 4)
	}
	return out
}

// excStart finds where an exception line starts inside s: after a space,
// the first word that parses as "SomeError: message".
func excStart(s string) int {
	for i := 0; i < len(s); i++ {
		if (i == 0 || s[i-1] == ' ') && s[i] >= 'A' && s[i] <= 'Z' {
			if _, _, ok := parseException(s[i:], true); ok {
				return i
			}
		}
	}
	return -1
}

// normalize cleans one raw line. ok is false for lines that carry nothing:
// markdown fences and HTML wrappers from pasted issues.
func normalize(raw string) (line, bool) {
	var l line
	raw = strings.TrimRight(raw, "\r")
	if strings.IndexByte(raw, '\r') >= 0 {
		raw, l.crlf = carriageReturns(raw)
	}
	if strings.IndexByte(raw, '&') >= 0 && strings.IndexByte(raw, ';') >= 0 {
		raw = htmlEntities.Replace(raw)
	}
	if needsANSI(raw) {
		raw = stripANSI(raw)
	}
	s, key, level := stripPrefixes(raw)
	l.key = key
	l.weak = level == 'W' || level == 'I'
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		if s[i] == '\t' {
			l.indent += 4
		} else {
			l.indent++
		}
		i++
	}
	l.text = strings.TrimRight(s[i:], " \t")
	t := l.text
	if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
		// A fence carries at most a language tag; text glued to it
		// ("```Traceback (most recent call last): ...") is output.
		rest := strings.TrimLeft(t, "`~")
		if !strings.Contains(strings.TrimSpace(rest), " ") {
			return l, false
		}
		l.text, t = rest, rest
	}
	if k := len(t) - 3; k > 0 && strings.HasSuffix(t, "```") {
		l.text = strings.TrimRight(strings.TrimRight(t, "`"), " \t") // a closing fence glued to the last line
		t = l.text
	}
	if strings.HasPrefix(t, "<details") || strings.HasPrefix(t, "</details") || strings.HasPrefix(t, "<summary") {
		return l, false
	}
	if strings.HasPrefix(t, "│") && strings.HasSuffix(t, "│") && len(t) > len("││") {
		l.box = true // rich's "│ ❱ 812 │   trainer.train(args)   │"
	}
	if !l.weak && isPythonWarning(t) {
		l.weak = true
	}
	return l, true
}

// carriageReturns resolves progress-bar overwrites (keep the last segment)
// unless the CR sits inside a quoted name, which is the mark of a script
// saved with CRLF line endings ("python3\r': No such file").
func carriageReturns(raw string) (string, bool) {
	for i := 0; i+1 < len(raw); i++ {
		if raw[i] == '\r' && (isQuote(raw[i+1]) || raw[i+1] == ':' || strings.HasPrefix(raw[i+1:], "’")) {
			return strings.ReplaceAll(raw, "\r", `\r`), true
		}
	}
	parts := strings.Split(raw, "\r")
	for i := len(parts) - 1; i >= 0; i-- {
		if strings.TrimSpace(parts[i]) != "" {
			return parts[i], false
		}
	}
	return "", false
}

// needsANSI reports an escape byte or a "[1;31m" remnant of one.
func needsANSI(s string) bool {
	if strings.IndexByte(s, 0x1b) >= 0 {
		return true
	}
	for i := strings.IndexByte(s, '['); i >= 0 && i+2 < len(s); {
		j := i + 1
		for j < len(s) && j-i <= 9 && (isDigit(s[j]) || s[j] == ';') {
			j++
		}
		if j > i+1 && j < len(s) && s[j] == 'm' {
			return true
		}
		k := strings.IndexByte(s[i+1:], '[')
		if k < 0 {
			break
		}
		i += 1 + k
	}
	return false
}

// stripANSI removes CSI/OSC escape sequences and the "[31m" remnants left
// when an escape byte is lost in a copy-paste.
func stripANSI(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0x1b && i+1 < len(s) {
			switch s[i+1] {
			case '[':
				j := i + 2
				for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
					j++
				}
				i = j
				continue
			case ']':
				j := i + 2
				for j < len(s) && s[j] != 0x07 && !(s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\') {
					j++
				}
				if j < len(s) && s[j] == 0x1b {
					j++
				}
				i = j
				continue
			default:
				i++
				continue
			}
		}
		if c == '[' {
			j := i + 1
			for j < len(s) && j-i <= 9 && (isDigit(s[j]) || s[j] == ';') {
				j++
			}
			if j > i+1 && j < len(s) && s[j] == 'm' {
				i = j
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// isPythonWarning spots "file.py:12: UserWarning: ..." and "warnings.warn(".
func isPythonWarning(t string) bool {
	if strings.HasPrefix(t, "warnings.warn(") || strings.HasPrefix(t, "Warning:") || strings.HasPrefix(t, "warning:") {
		return true
	}
	i := strings.Index(t, "Warning: ")
	return i > 0 && isLetter(t[i-1]) && !strings.Contains(t[:i], "Error")
}

// htmlEntities undoes the escaping of logs scraped from rendered issue pages
// ("File &quot;x.py&quot;", "No module named &#39;foo&#39;").
var htmlEntities = strings.NewReplacer("&quot;", `"`, "&#39;", "'", "&#x27;", "'", "&apos;", "'", "&lt;", "<", "&gt;", ">", "&amp;", "&", "&#34;", `"`, "&nbsp;", " ")
