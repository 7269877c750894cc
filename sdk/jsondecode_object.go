package sdk

import "strconv"

// Values of any kind, for guest code that reads JSON of its own.

// DecodeJSONObject reads the JSON object at the start of s (after white
// space) as a json.Decoder decodes it into a map[string]any, but calls
// member with each member in order, a repeated key as often as it occurs.
// Text after the object is ignored. It reports whether s starts with a
// well formed object all of whose numbers fit a float64; when it does
// not, what member was given is to be discarded. Strings may share memory
// with s. It is for guest code that reads JSON of its own without linking
// encoding/json. Unlike encoding/json, it also reads the bare NaN,
// Infinity and -Infinity that Python's json module writes by default (a
// training script's json.dumps of a loss gone NaN) as numbers.
func DecodeJSONObject(s string, member func(key string, val JSONValue)) bool {
	d := jsonDec{s: s}
	d.ws()
	if d.peek() != '{' {
		return false
	}
	ok := d.object(func(key string) bool {
		var v JSONValue
		if !d.jsonValue(&v) {
			return false
		}
		member(key, v)
		return true
	})
	return ok && d.err == nil
}

// JSONKind is the kind of a JSONValue.
type JSONKind uint8

// The kinds of JSON values.
const (
	JSONNull JSONKind = iota
	JSONBool
	JSONNumber
	JSONString
	JSONArray
	JSONObject
)

// JSONValue is a value read by DecodeJSONObject. A string, number or bool
// comes as itself (Str, Num, Bool), without the allocation an interface{}
// would cost for each; an array or object comes in Any as encoding/json
// decodes it into an interface{}: []any or map[string]any, nested objects
// as map[string]any (a repeated key's last value wins), numbers as
// float64, strings unquoted with invalid UTF-8 and lone surrogates as
// U+FFFD.
type JSONValue struct {
	Kind JSONKind
	Str  string
	Num  float64
	Bool bool
	Any  any
}

// Interface returns v as encoding/json decodes it into an interface{}:
// nil, bool, float64, string, []any or map[string]any.
func (v JSONValue) Interface() any {
	switch v.Kind {
	case JSONBool:
		return v.Bool
	case JSONNumber:
		return v.Num
	case JSONString:
		return v.Str
	case JSONArray, JSONObject:
		return v.Any
	}
	return nil
}

// jsonValue reads any value into v.
func (d *jsonDec) jsonValue(v *JSONValue) bool {
	switch c := d.peek(); {
	case c == 'N' || c == 'I' || c == '-' && d.i+1 < len(d.s) && d.s[d.i+1] == 'I':
		v.Kind = JSONNumber
		for _, lit := range [...]string{"NaN", "Infinity", "-Infinity"} {
			if len(d.s)-d.i >= len(lit) && d.s[d.i:d.i+len(lit)] == lit {
				v.Num, _ = ParseMetricString(lit)
				d.i += len(lit)
				return true
			}
		}
		return false
	case c == '"':
		v.Kind = JSONString
		str, ok := d.str()
		v.Str = str
		return ok
	case c == '-' || '0' <= c && c <= '9':
		v.Kind = JSONNumber
		lit, ok := d.number()
		if !ok {
			return false
		}
		f, err := parseFloat(lit)
		if err != nil {
			d.mismatch("number "+lit, "float64")
		}
		v.Num = f
		return true
	case c == 't':
		v.Kind, v.Bool = JSONBool, true
		return d.literal("true")
	case c == 'f':
		v.Kind = JSONBool
		return d.literal("false")
	case c == 'n':
		v.Kind = JSONNull
		return d.literal("null")
	case c == '[':
		v.Kind = JSONArray
		return d.value(&v.Any)
	case c == '{':
		v.Kind = JSONObject
		return d.value(&v.Any)
	}
	return false
}

// value reads any value as encoding/json decodes it into an interface{}.
func (d *jsonDec) value(dst *any) bool {
	switch d.peek() {
	case '{':
		m := map[string]any{}
		*dst = m
		return d.object(func(key string) bool {
			var v any
			ok := d.value(&v)
			m[key] = v
			return ok
		})
	case '[':
		a := []any{}
		ok := d.array(func() bool {
			var v any
			ok := d.value(&v)
			a = append(a, v)
			return ok
		})
		*dst = a
		return ok
	}
	var v JSONValue
	ok := d.jsonValue(&v)
	*dst = v.Interface()
	return ok
}

// pow10 holds the powers of ten a float64 represents exactly.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// parseFloat is strconv.ParseFloat(lit, 64) for a JSON number literal,
// without its general machinery for the usual ones: at most 15 digits and
// no exponent. Those are m / 10^k with m and 10^k exact float64s, and one
// correctly rounded division gives the nearest float64, as ParseFloat does.
func parseFloat(lit string) (float64, error) {
	var m uint64
	n, frac, neg := 0, -1, false
	for i := 0; i < len(lit); i++ {
		switch c := lit[i]; {
		case '0' <= c && c <= '9':
			m = m*10 + uint64(c-'0')
			n++
			if frac >= 0 {
				frac++
			}
		case c == '.':
			frac = 0
		case c == '-':
			neg = true
		default: // an exponent
			return strconv.ParseFloat(lit, 64)
		}
	}
	if n > 15 {
		return strconv.ParseFloat(lit, 64)
	}
	f := float64(m)
	if frac > 0 {
		f /= pow10[frac]
	}
	if neg {
		f = -f
	}
	return f, nil
}
