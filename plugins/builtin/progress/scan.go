package progress

import (
	"math"
	"strconv"
	"strings"
)

// Small allocation-free scanners shared by the format parsers.

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// isWordByte reports whether c can be part of an identifier.
func isWordByte(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' }

func skipSpaces(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// parseUint reads decimal digits at s[i:]; it returns the value and the
// index after the last digit. ok is false when there is no digit or the
// number does not fit comfortably in an int64.
func parseUint(s string, i int) (v int64, j int, ok bool) {
	j = i
	for j < len(s) && isDigit(s[j]) {
		if j-i >= 15 {
			return 0, j, false
		}
		v = v*10 + int64(s[j]-'0')
		j++
	}
	return v, j, j > i
}

// numEnd returns the end of a float literal at s[i:] ([+-]digits[.digits]
// [e[+-]digits], or nan/inf), or i when there is none.
func numEnd(s string, i int) int {
	j := i
	if j < len(s) && (s[j] == '-' || s[j] == '+') {
		j++
	}
	if j+3 <= len(s) {
		// ASCII case folding: only ASCII bytes fold to these letters.
		a, b, c := s[j]|0x20, s[j+1]|0x20, s[j+2]|0x20
		if a == 'n' && b == 'a' && c == 'n' || a == 'i' && b == 'n' && c == 'f' {
			return j + 3
		}
	}
	d := j
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j < len(s) && s[j] == '.' {
		k := j + 1
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k > j+1 || j > d {
			j = k
		}
	}
	if j == d || (j == d+1 && s[d] == '.') {
		return i
	}
	if j+1 < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if s[k] == '-' || s[k] == '+' {
			k++
		}
		e := k
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k > e {
			j = k
		}
	}
	return j
}

// pow10 holds the exactly representable powers of ten.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// parseNum reads a float at s[i:].
func parseNum(s string, i int) (v float64, j int, ok bool) {
	j = numEnd(s, i)
	if j == i {
		return 0, i, false
	}
	if f, ok := fastFloat(s[i:j]); ok {
		return f, j, true
	}
	f, err := strconv.ParseFloat(s[i:j], 64)
	if err != nil {
		return 0, i, false
	}
	return f, j, true
}

// fastFloat converts "[+-]digits[.digits]" with at most 15 digits in all,
// exactly as strconv.ParseFloat does (an exact integer divided by an
// exact power of ten rounds once), without its general machinery.
func fastFloat(t string) (float64, bool) {
	neg := false
	i := 0
	if i < len(t) && (t[i] == '-' || t[i] == '+') {
		neg = t[i] == '-'
		i++
	}
	var m int64
	digits, frac, dot := 0, 0, false
	for ; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= '0' && c <= '9':
			m = m*10 + int64(c-'0')
			digits++
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
	}
	if digits == 0 || digits > 15 {
		return 0, false
	}
	f := float64(m) / pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}

// finite reports whether v can go into JSON.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// parseClock parses "12", "01:02", "1:02:03", "1 day, 2:03:04" and
// duration forms "12s", "1.5s", "250ms", "3m", "2h", "1h2m3s", "1d2h".
// It returns seconds.
func parseClock(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" || s == "?" {
		return 0, false
	}
	days := 0.0
	if k := strings.Index(s, "day"); k > 0 {
		d, _, ok := parseUint(strings.TrimSpace(s[:k]), 0)
		if !ok {
			return 0, false
		}
		days = float64(d)
		s = strings.TrimLeft(s[k+3:], "s, ")
	}
	if strings.IndexByte(s, ':') >= 0 {
		total := 0.0
		parts := 0
		for s != "" {
			part := s
			if k := strings.IndexByte(s, ':'); k >= 0 {
				part, s = s[:k], s[k+1:]
			} else {
				s = ""
			}
			v, j, ok := parseNum(part, 0)
			if !ok || j != len(part) || v < 0 {
				return 0, false
			}
			total = total*60 + v
			parts++
		}
		if parts > 3 {
			return 0, false
		}
		return days*86400 + total, true
	}
	total := 0.0
	i := 0
	for i < len(s) {
		v, j, ok := parseNum(s, i)
		if !ok || v < 0 {
			return 0, false
		}
		k := j
		for k < len(s) && isLetter(s[k]) {
			k++
		}
		switch s[j:k] {
		case "", "s", "sec", "secs":
			total += v
		case "ms":
			total += v / 1000
		case "us", "µs":
			total += v / 1e6
		case "m", "min", "mins":
			total += v * 60
		case "h", "hr", "hrs":
			total += v * 3600
		case "d":
			total += v * 86400
		default:
			return 0, false
		}
		i = skipSpaces(s, k)
	}
	return days*86400 + total, true
}

// fraction parses "N/M" whose slash is at s[slash]. It refuses things that
// only look like progress: dates (2024/01/02, 11/22 10:00), versions
// (1.2.3/4), paths (a/1/2), and N > M.
func fraction(s string, slash int) (n, m int64, ok bool) {
	if slash <= 0 || slash+1 >= len(s) || s[slash] != '/' {
		return 0, 0, false
	}
	i := slash
	for i > 0 && isDigit(s[i-1]) {
		i--
	}
	if i == slash || slash-i > 12 {
		return 0, 0, false
	}
	if i > 0 {
		c := s[i-1]
		if isLetter(c) || c == '.' || c == '/' || c == ':' || c == '-' || c == '_' || c == ',' {
			return 0, 0, false
		}
	}
	n, _, _ = parseUint(s, i)
	m, j, ok := parseUint(s, slash+1)
	if !ok || m <= 0 || n > m {
		return 0, 0, false
	}
	if j < len(s) {
		c := s[j]
		if c == '/' || c == '.' && j+1 < len(s) && isDigit(s[j+1]) || c == ':' || c == '-' || c == '_' {
			return 0, 0, false
		}
		// "11/22 10:00:00": a date followed by a time.
		if c == ' ' && j+3 < len(s) && isDigit(s[j+1]) && isDigit(s[j+2]) && s[j+3] == ':' {
			return 0, 0, false
		}
	}
	return n, m, true
}

// pct returns step/total as a percentage in [0,100].
func pct(step, total int64) float64 {
	if total <= 0 || step <= 0 {
		return 0
	}
	p := float64(step) * 100 / float64(total)
	if p > 100 {
		p = 100
	}
	return p
}

// indexFold finds the ASCII-lowercase word w in s, ignoring case.
func indexFold(s, w string) int {
	if len(w) == 0 || len(s) < len(w) {
		return -1
	}
	c0 := w[0]
	for i := 0; i+len(w) <= len(s); i++ {
		if i&7 == 0 && i+8 <= len(s) && noFold(s[i:i+8], c0) {
			i += 7
			continue
		}
		if s[i]|0x20 != c0 {
			continue
		}
		k := 1
		for k < len(w) && s[i+k]|0x20 == w[k] {
			k++
		}
		if k == len(w) {
			return i
		}
	}
	return -1
}

// addMetric records a finite metric, creating the map on first use.
func addMetric(m *map[string]float64, k string, v float64) {
	if !finite(v) || k == "" {
		return
	}
	if *m == nil {
		*m = make(map[string]float64, 4)
	}
	(*m)[k] = v
}

// scanKV finds "key=value" and "key: value" pairs in s whose value is a
// plain number, and calls fn for each. Keys are identifiers that may also
// contain '/', '.', '-' inside (train/loss, val-acc). Values followed by
// ':' or '/' (clock times, fractions) or by letters (1234M) are skipped.
func scanKV(s string, fn func(k string, v float64)) {
	for i := 0; i < len(s); i++ {
		if i&7 == 0 && i+8 <= len(s) && noKV(s[i:i+8]) {
			i += 7
			continue
		}
		c := s[i]
		if c != '=' && c != ':' {
			continue
		}
		// key: back over identifier bytes.
		e := i
		for e > 0 && s[e-1] == ' ' && c == '=' {
			e--
		}
		b := e
		for b > 0 && (isWordByte(s[b-1]) || s[b-1] == '/' || s[b-1] == '.' || s[b-1] == '-' || s[b-1] == '@') {
			b--
		}
		if b == e || !isLetter(s[b]) && s[b] != '_' {
			continue
		}
		j := skipSpaces(s, i+1)
		v, k, ok := parseNum(s, j)
		if !ok {
			continue
		}
		if k < len(s) {
			d := s[k]
			if d == ':' || d == '/' || isLetter(d) || isDigit(d) || d == '.' && k+1 < len(s) && isDigit(s[k+1]) {
				continue
			}
			if d == '%' {
				k++
			}
		}
		fn(s[b:e], v)
		i = k - 1
	}
}

// structuralKey reports keys that are not metrics but progress fields or
// bookkeeping (Lightning's v_num, counters).
func structuralKey(k string) bool {
	switch strings.ToLower(k) {
	case "eta", "epoch", "epochs", "step", "steps", "iter", "iteration", "it", "v_num", "batch", "global_step", "progress":
		return true
	}
	return false
}
