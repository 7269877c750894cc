package sdk

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The guest's one JSON decoder: reflection-free, for the payloads the host
// sends (PlanInput, ClassifyInput, ParseInput: jsondecode_wire.go, on the
// typed values of jsondecode_values.go) and for guest code that reads JSON
// of its own (DecodeJSONObject, jsondecode_object.go). It exists so
// that a guest module does not link encoding/json (and with it reflect and
// fmt), which made up about a third of each built-in module, and so about
// a third of the time to load it: wazero validates and decodes the whole
// module on every load, compilation cache hit or not.
//
// It behaves as json.Unmarshal does into a zero value, down to its quirks:
// strict JSON grammar, nesting at most 10000 deep, and on a syntax error
// nothing decoded; object keys match field names exactly or else under
// Unicode case folding (so "STEP" and "ſtep" set Step); unknown keys are
// skipped; null leaves a string, number, bool or struct alone and sets a
// slice, map or pointer to nil; a value of the wrong type (or a number that
// does not fit) is an error, but decoding goes on and the first such error
// is returned; a repeated key decodes again into the same field (pointers
// and maps are reused, slices reuse their elements); invalid UTF-8 and
// lone surrogates in strings become U+FFFD. The tests in json_test.go
// compare it with encoding/json on tables, generated values and fuzzed
// input.
//
// It reads in one pass, checking the grammar as it goes, and is quick
// where runbox_parse spends its time: a string is scanned eight bytes at a
// time, and one without escapes or invalid UTF-8 (nearly every output
// line, progress bars' block characters included) is returned as a
// substring of the input, not copied.

// jsonMaxDepth is encoding/json's limit on nesting.
const jsonMaxDepth = 10000

// jsonError is a syntax or type error of the codec.
type jsonError struct {
	msg string
}

func (e *jsonError) Error() string { return e.msg }

// jsonDec reads one JSON text. Methods that read a value start at its
// first byte (white space skipped) and report whether it was well formed;
// false ends decoding with a syntax error at d.i.
type jsonDec struct {
	s     string
	i     int
	depth int
	err   error  // first type error: decoding goes on, as in encoding/json
	arena []byte // unquoted strings, appended (never rewritten)
}

// decodeJSON decodes data with value (called at the first value) as
// json.Unmarshal would into a zero value; on a syntax error it calls reset,
// which sets the value back to zero.
func decodeJSON(data string, value func(*jsonDec) bool, reset func()) error {
	d := jsonDec{s: data}
	d.ws()
	ok := value(&d)
	if ok {
		d.ws()
		ok = d.i == len(d.s)
	}
	if !ok {
		reset()
		return d.syntaxError()
	}
	return d.err
}

// ---- syntax -------------------------------------------------------------------

func (d *jsonDec) syntaxError() error {
	if d.i >= len(d.s) {
		return &jsonError{"json: unexpected end of JSON input"}
	}
	if d.depth > jsonMaxDepth {
		return &jsonError{"json: exceeded max depth at offset " + strconv.Itoa(d.i)}
	}
	return &jsonError{"json: invalid character " + strconv.QuoteRune(rune(d.s[d.i])) + " at offset " + strconv.Itoa(d.i)}
}

func (d *jsonDec) ws() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek returns the byte at d.i, or 0 at the end.
func (d *jsonDec) peek() byte {
	if d.i < len(d.s) {
		return d.s[d.i]
	}
	return 0
}

// object reads the object at d.i ('{'), calling member with each key and d
// at its value; member reports whether the value was well formed.
func (d *jsonDec) object(member func(key string) bool) bool {
	if d.depth++; d.depth > jsonMaxDepth {
		return false
	}
	d.i++
	d.ws()
	if d.peek() == '}' {
		d.i++
		d.depth--
		return true
	}
	for {
		key, ok := d.str()
		if !ok {
			return false
		}
		if d.ws(); d.peek() != ':' {
			return false
		}
		d.i++
		d.ws()
		if !member(key) {
			return false
		}
		d.ws()
		switch d.peek() {
		case ',':
			d.i++
			d.ws()
		case '}':
			d.i++
			d.depth--
			return true
		default:
			return false
		}
	}
}

// array reads the array at d.i ('['), calling elem with d at each element.
func (d *jsonDec) array(elem func() bool) bool {
	if d.depth++; d.depth > jsonMaxDepth {
		return false
	}
	d.i++
	d.ws()
	if d.peek() == ']' {
		d.i++
		d.depth--
		return true
	}
	for {
		if !elem() {
			return false
		}
		d.ws()
		switch d.peek() {
		case ',':
			d.i++
			d.ws()
		case ']':
			d.i++
			d.depth--
			return true
		default:
			return false
		}
	}
}

// skip reads a value of any kind and drops it.
func (d *jsonDec) skip() bool {
	switch c := d.peek(); {
	case c == '{':
		return d.object(func(string) bool { return d.skip() })
	case c == '[':
		return d.array(d.skip)
	case c == '"':
		end, _, ok := scanString(d.s, d.i)
		d.i = end
		return ok
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		_, ok := d.number()
		return ok
	}
	return false
}

// literal consumes lit (true, false or null) at d.i; on false d.i is at the
// first wrong byte, as in encoding/json's errors.
func (d *jsonDec) literal(lit string) bool {
	if strings.HasPrefix(d.s[d.i:], lit) {
		d.i += len(lit)
		return true
	}
	for k := 0; d.i < len(d.s) && d.s[d.i] == lit[k]; k++ {
		d.i++
	}
	return false
}

// number reads the number literal at d.i (strict JSON grammar).
func (d *jsonDec) number() (string, bool) {
	s, i := d.s, d.i
	start := i
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = digits(s, i+1)
	default:
		d.i = i
		return "", false
	}
	if i < len(s) && s[i] == '.' {
		k := digits(s, i+1)
		if k == i+1 {
			d.i = k
			return "", false
		}
		i = k
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		k := digits(s, i)
		if k == i {
			d.i = k
			return "", false
		}
		i = k
	}
	d.i = i
	return s[start:i], true
}

// digits returns the index of the first byte from i on that is not a digit.
func digits(s string, i int) int {
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// ---- strings ------------------------------------------------------------------

// str reads the string at d.i and unquotes it. One without escapes or
// invalid UTF-8 is a substring of d.s; others are decoded into d.arena.
func (d *jsonDec) str() (string, bool) {
	start := d.i
	end, raw, ok := scanString(d.s, d.i)
	d.i = end
	if !ok {
		return "", false
	}
	body := d.s[start+1 : end-1]
	if raw {
		return body, true
	}
	return d.unquote(body), true
}

// scanString scans the string whose opening quote is at s[i]. end is the
// index after the closing quote, or where the string went wrong when !ok.
// raw reports a body that is its own value: no escapes, valid UTF-8.
func scanString(s string, i int) (end int, raw, ok bool) {
	if i >= len(s) || s[i] != '"' {
		return i, false, false
	}
	i++
	raw = true
	for {
		if i < len(s) {
			i += plainRun(s[i:], false)
		}
		if i >= len(s) {
			return i, false, false
		}
		switch c := s[i]; {
		case c == '"':
			return i + 1, raw, true
		case c == '\\':
			raw = false
			if i++; i >= len(s) {
				return i, false, false
			}
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				i++
				for k := 0; k < 4; k++ {
					if i >= len(s) || !isHex(s[i]) {
						return i, false, false
					}
					i++
				}
			default:
				return i, false, false
			}
		case c < 0x20:
			return i, false, false
		default: // >= 0x80: any byte goes, invalid UTF-8 becomes U+FFFD
			n := highRun(s[i:])
			raw = raw && utf8.ValidString(s[i:i+n])
			i += n
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// unquote decodes the body of a well-formed string with escapes or
// invalid UTF-8 into d.arena, one allocation for many strings. The strings
// share the arena's array, which is only ever appended to: a full arena is
// left to the strings in it and a new one started.
func (d *jsonDec) unquote(s string) string {
	if cap(d.arena)-len(d.arena) < 3*len(s) {
		d.arena = make([]byte, 0, max(3*len(s), len(d.s)-d.i, 512))
	}
	start := len(d.arena)
	b := d.arena
	for r := 0; r < len(s); {
		if n := plainRun(s[r:], false); n > 0 {
			b = append(b, s[r:r+n]...)
			r += n
			continue
		}
		switch c := s[r]; {
		case c == '\\':
			e := s[r+1]
			r += 2
			switch e {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := hex4(s[r:])
				r += 4
				if utf16.IsSurrogate(rr) {
					if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, hex4(s[r+2:])); dec != utf8.RuneError {
							b = utf8.AppendRune(b, dec)
							r += 6
							continue
						}
					}
					rr = utf8.RuneError
				}
				b = utf8.AppendRune(b, rr)
			default: // " \ /
				b = append(b, e)
			}
		default: // >= 0x80 (plainRun takes the rest of ASCII)
			if n := highRun(s[r:]); utf8.ValidString(s[r : r+n]) {
				b = append(b, s[r:r+n]...)
				r += n
				continue
			}
			rr, size := utf8.DecodeRuneInString(s[r:])
			b = utf8.AppendRune(b, rr) // U+FFFD for an invalid byte
			r += size
		}
	}
	d.arena = b
	if len(b) == start {
		return ""
	}
	return unsafe.String(&b[start], len(b)-start)
}

// hex4 reads four hex digits (checked by scanString).
func hex4(s string) rune {
	var r rune
	for _, c := range []byte(s[:4]) {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
