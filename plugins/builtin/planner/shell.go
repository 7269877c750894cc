package planner

import (
	"path"
	"regexp"
	"strings"
)

// segment is one simple command of a shell line.
type segment struct {
	words     []string
	pipeline  int  // segments joined by '|' share a pipeline number
	pipedInto bool // stdin comes from the previous segment
}

var heredocRe = regexp.MustCompile(`<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)

// shellSegments splits a shell line into simple commands, with quotes
// removed. It is a tokenizer, not a shell: good enough to see which
// programs run with which arguments.
func shellSegments(line string) []segment {
	var segs []segment
	var words []string
	var w strings.Builder
	inWord, pipeline, piped := false, 0, false
	endWord := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	endSeg := func(nextPiped bool) {
		endWord()
		if len(words) > 0 {
			segs = append(segs, segment{words: words, pipeline: pipeline, pipedInto: piped})
		}
		words = nil
		if !nextPiped {
			pipeline++
		}
		piped = nextPiped
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			w.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			inWord = true
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) {
					i++
				}
				w.WriteByte(line[i])
			}
		case c == '\\' && i+1 < len(line):
			i++
			w.WriteByte(line[i])
			inWord = true
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			j := matchParen(line, i+1)
			w.WriteString(line[i:j])
			inWord = true
			i = j - 1
		case c == ' ' || c == '\t' || c == '\n':
			endWord()
		case c == '|':
			if i+1 < len(line) && line[i+1] == '|' {
				i++
				endSeg(false)
			} else {
				endSeg(true)
			}
		case c == '&' && (i > 0 && line[i-1] == '>' || i+1 < len(line) && line[i+1] == '>'):
			w.WriteByte(c)
			inWord = true
		case c == ';' || c == '&' || c == '(' || c == ')' || c == '`':
			if c == '&' && i+1 < len(line) && line[i+1] == '&' {
				i++
			}
			endSeg(false)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	endSeg(false)
	return segs
}

// matchParen returns the offset just past the ')' matching line[open].
func matchParen(line string, open int) int {
	depth := 0
	for i := open; i < len(line); i++ {
		switch line[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(line)
}

var assignRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// unwrap strips the words that only change how the real command runs
// (assignments, env, nohup, time, timeout, sudo...) and reports sudo.
func unwrap(words []string) (rest []string, sudo string) {
	for len(words) > 0 {
		w := words[0]
		base := path.Base(w)
		switch {
		case assignRe.MatchString(w):
			words = words[1:]
		case base == "sudo" || base == "doas":
			sudo = base
			words = skipFlags(words[1:], "u", "g", "C", "h", "p", "U", "r", "t")
		case base == "env" || base == "xargs":
			words = skipFlags(words[1:], "u", "S", "C", "n", "I", "P", "L", "d", "s", "a", "E")
		case base == "nohup" || base == "time" || base == "exec" || base == "command" ||
			base == "builtin" || base == "caffeinate" || base == "unbuffer" || base == "stdbuf":
			words = skipFlags(words[1:])
		case base == "nice" || base == "ionice":
			words = skipFlags(words[1:], "n", "c")
		case base == "timeout":
			words = skipFlags(words[1:], "s", "k")
			if len(words) > 0 {
				words = words[1:] // the duration
			}
		default:
			return words, sudo
		}
	}
	return words, sudo
}

// skipFlags drops leading flags; the short flags named in withValue take
// the next word as their value.
func skipFlags(words []string, withValue ...string) []string {
	for len(words) > 0 && strings.HasPrefix(words[0], "-") {
		f := strings.TrimLeft(words[0], "-")
		words = words[1:]
		for _, v := range withValue {
			if f == v && len(words) > 0 {
				words = words[1:]
				break
			}
		}
	}
	return words
}

// shellJoin renders argv for evidence, quoting words that need it.
func shellJoin(argv []string) string {
	parts := make([]string, len(argv))
	for i, w := range argv {
		if w == "" || strings.ContainsAny(w, " \t\"'$|&;<>()*") {
			w = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		parts[i] = w
	}
	return strings.Join(parts, " ")
}

// hasShellOperator reports whether argv looks like a shell line that was
// split on spaces (an agent passing "curl x | sh" as words).
func hasShellOperator(argv []string) bool {
	for _, w := range argv {
		switch w {
		case "|", "||", "&&", ";", "&", ">", ">>":
			return true
		}
	}
	return false
}

// redirectTargets returns the files a segment's output redirections write.
func redirectTargets(words []string) []string {
	var out []string
	for i, w := range words {
		j := strings.IndexByte(w, '>')
		if j < 0 || strings.Trim(w[:j], "0123456789&") != "" {
			continue
		}
		t := strings.TrimLeft(w[j:], ">|")
		if strings.HasPrefix(t, "&") {
			continue // 2>&1
		}
		if t == "" && i+1 < len(words) {
			t = words[i+1]
		}
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}
