package progress

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unsafe"

	"github.com/runbox/runbox/sdk"
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
// number does not fit comfortably in an int64 (16 digits or more; j is
// then i+15). Eight digits per step (see value8), with no branch.
func parseUint(s string, i int) (v int64, j int, ok bool) {
	var buf [16]byte
	if len(s) < 8 {
		s = pad16(&buf, s)
	}
	x := ld8(s, i)
	n := digits8(x)
	y := ld8(s, i+8)
	m := digits8(y) * int(eq(uint64(n), 8)) // digits after eight
	v = int64(value8(x, n)*pow10u[m&15] + value8(y, m))
	if m == 8 {
		return 0, i + 15, false
	}
	return v, i + n + m, n > 0
}

// pad16 returns s (at most 16 bytes of it) at the start of buf, as a
// string of 16 bytes: the eight-byte readers need eight bytes, and read a
// zero byte past the end of s anyway. The string must not outlive buf.
func pad16(buf *[16]byte, s string) string {
	copy(buf[:], s)
	return unsafe.String(&buf[0], len(buf))
}

// digits8 returns how many of the eight bytes of x (from the lowest) are
// ASCII digits before the first that is not.
func digits8(x uint64) int {
	return bits.TrailingZeros64(nonDigits(x)) / 8 // 64 / 8 for eight digits
}

// value8 returns the value of the first n (0..8) bytes of x, ASCII
// digits, the first the most significant: the bytes after them are
// shifted out, and the digits combined in pairs, fours and eights with
// three multiplications (no loop: under wazero with close-on-context-done
// each digit of a loop would cost a trip to the host).
func value8(x uint64, n int) uint64 {
	x = (x - 0x3030303030303030) << (64 - 8*uint(n))
	x = x*10 + x>>8
	return ((x&0x000000FF000000FF)*(100+1000000<<32) + (x>>16&0x000000FF000000FF)*(1+10000<<32)) >> 32
}

var pow10u = [16]uint64{1, 10, 100, 1000, 1e4, 1e5, 1e6, 1e7, 1e8}

// numEnd returns the end of a float literal at s[i:] ([+-]digits[.digits]
// [e[+-]digits], or [+-]nan, inf or infinity in any case), or i when there
// is none. A word is not a number: "nan" or "inf" followed by a letter,
// digit or '_' ("nano", "info", "infinite") is none.
func numEnd(s string, i int) int {
	j := i
	if j < len(s) && (s[j] == '-' || s[j] == '+') {
		j++
	}
	if j+3 <= len(s) {
		// ASCII case folding: only ASCII bytes fold to these letters.
		a, b, c := s[j]|0x20, s[j+1]|0x20, s[j+2]|0x20
		if a == 'n' && b == 'a' && c == 'n' || a == 'i' && b == 'n' && c == 'f' {
			e := j + 3
			if a == 'i' && e+5 <= len(s) && strings.EqualFold(s[e:e+5], "inity") {
				e += 5
			}
			if e < len(s) && isWordByte(s[e]) {
				return i
			}
			return e
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
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
	1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseNum reads a float at s[i:] (see numEnd): numbers with at most
// seven digits on each side of the point, the ones logs print, are read
// by numFast with no branch and converted exactly as strconv.ParseFloat
// would (an exact integer times or divided by an exact power of ten
// rounds once); the rest go through numEnd and strconv.
func parseNum(s string, i int) (v float64, j int, ok bool) {
	var buf [16]byte
	if len(s) < 8 {
		s = pad16(&buf, s)
	}
	m, frac, minus, j, st := numFast(s, i)
	switch st {
	case numOK:
		return withSign(float64(m)/pow10[frac&15], minus), j, true
	case numNone:
		return 0, i, false
	case numExp:
		if v, end, ok := numExponent(s, m, frac, j); ok {
			return withSign(v, minus), end, true
		}
	}
	return parseNumSlow(s, i)
}

// numFast's answers.
const (
	numOK   = iota // the number is m / 10**frac, negated if minus, and ends at e
	numNone        // no number at s[i:]
	numSlow        // a case for strconv: long, nan, inf
	numExp         // the mantissa is m / 10**frac and an exponent follows at e
)

// numFast reads "[+-]digits[.digits]" (at most seven digits each side)
// at s[i:] with no branch (len(s) >= 8).
func numFast(s string, i int) (m uint64, frac int, minus uint64, e int, st int) {
	c := ld8(s, i) & 0xff
	minus = eq(c, '-')
	j := i + int(minus|eq(c, '+'))
	x := ld8(s, j)
	n := digits8(x)
	m = value8(x, n)
	e = j + n
	dot := eq(ld8(s, e)&0xff, '.')
	y := ld8(s, e+1)
	k := digits8(y)
	take := dot & (nz(k) | nz(n)) // "5." and ".5" are numbers, "." is not
	frac = k * int(take)
	m = m*pow10u[frac&15] + value8(y, frac)
	e += int(take) * (1 + k)
	empty := eq(uint64(n+frac), 0)
	b := x&0xff | 0x20
	slow := eq(uint64(n), 8) | take&eq(uint64(k), 8) | empty&(eq(b, 'n')|eq(b, 'i'))
	// An exponent: 'e' or 'E', an optional sign, a digit.
	t := ld8(s, e)
	sg := eq(t>>8&0xff, '-') | eq(t>>8&0xff, '+')
	exp := eq(t&0xff|0x20, 'e') & isDigit8(t>>(8+8*sg)&0xff) &^ empty
	st = int(slow*numSlow + (1-slow)*(empty*numNone+(1-empty)*exp*numExp))
	return m, frac, minus, e, st
}

// numExponent reads the exponent at s[e:] of the mantissa m / 10**frac,
// in strconv's exact case: the power of ten exact in a float64.
func numExponent(s string, m uint64, frac, e int) (float64, int, bool) {
	k := e + 1
	eneg := s[k] == '-'
	if eneg || s[k] == '+' {
		k++
	}
	x, end, ok := parseUint(s, k)
	if !ok || x > 22 {
		return 0, 0, false
	}
	p := int(x)
	if eneg {
		p = -p
	}
	if p -= frac; p < -22 || p > 22 {
		return 0, 0, false
	}
	if p >= 0 {
		return float64(m) * pow10[p], end, true
	}
	return float64(m) / pow10[-p], end, true
}

// withSign returns v negated when minus is 1.
func withSign(v float64, minus uint64) float64 {
	return math.Float64frombits(math.Float64bits(v) ^ minus<<63)
}

// eq returns 1 when a == b (a^b < 1<<63), else 0.
func eq(a, b uint64) uint64 { return (a ^ b - 1) >> 63 }

// nz returns 1 when n != 0 (n >= 0), else 0.
func nz(n int) uint64 { return uint64(n|-n) >> 63 }

// inRange returns 1 when lo <= c < hi, else 0.
func inRange(c byte, lo, hi uint64) uint64 {
	d := uint64(c) - lo
	return (d - (hi - lo)) >> 63 &^ (d >> 63)
}

// isDigit8 returns 1 when the byte c is an ASCII digit, else 0.
func isDigit8(c uint64) uint64 { return (c - '0' - 10) >> 63 &^ ((c - '0') >> 63) }

// parseNumSlow is parseNum for any float literal numEnd accepts. NaN and
// ±Inf are read here, not by strconv: it refuses a signed "-nan" (what C's
// printf writes for a negative NaN), and a NaN's sign means nothing.
func parseNumSlow(s string, i int) (v float64, j int, ok bool) {
	j = numEnd(s, i)
	if j == i {
		return 0, i, false
	}
	switch s[j-1] | 0x20 { // a number's last byte is a digit or '.'
	case 'n':
		return math.NaN(), j, true
	case 'f', 'y':
		if s[i] == '-' {
			return math.Inf(-1), j, true
		}
		return math.Inf(1), j, true
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

// finite reports whether v is a number runbox computes with: a count, a
// percentage, a time, a rate. Metric values need not be (a loss of NaN is
// news; sdk.Metrics carries it).
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
	if k := index(s, "day"); k > 0 {
		d, _, ok := parseUint(strings.TrimSpace(s[:k]), 0)
		if !ok {
			return 0, false
		}
		days = float64(d)
		s = strings.TrimLeft(s[k+3:], "s, ")
	}
	if indexByte(s, ':') >= 0 {
		total := 0.0
		parts := 0
		for s != "" {
			part := s
			if k := indexByte(s, ':'); k >= 0 {
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
	i := slash - digitsBefore(s, slash)
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

// addMetric records a metric (NaN and ±Inf included), creating the map
// on first use.
func addMetric(m *sdk.Metrics, k string, v float64) {
	if k == "" {
		return
	}
	if *m == nil {
		*m = make(sdk.Metrics, 4)
	}
	(*m)[k] = v
}

// scanKV finds "key=value" and "key: value" pairs in s whose value is a
// plain number, and calls fn for each. Keys are identifiers that may also
// contain '/', '.', '-' inside (train/loss, val-acc). Values followed by
// ':' or '/' (clock times, fractions) or by letters (1234M) are skipped.
// Separators are found eight bytes at a time, keys read back eight bytes
// at a time.
func scanKV(s string, fn func(k string, v float64)) {
	for i := 0; i < len(s); i++ {
		k := indexKV(s[i:])
		if k < 0 {
			return
		}
		i += k
		c := s[i]
		// key: back over identifier bytes.
		e := i
		for e > 0 && s[e-1] == ' ' && c == '=' {
			e--
		}
		b := keyStart(s, e)
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
			if d == ':' || d == '/' || isLetter(d) && !gluedWord(s, j, k) || isDigit(d) || d == '.' && k+1 < len(s) && isDigit(s[k+1]) {
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

// gluedWord reports a capitalised word printed right after the decimal
// s[j:k] ("accuracy: 0.1384Batch 7: Invalid loss", a callback's message
// glued to a bar): the value ends at the word. A unit ("1.5GB", "3.2ms",
// "4.0Mb") is not one.
func gluedWord(s string, j, k int) bool {
	return k+2 < len(s) && s[k] >= 'A' && s[k] <= 'Z' && s[k+1] >= 'a' && s[k+1] <= 'z' &&
		s[k+2] >= 'a' && s[k+2] <= 'z' && strings.IndexByte(s[j:k], '.') >= 0
}

// indexKV returns the index of the first '=' or ':' in s, or -1.
func indexKV(s string) int {
	const lsb, msb = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := word(s, i)
		y, z := x^lsb*'=', x^lsb*':'
		if t := ((y-lsb)&^y | (z-lsb)&^z) & msb; t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
	}
	for ; i < len(s); i++ {
		if s[i] == '=' || s[i] == ':' {
			return i
		}
	}
	return -1
}

// keyByte marks the bytes of a metric key: identifier bytes and / . - @.
var keyByte = func() (t [256]uint8) {
	for c := range 256 {
		if isWordByte(byte(c)) || strings.IndexByte("/.-@", byte(c)) >= 0 {
			t[c] = 1
		}
	}
	return t
}()

// keyStart returns where the run of key bytes that ends at s[e] starts,
// eight bytes per step.
func keyStart(s string, e int) int {
	for {
		x := wordBefore(s, e) // zero bytes before s: not key bytes
		m := uint(keyByte[byte(x)]) | uint(keyByte[byte(x>>8)])<<1 | uint(keyByte[byte(x>>16)])<<2 |
			uint(keyByte[byte(x>>24)])<<3 | uint(keyByte[byte(x>>32)])<<4 | uint(keyByte[byte(x>>40)])<<5 |
			uint(keyByte[byte(x>>48)])<<6 | uint(keyByte[byte(x>>56)])<<7
		if m != 0xff {
			return e - bits.LeadingZeros8(^uint8(m))
		}
		e -= 8
	}
}

// digitsBefore returns how many ASCII digits end at s[e] (counted up to
// sixteen), eight bytes per step.
func digitsBefore(s string, e int) int {
	n := bits.LeadingZeros64(nonDigitsExact(wordBefore(s, e))) / 8
	if n == 8 {
		n += bits.LeadingZeros64(nonDigitsExact(wordBefore(s, e-8))) / 8
	}
	return n
}

// wordBefore returns the eight bytes of s that end at e (e <= len(s)) as
// a little-endian word, zero bytes before the start of s.
func wordBefore(s string, e int) uint64 {
	switch {
	case e >= 8:
		return word(s, e-8)
	case e <= 0:
		return 0
	case len(s) >= 8:
		return word(s, 0) << (8 * uint(8-e))
	}
	var buf [16]byte
	copy(buf[8:], s)
	return word(unsafe.String(&buf[0], len(buf)), e)
}

// structuralKey reports keys that are not metrics but progress fields or
// bookkeeping (Lightning's v_num, counters).
func structuralKey(k string) bool {
	if len(k) < 2 || len(k) > 16 {
		return false
	}
	var buf [16]byte
	p := pad16(&buf, k)
	lo, hi := ld8(p, 0), ld8(p, 8)
	if (lo|hi)&0x8080808080808080 != 0 {
		return structuralKeySlow(k) // Unicode case folding
	}
	lo, hi = lowerASCII(lo), lowerASCII(hi)
	w := &structuralKeys.slot[structuralHash(lo, hi, structuralKeys.mul)]
	return isZero((lo^w.lo)|(hi^w.hi)|uint64(len(k)^w.n)) != 0
}

// structuralKeys is structuralKeySlow's words in a perfect hash table on
// their bytes (two little-endian words, zero bytes after the word).
var structuralKeys = func() (t struct {
	mul  uint64
	slot [32]struct {
		lo, hi uint64
		n      int // 0 in an empty slot: never a key's length
	}
}) {
	words := []string{"eta", "epoch", "epochs", "step", "steps", "iter", "iteration", "it", "v_num", "batch", "global_step", "progress"}
	for seed := uint64(1); ; seed++ {
		mul := (seed*0x9E3779B97F4A7C15 ^ seed>>7) * 0xBF58476D1CE4E5B9 // splitmix-like
		mul ^= mul >> 27
		var used uint32
		ok := true
		for _, w := range words {
			var buf [16]byte
			p := pad16(&buf, w)
			h := structuralHash(ld8(p, 0), ld8(p, 8), mul)
			if used&(1<<h) != 0 {
				ok = false
				break
			}
			used |= 1 << h
			t.slot[h].lo, t.slot[h].hi, t.slot[h].n = ld8(p, 0), ld8(p, 8), len(w)
		}
		if ok {
			t.mul = mul
			return t
		}
		t.slot = [32]struct {
			lo, hi uint64
			n      int
		}{}
	}
}()

func structuralHash(lo, hi, mul uint64) uint64 {
	x := lo ^ hi*0x9E3779B97F4A7C15
	x ^= x >> 31
	return x * mul >> 59
}

func structuralKeySlow(k string) bool {
	switch strings.ToLower(k) {
	case "eta", "epoch", "epochs", "step", "steps", "iter", "iteration", "it", "v_num", "batch", "global_step", "progress":
		return true
	}
	return false
}

// lowerASCII maps the bytes 'A'-'Z' of x (no byte >= 0x80) to lower case.
func lowerASCII(x uint64) uint64 {
	const c41, c5b = 0x3F3F3F3F3F3F3F3F, 0x2525252525252525 // + 0x3F: >= 'A'; + 0x25: > 'Z'
	upper := (x + c41) &^ (x + c5b) & 0x8080808080808080
	return x | upper>>2
}

// isZero returns 1 when x is zero, else 0.
func isZero(x uint64) uint64 { return (x|-x)>>63 ^ 1 }
