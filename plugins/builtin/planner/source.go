package planner

import (
	"strings"
)

// stmt is one logical statement of a script: a Python statement with its
// bracketed continuation lines joined, or one shell line with its backslash
// continuations joined. Comments are gone from both views.
type stmt struct {
	Line int    // 1-based line where the statement starts
	Code string // the statement on one line
	// Bare is Code with the body of every string literal replaced by '_'
	// bytes, so patterns that must match code, not prose inside strings,
	// search Bare and read literal values from Code at the same offsets.
	Bare string
}

// Bounds on the work done for pathological input. A statement longer than
// maxStmtBytes is data (a giant literal), not code worth reading whole.
const (
	maxStatements = 50000
	maxStmtBytes  = 16 << 10
)

// pyStatements splits Python source into logical statements, dropping
// comments and statements that are only a string literal (docstrings).
func pyStatements(src string) []stmt {
	var out []stmt
	var code, bare []byte
	line, start, depth := 1, 1, 0
	started := false
	flush := func() {
		started = false
		from, d := 0, 0
		for i := 0; i <= len(bare); i++ {
			if i < len(bare) {
				switch bare[i] {
				case '(', '[', '{':
					d++
				case ')', ']', '}':
					d--
				}
				if bare[i] != ';' || d != 0 {
					continue
				}
			}
			// Trim by Bare's blanks so Code and Bare keep equal offsets.
			lo, hi := from, i
			for lo < hi && isBlank(bare[lo]) {
				lo++
			}
			for hi > lo && isBlank(bare[hi-1]) {
				hi--
			}
			hi = min(hi, lo+maxStmtBytes)
			c, b := string(code[lo:hi]), string(bare[lo:hi])
			if c != "" && !isStringOnly(b) && len(out) < maxStatements {
				out = append(out, stmt{Line: start, Code: c, Bare: b})
			}
			from = i + 1
		}
		code, bare = code[:0], bare[:0]
	}
	for i := 0; i < len(src); i++ {
		ch := src[i]
		if !started && ch != '\n' && ch != ' ' && ch != '\t' && ch != '\r' && ch != '#' {
			start, started = line, true
		}
		switch {
		case ch == '#':
			for i+1 < len(src) && src[i+1] != '\n' {
				i++
			}
		case ch == '\\' && i+1 < len(src) && src[i+1] == '\n':
			code, bare = append(code, ' '), append(bare, ' ')
			i++
			line++
		case ch == '\r':
			// CRLF endings: the '\n' that follows ends the line.
		case ch == '\n':
			line++
			if depth > 0 {
				code, bare = append(code, ' '), append(bare, ' ')
				continue
			}
			flush()
		case ch == '"' || ch == '\'':
			end, nl := scanPyString(src, i)
			lit := src[i:end]
			q := 1
			if strings.HasPrefix(lit, `"""`) || strings.HasPrefix(lit, `'''`) {
				q = 3
			}
			for j := 0; j < len(lit); j++ {
				c := lit[j]
				if c == '\n' || c == '\r' {
					c = ' '
				}
				code = append(code, c)
				if j < q || (j >= len(lit)-q && len(lit) >= 2*q && lit[len(lit)-1] == lit[0]) {
					bare = append(bare, lit[j])
				} else {
					bare = append(bare, '_')
				}
			}
			line += nl
			i = end - 1
		default:
			switch ch {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				if depth > 0 {
					depth--
				}
			}
			code, bare = append(code, ch), append(bare, ch)
		}
	}
	flush()
	return out
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' }

// scanPyString returns the end offset (exclusive) of the string literal that
// starts at src[i] and the number of newlines inside it. An unterminated
// single-quoted string ends at the end of its line.
func scanPyString(src string, i int) (end, newlines int) {
	q := src[i]
	triple := i+2 < len(src) && src[i+1] == q && src[i+2] == q
	j := i + 1
	if triple {
		j = i + 3
	}
	for j < len(src) {
		c := src[j]
		switch {
		case c == '\\':
			if j+1 < len(src) && src[j+1] == '\n' {
				newlines++
			}
			j += 2
			continue
		case c == '\n':
			if !triple {
				return j, newlines
			}
			newlines++
		case c == q:
			if !triple {
				return j + 1, newlines
			}
			if j+2 < len(src) && src[j+1] == q && src[j+2] == q {
				return j + 3, newlines
			}
		}
		j++
	}
	return len(src), newlines
}

// isStringOnly reports whether a bare statement is nothing but string
// literals (a docstring or a stray string expression).
func isStringOnly(bare string) bool {
	if !strings.ContainsAny(bare, `"'`) {
		return false
	}
	return strings.Trim(bare, "\"'_ \trRbBuUfF") == ""
}

// shellStatements splits a shell script into lines with comments removed
// and backslash continuations joined. Here-document bodies are skipped: they
// are data for another program, not commands.
func shellStatements(src string) []stmt {
	var out []stmt
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	heredoc := ""
	for i := 0; i < len(lines) && len(out) < maxStatements; i++ {
		if heredoc != "" {
			if strings.TrimSpace(lines[i]) == heredoc {
				heredoc = ""
			}
			continue
		}
		start := i + 1
		l := lines[i]
		if strings.HasSuffix(l, `\`) {
			parts := []string{l[:len(l)-1]}
			for strings.HasSuffix(lines[i], `\`) && i+1 < len(lines) {
				i++
				parts = append(parts, strings.TrimSuffix(lines[i], `\`))
			}
			l = strings.Join(parts, " ")
		}
		if len(l) > maxStmtBytes {
			l = l[:maxStmtBytes]
		}
		c := strings.TrimSpace(stripShellComment(l))
		if c == "" {
			continue
		}
		if m := heredocRe.FindStringSubmatch(c); m != nil {
			heredoc = m[1]
		}
		out = append(out, stmt{Line: start, Code: c, Bare: c})
	}
	return out
}

// stripShellComment cuts a line at a '#' that starts a word outside quotes.
func stripShellComment(l string) string {
	var q byte
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			} else if c == '\\' && q == '"' {
				i++
			}
		case c == '\\':
			i++
		case c == '\'' || c == '"':
			q = c
		case c == '#' && (i == 0 || l[i-1] == ' ' || l[i-1] == '\t' || l[i-1] == ';'):
			return l[:i]
		}
	}
	return l
}

// callArgs splits the argument list of the call whose '(' is at Bare[open]
// into raw argument texts taken from Code. Commas inside strings and nested
// brackets do not split.
func callArgs(s stmt, open int) []string {
	var args []string
	depth, from := 0, open+1
	for i := open; i < len(s.Bare); i++ {
		switch s.Bare[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				if a := strings.TrimSpace(s.Code[from:i]); a != "" {
					args = append(args, a)
				}
				return args
			}
		case ',':
			if depth == 1 {
				args = append(args, strings.TrimSpace(s.Code[from:i]))
				from = i + 1
			}
		}
	}
	if from < len(s.Code) {
		if a := strings.TrimSpace(s.Code[from:]); a != "" {
			args = append(args, a)
		}
	}
	return args
}

// kwarg splits "name=value" into its parts; ok is false for a positional
// argument (including comparisons such as a==b).
func kwarg(arg string) (name, value string, ok bool) {
	i := strings.IndexByte(arg, '=')
	if i <= 0 || (i+1 < len(arg) && arg[i+1] == '=') {
		return "", "", false
	}
	name = strings.TrimSpace(arg[:i])
	for _, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return "", "", false
		}
	}
	return name, strings.TrimSpace(arg[i+1:]), true
}

// pyLiteral returns the value of a plain (non f-) string literal, or of
// adjacent literals concatenated implicitly; ok is false for anything else.
func pyLiteral(raw string) (string, bool) {
	raw = strings.TrimSpace(raw)
	var sb strings.Builder
	found := false
	for raw != "" {
		p := 0
		for p < len(raw) && p < 2 && strings.IndexByte("rRbBuU", raw[p]) >= 0 {
			p++
		}
		if p >= len(raw) || (raw[p] != '"' && raw[p] != '\'') {
			return "", false
		}
		end, _ := scanPyString(raw, p)
		q := 1
		if end-p >= 6 && (strings.HasPrefix(raw[p:], `"""`) || strings.HasPrefix(raw[p:], `'''`)) {
			q = 3
		}
		if end-p < 2*q {
			return "", false
		}
		body := raw[p+q : end-q]
		if p == 0 {
			body = unescaper.Replace(body)
		}
		sb.WriteString(body)
		found = true
		raw = strings.TrimSpace(raw[end:])
	}
	return sb.String(), found
}

var unescaper = strings.NewReplacer(`\"`, `"`, `\'`, `'`, `\n`, " ", `\t`, " ", `\\`, `\`)

// literals returns every string literal's value in a statement, in order.
func literals(s stmt) []string {
	var out []string
	for i := 0; i < len(s.Code) && i < len(s.Bare); i++ {
		c := s.Code[i]
		if c != '"' && c != '\'' {
			continue
		}
		end, _ := scanPyString(s.Code, i)
		q := 1
		if end-i >= 6 && (strings.HasPrefix(s.Code[i:], `"""`) || strings.HasPrefix(s.Code[i:], `'''`)) {
			q = 3
		}
		if end-i >= 2*q {
			out = append(out, s.Code[i+q:end-q])
		}
		i = end - 1
	}
	return out
}

// clip shortens evidence to something a person reads at a glance.
func clip(s string, n int) string {
	if strings.Contains(s, "  ") || strings.ContainsAny(s, "\t\n\r") {
		s = strings.Join(strings.Fields(s), " ")
	}
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
