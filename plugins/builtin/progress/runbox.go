package progress

import (
	"math"
	"strconv"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// parseRunbox reads the contract line `##PROGRESS## {json}`. Text before
// the marker (timestamps, logger prefixes) is ignored, and so is text after
// the JSON object.
func parseRunbox(s string) (u sdk.Progress, ok bool) {
	k := lastIndex(s, "##PROGRESS##")
	rest := strings.TrimSpace(s[k+len("##PROGRESS##"):])
	if rest == "" || rest[0] != '{' {
		return u, false
	}
	var buf [16]flatEnt // scanFlat's members: on the stack, not the heap
	if ents, ok := scanFlat(rest, &buf); ok {
		u.Source = "runbox"
		for i, e := range ents {
			if laterKey(ents[i+1:], e.key) {
				continue // a repeated key: the last one counts, as in a map
			}
			switch e.kind {
			case entStr:
				runboxField(&u, e.key, e.str)
			case entNum:
				runboxField(&u, e.key, e.num)
			default:
				runboxField(&u, e.key, nil)
			}
		}
		return runboxDone(u), true
	}
	ms, ok := decodeMembers(rest)
	if !ok {
		return u, false
	}
	u.Source = "runbox"
	// In order, a repeated key counting once, at its last place: as above,
	// so that aliases ("step", "current", "n") resolve the same way
	// whichever path reads the object.
	for i, m := range ms {
		if laterMember(ms[i+1:], m.key) {
			continue
		}
		runboxField(&u, m.key, m.val)
	}
	return runboxDone(u), true
}

func laterMember(ms []member, key string) bool {
	for _, m := range ms {
		if m.key == key {
			return true
		}
	}
	return false
}

// runboxField applies one field of the contract object.
func runboxField(u *sdk.Progress, key string, v any) {
	{
		switch key {
		case "phase", "stage":
			if str, ok := v.(string); ok {
				u.Phase = str
			}
		case "message", "msg":
			if str, ok := v.(string); ok {
				u.Message = str
			}
		case "rate_unit", "unit":
			if str, ok := v.(string); ok {
				u.RateUnit = str
			}
		case "metrics":
			if mm, ok := v.(map[string]any); ok {
				for mk, mv := range mm {
					if f, ok := num(mv); ok {
						addMetric(&u.Metrics, mk, f)
					}
				}
			}
		default:
			f, ok := num(v)
			if !ok {
				return
			}
			switch key {
			case "step", "current", "n":
				u.Step = toInt(f)
			case "total":
				u.Total = toInt(f)
			case "percentage", "percent", "pct", "progress":
				u.Percentage = f
			case "epoch":
				u.Epoch = toInt(f)
			case "epoch_total", "epochs", "total_epochs":
				u.EpochTotal = toInt(f)
			case "eta_seconds", "eta":
				u.ETASeconds = f
			case "rate":
				u.Rate = f
			default:
				addMetric(&u.Metrics, key, f)
			}
		}
	}
}

func runboxDone(u sdk.Progress) sdk.Progress {
	if u.Percentage == 0 && u.Total > 0 && u.Step > 0 {
		u.Percentage = pct(u.Step, u.Total)
	}
	if u.Percentage > 100 || u.Percentage < 0 {
		u.Percentage = 0
	}
	return u
}

// num accepts JSON numbers and numeric strings.
func num(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, finite(x)
	case string:
		f, j, ok := parseNum(x, 0)
		return f, ok && j == len(x) && finite(f)
	}
	return 0, false
}

// toInt rounds a float to an int64, refusing what does not fit.
func toInt(f float64) int64 {
	if !finite(f) || f < 0 || f > 1e15 {
		return 0
	}
	return int64(math.Round(f))
}

// flatEnt is one member of a flat contract object.
type flatEnt struct {
	key, str string
	num      float64
	kind     int // entNum, entStr, entOther (true, false, null)
}

const (
	entNum = iota
	entStr
	entOther
)

// scanFlat reads the common contract object by hand: a flat JSON object of
// plain ASCII strings (no escapes), numbers, booleans and null, at most 16
// members. Anything else (nesting, escapes, non-ASCII, bad syntax) returns
// false and goes to decodeMembers. Text after the object is ignored, as
// json.Decoder does. The members go to buf.
func scanFlat(s string, buf *[16]flatEnt) ([]flatEnt, bool) {
	n := 0
	i := skipJSONSpace(s, 1)
	if i < len(s) && s[i] == '}' {
		return nil, true
	}
	for {
		key, j, ok := flatStr(s, i)
		if !ok {
			return nil, false
		}
		j = skipJSONSpace(s, j)
		if j >= len(s) || s[j] != ':' {
			return nil, false
		}
		j = skipJSONSpace(s, j+1)
		if n == len(buf) || j >= len(s) {
			return nil, false
		}
		e := &buf[n]
		e.key = key
		switch c := s[j]; {
		case c == '"':
			e.str, j, ok = flatStr(s, j)
			e.kind = entStr
		case c == '-' || isDigit(c):
			e.num, j, ok = flatNum(s, j)
			e.kind = entNum
		case hasAt(s, j, "true"), hasAt(s, j, "null"):
			j += 4
			e.kind = entOther
		case hasAt(s, j, "false"):
			j += 5
			e.kind = entOther
		default:
			ok = false
		}
		if !ok {
			return nil, false
		}
		n++
		j = skipJSONSpace(s, j)
		if j >= len(s) {
			return nil, false
		}
		if s[j] == '}' {
			return buf[:n], true
		}
		if s[j] != ',' {
			return nil, false
		}
		i = skipJSONSpace(s, j+1)
	}
}

func skipJSONSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// flatStr reads a JSON string of printable ASCII without escapes at s[i:].
func flatStr(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", i, false
	}
	for j := i + 1; j < len(s); j++ {
		c := s[j]
		if c == '"' {
			return s[i+1 : j], j + 1, true
		}
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return "", i, false
		}
	}
	return "", i, false
}

// flatNum reads a JSON number at s[i:] (strict JSON grammar).
func flatNum(s string, i int) (float64, int, bool) {
	j := i
	if s[j] == '-' {
		j++
	}
	if j >= len(s) || !isDigit(s[j]) {
		return 0, i, false
	}
	if s[j] == '0' {
		j++
	} else {
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	if j < len(s) && s[j] == '.' {
		j++
		d := j
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j == d {
			return 0, i, false
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		return 0, i, false // rare: leave exponents to encoding/json
	}
	f, ok := fastFloat(s[i:j])
	return f, j, ok
}

func laterKey(ents []flatEnt, key string) bool {
	for _, e := range ents {
		if e.key == key {
			return true
		}
	}
	return false
}

// member is one member of a JSON object.
type member struct {
	key string
	val any
}

// decodeMembers reads the JSON object at the start of s as
// json.NewDecoder(strings.NewReader(s)).Decode(&m) with m a
// map[string]any does, without encoding/json (which would make the module
// about 40% bigger; see sdk/jsondecode.go), but returns its members in
// order, repeated keys included: text after the object is ignored; nested
// objects become map[string]any (a repeated key's last value wins), arrays
// []any, numbers float64 (false if one is out of range), strings unquoted
// with invalid UTF-8 and lone surrogates as U+FFFD; the grammar is strict
// and nesting at most 10000 deep. TestDecodeMembersMatchesEncodingJSON
// compares the two.
func decodeMembers(s string) ([]member, bool) {
	d := anyDecoder{s: s}
	d.ws()
	if d.i >= len(s) || s[d.i] != '{' {
		return nil, false
	}
	var ms []member
	ok := d.object(func(k string, v any) { ms = append(ms, member{k, v}) })
	return ms, ok
}

type anyDecoder struct {
	s     string
	i     int
	depth int
}

func (d *anyDecoder) ws() { d.i = skipJSONSpace(d.s, d.i) }

// value reads one value after optional white space.
func (d *anyDecoder) value() (any, bool) {
	d.ws()
	if d.i >= len(d.s) {
		return nil, false
	}
	switch c := d.s[d.i]; {
	case c == '{':
		m := map[string]any{}
		if !d.object(func(k string, v any) { m[k] = v }) {
			return nil, false
		}
		return m, true
	case c == '[':
		if d.depth++; d.depth > 10000 {
			return nil, false
		}
		a := []any{}
		d.i++
		if d.ws(); d.i < len(d.s) && d.s[d.i] == ']' {
			d.i++
			d.depth--
			return a, true
		}
		for {
			v, ok := d.value()
			if !ok {
				return nil, false
			}
			a = append(a, v)
			if !d.next(']') {
				return nil, false
			}
			if d.s[d.i-1] == ']' {
				d.depth--
				return a, true
			}
		}
	case c == '"':
		return d.str()
	case hasAt(d.s, d.i, "true"):
		d.i += 4
		return true, true
	case hasAt(d.s, d.i, "false"):
		d.i += 5
		return false, true
	case hasAt(d.s, d.i, "null"):
		d.i += 4
		return nil, true
	case c == '-' || isDigit(c):
		return d.number()
	}
	return nil, false
}

// object reads the object at d.i, calling member for each member in order.
func (d *anyDecoder) object(member func(k string, v any)) bool {
	if d.depth++; d.depth > 10000 {
		return false
	}
	d.i++
	if d.ws(); d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		d.depth--
		return true
	}
	for {
		d.ws()
		k, ok := d.str()
		if !ok {
			return false
		}
		if d.ws(); d.i >= len(d.s) || d.s[d.i] != ':' {
			return false
		}
		d.i++
		v, ok := d.value()
		if !ok {
			return false
		}
		member(k, v)
		if !d.next('}') {
			return false
		}
		if d.s[d.i-1] == '}' {
			d.depth--
			return true
		}
	}
}

// next consumes the ',' or the end byte after a member or element.
func (d *anyDecoder) next(end byte) bool {
	d.ws()
	if d.i < len(d.s) && (d.s[d.i] == ',' || d.s[d.i] == end) {
		d.i++
		return true
	}
	return false
}

// number reads a number (strict grammar) as a float64.
func (d *anyDecoder) number() (any, bool) {
	end, ok := sdk.ScanJSONNumber(d.s, d.i)
	if !ok {
		return nil, false
	}
	f, err := strconv.ParseFloat(d.s[d.i:end], 64)
	d.i = end
	return f, err == nil
}

// str reads a string at d.i and unquotes it as encoding/json does.
func (d *anyDecoder) str() (string, bool) {
	end, plain, ok := sdk.ScanJSONString(d.s, d.i)
	if !ok {
		return "", false
	}
	body := d.s[d.i+1 : end-1]
	d.i = end
	if plain {
		return body, true
	}
	return sdk.UnquoteJSON(body), true
}
