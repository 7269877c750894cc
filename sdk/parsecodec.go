package sdk

import (
	"errors"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// A hand-written JSON codec for the progress kind's payloads, the only ones
// that cross the ABI per batch of lines. The wire format is unchanged: the
// encoders write exactly what encoding/json writes for these types (byte for
// byte, HTML-safe escaping included), and DecodeJSON yields exactly what
// json.Unmarshal yields, falling back to the general decoder of
// jsondecode.go (itself equal to json.Unmarshal) for anything outside the
// shape encoding/json produces (unknown or duplicate keys, nulls inside
// "last", invalid JSON). Why: in a guest run under wazero with
// WithCloseOnContextDone, every loop iteration, every taken jump and every
// non-inlined call leaves the compiled code to check for a timeout, so
// encoding/json's reflection and byte-at-a-time scanner dominated a parse
// call. This codec scans strings eight bytes at a time, returns strings
// without escapes as substrings of the input (their UTF-8 checked run by
// run), and makes few calls.

// AppendJSON appends in as encoding/json would marshal it. It fails, like
// encoding/json, on a NaN or infinite number.
func (in ParseInput) AppendJSON(dst []byte) ([]byte, error) {
	return in.appendJSON(dst, true)
}

// AppendJSONNoEscapeHTML is AppendJSON without encoding/json's HTML
// escaping: what a json.Encoder with SetEscapeHTML(false) writes, without
// the newline. <, > and & go as they are (JSON all the same, decoded to the
// same value). The host sends batches this way: progress bars are full of
// them (tqdm's "[00:10<00:12", Keras' "==>"), and a guest decodes a
// string with no escape as a plain substring of its input, but must copy
// and unquote one with an escape.
func (in ParseInput) AppendJSONNoEscapeHTML(dst []byte) ([]byte, error) {
	return in.appendJSON(dst, false)
}

func (in ParseInput) appendJSON(dst []byte, html bool) ([]byte, error) {
	dst = append(dst, `{"lines":`...)
	if in.Lines == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, l := range in.Lines {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONStr(dst, l, html)
		}
		dst = append(dst, ']')
	}
	if in.Last != nil {
		var err error
		dst = append(dst, `,"last":`...)
		if dst, err = in.Last.appendJSON(dst, html); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// errUnsupported is returned for a NaN or infinite number, which
// encoding/json refuses too (callers fall back to it for its error).
var errUnsupported = errors.New("sdk: unsupported value")

// AppendJSON appends out as encoding/json would marshal it. It fails, like
// encoding/json, on a NaN or infinite number.
func (out ParseOutput) AppendJSON(dst []byte) ([]byte, error) {
	if len(out.Updates) == 0 {
		return append(dst, "{}"...), nil
	}
	dst = append(dst, `{"updates":[`...)
	for i := range out.Updates {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = out.Updates[i].AppendJSON(dst); err != nil {
			return dst, err
		}
	}
	return append(dst, "]}"...), nil
}

// AppendJSON appends p as encoding/json would marshal it. It fails, like
// encoding/json, on a NaN or infinite number.
func (p *Progress) AppendJSON(dst []byte) ([]byte, error) {
	return p.appendJSON(dst, true)
}

func (p *Progress) appendJSON(dst []byte, html bool) ([]byte, error) {
	start := len(dst)
	dst = append(dst, '{')
	sep := func() {
		if len(dst) > start+1 {
			dst = append(dst, ',')
		}
	}
	ok := true
	intField := func(name string, v int64) {
		if v != 0 {
			sep()
			dst = append(dst, name...)
			dst = strconv.AppendInt(dst, v, 10)
		}
	}
	floatField := func(name string, v float64) {
		if v != 0 {
			sep()
			dst = append(dst, name...)
			dst, ok = appendJSONFloat(dst, v, ok)
		}
	}
	strField := func(name, v string) {
		if v != "" {
			sep()
			dst = append(dst, name...)
			dst = appendJSONStr(dst, v, html)
		}
	}
	intField(`"step":`, p.Step)
	intField(`"total":`, p.Total)
	floatField(`"percentage":`, p.Percentage)
	strField(`"phase":`, p.Phase)
	intField(`"epoch":`, p.Epoch)
	intField(`"epoch_total":`, p.EpochTotal)
	floatField(`"eta_seconds":`, p.ETASeconds)
	floatField(`"rate":`, p.Rate)
	strField(`"rate_unit":`, p.RateUnit)
	if len(p.Metrics) > 0 {
		sep()
		dst = append(dst, `"metrics":{`...)
		keys := make([]string, 0, len(p.Metrics))
		for k := range p.Metrics {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONStr(dst, k, html)
			dst = append(dst, ':')
			dst, ok = appendJSONFloat(dst, p.Metrics[k], ok)
		}
		dst = append(dst, '}')
	}
	strField(`"message":`, p.Message)
	strField(`"source":`, p.Source)
	dst = append(dst, '}')
	if !ok {
		return dst, errUnsupported
	}
	return dst, nil
}

// appendJSONFloat formats f like encoding/json (ES6 number formatting);
// ok turns false for NaN and infinities.
func appendJSONFloat(dst []byte, f float64, ok bool) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return append(dst, '0'), false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, ok
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s like encoding/json with HTML escaping: <, >
// and & as \u003c..., control characters escaped, invalid UTF-8 as
// \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string) []byte { return appendJSONStr(dst, s, true) }

// appendJSONStr is appendJSONString, with HTML escaping when html is set.
func appendJSONStr(dst []byte, s string, html bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if j := i + plainRun(s[i:], html); j > i {
			i = j
			continue
		}
		b := s[i]
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			start = i + size
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			start = i + size
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plainRun returns how many leading bytes of s need no attention inside a
// JSON string: printable ASCII other than " and \ (and, with html, other
// than <, > and &). It looks at eight bytes per step.
func plainRun(s string, html bool) int {
	var hm uint64 // msb when html: no branch in the loop
	if html {
		hm = msb
	}
	i := 0
	for ; i+32 <= len(s); i += 32 {
		// 32 bytes per iteration: in a guest, each iteration costs a
		// check for a timeout.
		x0, x1, x2, x3 := load8(s[i:]), load8(s[i+8:]), load8(s[i+16:]), load8(s[i+24:])
		// (x - 0x20*lsb) &^ x flags bytes < 0x20, x itself bytes >= 0x80.
		t0 := (hasByte(x0, '"')|hasByte(x0, '\\')|((x0-0x20*lsb)&^x0)|x0)&msb | (hasByte(x0, '<')|hasByte(x0, '>')|hasByte(x0, '&'))&hm
		t1 := (hasByte(x1, '"')|hasByte(x1, '\\')|((x1-0x20*lsb)&^x1)|x1)&msb | (hasByte(x1, '<')|hasByte(x1, '>')|hasByte(x1, '&'))&hm
		t2 := (hasByte(x2, '"')|hasByte(x2, '\\')|((x2-0x20*lsb)&^x2)|x2)&msb | (hasByte(x2, '<')|hasByte(x2, '>')|hasByte(x2, '&'))&hm
		t3 := (hasByte(x3, '"')|hasByte(x3, '\\')|((x3-0x20*lsb)&^x3)|x3)&msb | (hasByte(x3, '<')|hasByte(x3, '>')|hasByte(x3, '&'))&hm
		if t0|t1|t2|t3 != 0 {
			switch {
			case t0 != 0:
				return i + bits.TrailingZeros64(t0)/8
			case t1 != 0:
				return i + 8 + bits.TrailingZeros64(t1)/8
			case t2 != 0:
				return i + 16 + bits.TrailingZeros64(t2)/8
			}
			return i + 24 + bits.TrailingZeros64(t3)/8
		}
	}
	for ; i+16 <= len(s); i += 16 {
		x, y := load8(s[i:]), load8(s[i+8:])
		// (x - 0x20*lsb) &^ x flags bytes < 0x20, x itself bytes >= 0x80.
		t := (hasByte(x, '"')|hasByte(x, '\\')|((x-0x20*lsb)&^x)|x)&msb | (hasByte(x, '<')|hasByte(x, '>')|hasByte(x, '&'))&hm
		u := (hasByte(y, '"')|hasByte(y, '\\')|((y-0x20*lsb)&^y)|y)&msb | (hasByte(y, '<')|hasByte(y, '>')|hasByte(y, '&'))&hm
		if t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
		if u != 0 {
			return i + 8 + bits.TrailingZeros64(u)/8
		}
	}
	if i+8 <= len(s) {
		x := load8(s[i:])
		t := (hasByte(x, '"') | hasByte(x, '\\') | ((x - 0x20*lsb) &^ x) | x) & msb
		if html {
			t |= (hasByte(x, '<') | hasByte(x, '>') | hasByte(x, '&')) & msb
		}
		if t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
		i += 8
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || html && (c == '<' || c == '>' || c == '&') {
			return i
		}
	}
	return i
}

// load8 reads s[0:8] as a little-endian word (len(s) >= 8). Byte loads
// are portable (any endianness, alignment) and merged into one load on
// amd64 and arm64; the Go compiler does not merge them on wasm, where a
// single (unaligned, little-endian) i64.load does it.
func load8(s string) uint64 {
	_ = s[7]
	if runtime.GOARCH == "wasm" {
		return *(*uint64)(unsafe.Pointer(unsafe.StringData(s)))
	}
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// hasByte sets the top bit of the lowest byte of x equal to c (higher ones
// may be set spuriously, only the lowest counts).
func hasByte(x uint64, c byte) uint64 {
	y := x ^ (lsb * uint64(c))
	return (y - lsb) &^ y
}

// DecodeJSON sets *in to what json.Unmarshal(data, in) would decode into a
// zero ParseInput, and returns the same error. Strings in the result may
// share memory with data.
func (in *ParseInput) DecodeJSON(data string) error {
	*in = ParseInput{}
	d := decoder{s: data}
	if d.parseInput(in) {
		return nil
	}
	*in = ParseInput{}
	return unmarshalParseInput(data, in)
}

// decoder reads the shape encoding/json writes for ParseInput; any other
// shape makes it give up (ok false) and the caller falls back.
type decoder struct {
	s     string
	i     int
	arena []byte // unquoted strings, appended (never rewritten)
}

func (d *decoder) ws() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// lit consumes c after optional white space.
func (d *decoder) lit(c byte) bool {
	d.ws()
	if d.i < len(d.s) && d.s[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *decoder) null() bool {
	d.ws()
	if len(d.s)-d.i >= 4 && d.s[d.i:d.i+4] == "null" {
		d.i += 4
		return true
	}
	return false
}

// object calls field for each key of an object; field reads the value.
func (d *decoder) object(field func(key string) bool) bool {
	if !d.lit('{') {
		return false
	}
	if d.lit('}') {
		return true
	}
	for {
		d.ws()
		key, ok := d.str()
		if !ok || !d.lit(':') || !field(key) {
			return false
		}
		if d.lit(',') {
			continue
		}
		return d.lit('}')
	}
}

func (d *decoder) parseInput(in *ParseInput) bool {
	var seenLines, seenLast bool
	ok := d.object(func(key string) bool {
		switch key {
		case "lines":
			if seenLines {
				return false
			}
			seenLines = true
			return d.lines(in)
		case "last":
			if seenLast {
				return false
			}
			seenLast = true
			if d.null() {
				return true
			}
			in.Last = &Progress{}
			return d.progress(in.Last)
		}
		return false
	})
	d.ws()
	return ok && d.i == len(d.s)
}

func (d *decoder) lines(in *ParseInput) bool {
	if d.null() {
		return true
	}
	if !d.lit('[') {
		return false
	}
	in.Lines = []string{}
	if d.lit(']') {
		return true
	}
	for {
		d.ws()
		s, ok := d.str()
		if !ok {
			return false
		}
		in.Lines = append(in.Lines, s)
		if d.lit(',') {
			continue
		}
		return d.lit(']')
	}
}

func (d *decoder) progress(p *Progress) bool {
	var seen uint16
	return d.object(func(key string) bool {
		var bit uint16
		var ok bool
		switch key {
		case "step":
			bit, ok = 1<<0, d.int(&p.Step)
		case "total":
			bit, ok = 1<<1, d.int(&p.Total)
		case "percentage":
			bit, ok = 1<<2, d.float(&p.Percentage)
		case "phase":
			bit, ok = 1<<3, d.strField(&p.Phase)
		case "epoch":
			bit, ok = 1<<4, d.int(&p.Epoch)
		case "epoch_total":
			bit, ok = 1<<5, d.int(&p.EpochTotal)
		case "eta_seconds":
			bit, ok = 1<<6, d.float(&p.ETASeconds)
		case "rate":
			bit, ok = 1<<7, d.float(&p.Rate)
		case "rate_unit":
			bit, ok = 1<<8, d.strField(&p.RateUnit)
		case "metrics":
			bit, ok = 1<<9, d.metrics(p)
		case "message":
			bit, ok = 1<<10, d.strField(&p.Message)
		case "source":
			bit, ok = 1<<11, d.strField(&p.Source)
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return ok
	})
}

func (d *decoder) metrics(p *Progress) bool {
	p.Metrics = map[string]float64{}
	return d.object(func(key string) bool {
		if _, dup := p.Metrics[key]; dup {
			return false
		}
		var v float64
		if !d.float(&v) {
			return false
		}
		p.Metrics[key] = v
		return true
	})
}

func (d *decoder) strField(dst *string) bool {
	d.ws()
	s, ok := d.str()
	*dst = s
	return ok
}

// number returns the next JSON number literal (strict grammar).
func (d *decoder) number() (string, bool) {
	d.ws()
	end, ok := ScanJSONNumber(d.s, d.i)
	if !ok {
		return "", false
	}
	lit := d.s[d.i:end]
	d.i = end
	return lit, true
}

func (d *decoder) int(dst *int64) bool {
	lit, ok := d.number()
	if !ok {
		return false
	}
	v, err := strconv.ParseInt(lit, 10, 64)
	*dst = v
	return err == nil
}

func (d *decoder) float(dst *float64) bool {
	lit, ok := d.number()
	if !ok {
		return false
	}
	v, err := strconv.ParseFloat(lit, 64)
	*dst = v
	return err == nil
}

// str reads a JSON string at d.i (no leading white space) and unquotes it
// like encoding/json: invalid UTF-8 and lone surrogates become U+FFFD. A
// string without escapes is returned as a substring of d.s once its bytes
// >= 0x80, if any, are checked to be valid UTF-8: the bars and block
// characters of progress lines cost one step per run of them, not one
// per byte.
func (d *decoder) str() (string, bool) {
	s := d.s
	if d.i >= len(s) || s[d.i] != '"' {
		return "", false
	}
	start := d.i + 1
	i := start
	esc, bad := false, false
	for {
		if i < len(s) {
			i += plainRun(s[i:], false)
		}
		if i >= len(s) {
			return "", false
		}
		c := s[i]
		switch {
		case c == '"':
			d.i = i + 1
			body := s[start:i]
			if !esc && !bad {
				return body, true
			}
			return d.unquote(body)
		case c == '\\':
			esc = true
			i += 2 // validated by unquote
		case c < 0x20:
			return "", false
		default: // >= 0x80
			// A run of bytes >= 0x80 holds whole characters when valid:
			// checking the runs checks the string, one step per
			// character (utf8.ValidString on the whole string would go
			// one byte per step past the first non-ASCII one).
			n := highRun(s[i:])
			bad = bad || !utf8.ValidString(s[i:i+n])
			i += n
		}
	}
}

// highRun returns how many leading bytes of s are >= 0x80, looking at
// eight bytes per step.
func highRun(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if t := ^load8(s[i:]) & msb; t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
	}
	for i < len(s) && s[i] >= 0x80 {
		i++
	}
	return i
}

// unquote decodes the body of a JSON string that has escapes or invalid
// UTF-8 into d.arena, one allocation for many strings. The strings share
// the arena's array, which is only ever appended to: a full arena is left
// to the strings in it and a new one started.
func (d *decoder) unquote(s string) (string, bool) {
	if cap(d.arena)-len(d.arena) < 3*len(s) {
		d.arena = make([]byte, 0, max(3*len(s), len(d.s)-d.i, 512))
	}
	start := len(d.arena)
	b, ok := unquote(d.arena, s)
	if !ok || len(b) == start {
		return "", ok
	}
	d.arena = b
	return unsafe.String(&b[start], len(b)-start), true
}

// unquote appends the body of a JSON string that has escapes or invalid
// UTF-8 to b, decoded as encoding/json does. Runs of plain bytes, and
// runs of valid multi-byte characters, are copied whole.
func unquote(b []byte, s string) ([]byte, bool) {
	for r := 0; r < len(s); {
		if n := plainRun(s[r:], false); n > 0 {
			b = append(b, s[r:r+n]...)
			r += n
			continue
		}
		c := s[r]
		switch {
		case c == '\\':
			if r+1 >= len(s) {
				return b, false
			}
			switch e := s[r+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
				r += 2
			case 'b':
				b, r = append(b, '\b'), r+2
			case 'f':
				b, r = append(b, '\f'), r+2
			case 'n':
				b, r = append(b, '\n'), r+2
			case 'r':
				b, r = append(b, '\r'), r+2
			case 't':
				b, r = append(b, '\t'), r+2
			case 'u':
				rr := getu4(s[r:])
				if rr < 0 {
					return b, false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					rr1 := getu4(s[r:])
					if dec := utf16.DecodeRune(rr, rr1); dec != utf8.RuneError {
						r += 6
						b = utf8.AppendRune(b, dec)
						break
					}
					rr = utf8.RuneError
				}
				b = utf8.AppendRune(b, rr)
			default:
				return b, false
			}
		case c < 0x20 || c == '"':
			return b, false
		case c < utf8.RuneSelf:
			b, r = append(b, c), r+1
		default:
			if n := highRun(s[r:]); utf8.ValidString(s[r : r+n]) {
				b = append(b, s[r:r+n]...)
				r += n
				break
			}
			rr, size := utf8.DecodeRuneInString(s[r:])
			r += size
			b = utf8.AppendRune(b, rr)
		}
	}
	return b, true
}

func getu4(s string) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for i := 2; i < 6; i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
