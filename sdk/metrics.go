package sdk

import (
	"math"
	"slices"
	"strconv"
)

// Metrics are the named values of a progress update (loss, accuracy,
// learning rate, ...). A training log that prints "loss=nan" or "loss: inf"
// says exactly what a user needs to see, so a metric value may be NaN or
// ±Inf. JSON has no such numbers; on the wire (and wherever a Metrics is
// written as JSON) they are the strings "NaN", "Infinity" and "-Infinity":
// what JavaScript's Number(), Python's float() and Go's strconv.ParseFloat
// read, and what JSON loggers that refuse bare NaN write. Finite values
// stay JSON numbers, so a record without a non-finite value is byte for
// byte what it was before.
//
// Only metric values take this form: percentage, ETA, rate and the
// fractional epoch are quantities runbox computes with, and a non-finite
// one is a parser's mistake, still refused.
type Metrics map[string]float64

// The JSON spellings of the non-finite metric values.
const (
	JSONNaN    = "NaN"
	JSONInf    = "Infinity"
	JSONNegInf = "-Infinity"
)

// AppendMetricValue appends f as a metric value in JSON: a number as
// encoding/json writes it, or a quoted "NaN", "Infinity", "-Infinity".
func AppendMetricValue(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"`+JSONNaN+`"`...)
	case math.IsInf(f, 1):
		return append(dst, `"`+JSONInf+`"`...)
	case math.IsInf(f, -1):
		return append(dst, `"`+JSONNegInf+`"`...)
	}
	dst, _ = appendJSONFloat(dst, f, true)
	return dst
}

// ParseMetricString returns the value a metric's JSON string stands for:
// NaN, +Inf or -Inf for exactly "NaN", "Infinity", "-Infinity"; ok is
// false for any other string (no number travels as a string).
func ParseMetricString(s string) (f float64, ok bool) {
	switch s {
	case JSONNaN:
		return math.NaN(), true
	case JSONInf:
		return math.Inf(1), true
	case JSONNegInf:
		return math.Inf(-1), true
	}
	return 0, false
}

// FormatMetric writes a metric value for people: NaN, +Inf and -Inf as
// "NaN", "Infinity", "-Infinity", numbers with strconv's 'g' format.
func FormatMetric(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		b := AppendMetricValue(nil, f)
		return string(b[1 : len(b)-1])
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// appendMetrics appends m as a JSON object, keys sorted (as encoding/json
// writes maps), HTML-escaped when html is set.
func appendMetrics(dst []byte, m Metrics, html bool) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONStr(dst, k, html)
		dst = append(dst, ':')
		dst = AppendMetricValue(dst, m[k])
	}
	return append(dst, '}')
}

// MarshalJSON writes m as the wire does (null for a nil map).
func (m Metrics) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("null"), nil
	}
	return appendMetrics(nil, m, true), nil
}

// UnmarshalJSON reads what MarshalJSON writes, and any JSON object of
// numbers (every record written before non-finite values were kept):
// with encoding/json's rules for maps (null sets nil, an existing map is
// added to), a string other than the three spellings is a type error.
func (m *Metrics) UnmarshalJSON(b []byte) error {
	return decodeJSON(string(b), func(d *jsonDec) bool { return d.metrics(m, "metrics") }, func() { *m = nil })
}

// metrics decodes a metrics object at d.i.
func (d *jsonDec) metrics(dst *Metrics, field string) bool {
	return decodeMap(d, dst, field, func(x *float64) bool { return d.metricValue(x, field) })
}

// metricValue decodes one metric value: a number, null (left zero, as
// encoding/json does) or one of the non-finite spellings.
func (d *jsonDec) metricValue(dst *float64, field string) bool {
	if d.peek() != '"' {
		return d.float64(dst, field)
	}
	at := d.i
	s, ok := d.str()
	if !ok {
		return false
	}
	if f, ok := ParseMetricString(s); ok {
		*dst = f
		return true
	}
	if d.err == nil {
		d.err = &jsonError{"json: cannot unmarshal string into field " + field + " at offset " + strconv.Itoa(at) +
			`: a metric value is a number, "NaN", "Infinity" or "-Infinity"`}
	}
	return true
}
