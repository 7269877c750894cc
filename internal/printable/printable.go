// Package printable makes what runs supply (their commands, names,
// reasons, log lines a plugin quotes) safe to show on a terminal: a
// command as one line a shell reads back as the same arguments, and any
// text with its control characters shown as escapes rather than obeyed.
// A run is untrusted: an escape sequence in its command or output must
// not retitle, clear or rewrite the terminal of whoever runs
// `runbox status`, and a newline must not break a table's rows.
// (`runbox logs` and an attached run's output are the run's own bytes,
// as cat and docker logs give them; this package is for runbox's views.)
package printable

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hidden says whether r is a rune a terminal may act on or that hides
// what text says, and so is shown as an escape:
// C0 and C1 controls but tab and newline, DEL, the line and paragraph
// separators, and format characters (bidirectional overrides, zero-width
// characters), which can make text read other than it is.
func Hidden(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0, r == '\u2028', r == '\u2029':
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// shownEscaped says whether the rune r, n bytes long, is written as an
// escape: a hidden rune, or a byte that is not UTF-8.
func shownEscaped(r rune, n int) bool { return r == utf8.RuneError && n <= 1 || Hidden(r) }

// escape writes r (a hidden rune, or a byte b of invalid UTF-8 when r is
// utf8.RuneError) as bash's $'…' and Go both read it.
func escape(sb *strings.Builder, r rune, b byte) {
	switch {
	case r == utf8.RuneError:
		fmt.Fprintf(sb, `\x%02x`, b)
	case r == '\n':
		sb.WriteString(`\n`)
	case r == '\t':
		sb.WriteString(`\t`)
	case r == '\r':
		sb.WriteString(`\r`)
	case r < 0x80:
		fmt.Fprintf(sb, `\x%02x`, r)
	case r <= 0xffff:
		fmt.Fprintf(sb, `\u%04x`, r)
	default:
		fmt.Fprintf(sb, `\U%08x`, r)
	}
}

// String is s with every hidden rune, and every byte that is not UTF-8,
// written as an escape (\x1b, \u202e); s itself when there is none.
func String(s string) string {
	if clean(s, false) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if shownEscaped(r, n) {
			escape(&sb, r, s[i])
		} else {
			sb.WriteString(s[i : i+n])
		}
		i += n
	}
	return sb.String()
}

// clean says whether s has nothing to escape (with lines, no tab or
// newline either).
func clean(s string, lines bool) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if shownEscaped(r, n) || lines && (r == '\n' || r == '\t') {
			return false
		}
		i += n
	}
	return true
}

// Command is args as one line that a POSIX shell (bash, for $'…') reads
// back as the same arguments, in any locale: plain words as they are,
// others in single quotes, and one with a tab, a newline, a hidden rune or
// a byte that is not UTF-8 in $'…' with those escaped (a hidden rune past
// ASCII as its UTF-8 bytes, \xe2\x80\xae).
func Command(args []string) string {
	var sb strings.Builder
	for i, a := range args {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(quote(a, i == 0))
	}
	return sb.String()
}

// Run is a run's command as Command writes it; a shell run's (--shell:
// its words joined and given to sh -c) as the sh -c that runs it.
func Run(command []string, shell bool) string {
	if shell {
		return Command([]string{"sh", "-c", strings.Join(command, " ")})
	}
	return Command(command)
}

func quote(s string, first bool) string {
	switch {
	case s == "":
		return "''"
	case plain(s, first):
		return s
	case clean(s, true):
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var sb strings.Builder
	sb.WriteString("$'")
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r >= utf8.RuneSelf && shownEscaped(r, n):
			// Its bytes, not \uXXXX: bash turns \u into the character
			// only in a UTF-8 locale, and leaves it as written in C.
			for _, b := range []byte(s[i : i+n]) {
				fmt.Fprintf(&sb, `\x%02x`, b)
			}
		case shownEscaped(r, n) || r == '\n' || r == '\t':
			escape(&sb, r, s[i])
		case r == '\'' || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		default:
			sb.WriteString(s[i : i+n])
		}
		i += n
	}
	sb.WriteByte('\'')
	return sb.String()
}

// plain says whether a shell reads s as itself unquoted: letters, digits
// and -_./:,+%@ (and = after the first word, where it would otherwise be
// an assignment).
func plain(s string, first bool) bool {
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
		case strings.ContainsRune("-_./:,+%@", r):
		case r == '=' && !first:
		case r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
		default:
			return false
		}
	}
	return true
}

// Writer passes what is written to w with its hidden runes escaped, as
// String does (tab and newline pass: they are the layout). A rune split
// between two writes is held until the next one completes it.
func Writer(w io.Writer) io.Writer { return &writer{w: w} }

type writer struct {
	w    io.Writer
	held []byte // the start of a rune cut off at the end of a write
}

func (w *writer) Write(p []byte) (int, error) {
	b := p
	if len(w.held) > 0 {
		b = append(w.held, p...)
		w.held = nil
	}
	end := len(b)
	// Hold a rune cut off at the end (its first bytes, up to 3).
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < utf8.RuneSelf {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-k:]) {
				end = len(b) - k
				w.held = append([]byte(nil), b[end:]...)
			}
			break
		}
	}
	if _, err := io.WriteString(w.w, String(string(b[:end]))); err != nil {
		return 0, err
	}
	return len(p), nil
}
