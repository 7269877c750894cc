package classify

import (
	"strconv"
	"strings"
)

// has reports whether s contains any of the substrings.
func has(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// lowerInto appends the ASCII-lowercased s to buf. Byte offsets are kept, so
// an index found in the lowercased text is valid in the original.
func lowerInto(buf []byte, s string) []byte {
	n := len(buf)
	buf = append(buf, s...)
	for i := n; i < len(buf); i++ {
		if c := buf[i]; 'A' <= c && c <= 'Z' {
			buf[i] = c + 'a' - 'A'
		}
	}
	return buf
}

func isQuote(c byte) bool { return c == '\'' || c == '"' || c == '`' }

// quotedAfter returns the first quoted token after the first occurrence of
// marker (matched in lc, read from text). Curly quotes count as quotes.
func quotedAfter(text, lc, marker string) string {
	i := strings.Index(lc, marker)
	if i < 0 {
		return ""
	}
	return firstQuoted(text[i+len(marker):])
}

// firstQuoted returns the content of the first quoted span in s.
func firstQuoted(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "‘", "'"), "’", "'")
	s = strings.ReplaceAll(strings.ReplaceAll(s, "“", "\""), "”", "\"")
	for i := 0; i < len(s); i++ {
		if !isQuote(s[i]) {
			continue
		}
		q := s[i]
		if j := strings.IndexByte(s[i+1:], q); j >= 0 {
			return s[i+1 : i+1+j]
		}
		return strings.TrimSpace(s[i+1:])
	}
	return ""
}

// restAfter returns the text after marker (found in lc), trimmed.
func restAfter(text, lc, marker string) string {
	i := strings.Index(lc, marker)
	if i < 0 {
		return ""
	}
	return strings.TrimSpace(text[i+len(marker):])
}

// unquote strips one layer of matching quotes and surrounding punctuation.
func unquote(s string) string {
	s = strings.TrimSpace(s)
	s = strings.Trim(s, "'\"`‘’“”")
	return strings.TrimRight(s, ".,;")
}

// clip shortens s to n bytes without splitting a UTF-8 sequence.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// sizeAfter finds marker and parses the size that follows it, such as
// "2.00 GiB", "20.00 MiB", "1.00GiB" or "4294967296 bytes". It returns the
// size as written and in bytes.
func sizeAfter(s, lc, marker string) (string, float64) {
	i := strings.Index(lc, marker)
	if i < 0 {
		return "", 0
	}
	return parseSize(s[i+len(marker):])
}

// sizeBefore parses the size that ends right before marker: "15.78 GiB total
// capacity", "1.20 GiB free".
func sizeBefore(s, lc, marker string) (string, float64) {
	i := strings.Index(lc, marker)
	if i <= 0 {
		return "", 0
	}
	j := i
	for j > 0 && s[j-1] == ' ' {
		j--
	}
	for j > 0 && isLetter(s[j-1]) {
		j--
	}
	for j > 0 && s[j-1] == ' ' {
		j--
	}
	for j > 0 && (isDigit(s[j-1]) || s[j-1] == '.') {
		j--
	}
	return parseSize(s[j:i])
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

var units = []struct {
	name string
	mult float64
}{
	{"tib", 1 << 40}, {"gib", 1 << 30}, {"mib", 1 << 20}, {"kib", 1 << 10},
	{"tb", 1e12}, {"gb", 1e9}, {"mb", 1e6}, {"kb", 1e3},
	{"t", 1 << 40}, {"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10},
	{"bytes", 1}, {"byte", 1}, {"b", 1},
}

func parseSize(s string) (string, float64) {
	s = strings.TrimLeft(s, " :=")
	i := 0
	for i < len(s) && (isDigit(s[i]) || s[i] == '.' || s[i] == ',') {
		i++
	}
	if i == 0 {
		return "", 0
	}
	num := strings.ReplaceAll(s[:i], ",", "")
	v, err := strconv.ParseFloat(strings.TrimRight(num, "."), 64)
	if err != nil {
		return "", 0
	}
	rest := strings.TrimLeft(s[i:], " ")
	low := strings.ToLower(rest[:min(len(rest), 5)])
	for _, u := range units {
		if strings.HasPrefix(low, u.name) {
			end := len(u.name)
			if end < len(low) && isLetter(low[end]) {
				continue // "gigantic", "bytes" vs "b"
			}
			written := strings.TrimSpace(s[:i+len(s[i:])-len(rest)+len(u.name)])
			return written, v * u.mult
		}
	}
	return num, v
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// human formats a byte count the way PyTorch does ("2.00 GiB").
func human(b float64) string {
	switch {
	case b >= 1<<40:
		return strconv.FormatFloat(b/(1<<40), 'f', 2, 64) + " TiB"
	case b >= 1<<30:
		return strconv.FormatFloat(b/(1<<30), 'f', 2, 64) + " GiB"
	case b >= 1<<20:
		return strconv.FormatFloat(b/(1<<20), 'f', 2, 64) + " MiB"
	case b >= 1<<10:
		return strconv.FormatFloat(b/(1<<10), 'f', 2, 64) + " KiB"
	}
	return strconv.FormatFloat(b, 'f', 0, 64) + " B"
}

// intAfter parses the integer (optionally negative) that follows marker.
func intAfter(lc, marker string) (int, bool) {
	i := strings.Index(lc, marker)
	if i < 0 {
		return 0, false
	}
	s := strings.TrimLeft(lc[i+len(marker):], " :=")
	j := 0
	if j < len(s) && s[j] == '-' {
		j++
	}
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	n, err := strconv.Atoi(s[:j])
	return n, err == nil
}

// segmentBefore returns the colon-separated field that ends right before
// marker: for "cat: data/x.txt: No such file or directory" and marker
// ": no such file" it returns "data/x.txt".
func segmentBefore(text, lc, marker string) string {
	i := strings.Index(lc, marker)
	if i <= 0 {
		return ""
	}
	head := text[:i]
	if j := strings.LastIndex(head, ": "); j >= 0 {
		head = head[j+2:]
	}
	return unquote(head)
}

// hasAny returns where the first of subs found in s starts, or -1.
func hasAny(s string, subs ...string) int {
	for _, w := range subs {
		if k := strings.Index(s, w); k >= 0 {
			return k
		}
	}
	return -1
}
