package sdk

import (
	"strconv"
	"strings"
)

// Typed values of the wire types' fields, with encoding/json's rules for
// null, type errors and repeated keys.

// typeError records that the value at d.i does not fit field, and skips it.
func (d *jsonDec) typeError(field string) bool {
	what := "number"
	switch d.peek() {
	case '{':
		what = "object"
	case '[':
		what = "array"
	case '"':
		what = "string"
	case 't', 'f':
		what = "bool"
	}
	d.mismatch(what, field)
	return d.skip()
}

func (d *jsonDec) mismatch(what, field string) {
	if d.err == nil {
		d.err = &jsonError{"json: cannot unmarshal " + what + " into field " + field + " at offset " + strconv.Itoa(d.i)}
	}
}

// fields reads an object into a struct: field is called with each key and
// d at its value, and reads the value (or skips it: an unknown key). null
// leaves the struct alone.
func (d *jsonDec) fields(name string, field func(key string) bool) bool {
	switch d.peek() {
	case 'n':
		return d.literal("null")
	case '{':
		return d.object(field)
	}
	return d.typeError(name)
}

// fieldName returns the name in names that key selects as encoding/json
// matches keys to fields: exactly, or else equal under Unicode case
// folding; "" if none.
func fieldName(key string, names []string) string {
	for _, n := range names {
		if n == key {
			return n
		}
	}
	for _, n := range names {
		if strings.EqualFold(n, key) {
			return n
		}
	}
	return ""
}

func (d *jsonDec) string(dst *string, field string) bool {
	switch d.peek() {
	case '"':
		s, ok := d.str()
		*dst = s
		return ok
	case 'n':
		return d.literal("null")
	}
	return d.typeError(field)
}

func (d *jsonDec) bool(dst *bool, field string) bool {
	switch d.peek() {
	case 't':
		*dst = true
		return d.literal("true")
	case 'f':
		*dst = false
		return d.literal("false")
	case 'n':
		return d.literal("null")
	}
	return d.typeError(field)
}

// num returns the number literal at d.i; lit is "" for null and for a
// value of another type (recorded as a type error and skipped).
func (d *jsonDec) num(field string) (lit string, ok bool) {
	switch c := d.peek(); {
	case c == 'n':
		return "", d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	}
	return "", d.typeError(field)
}

func (d *jsonDec) int64(dst *int64, field string) bool {
	return d.intBits(dst, 64, field)
}

func (d *jsonDec) int(dst *int, field string) bool {
	v := int64(*dst)
	ok := d.intBits(&v, strconv.IntSize, field)
	*dst = int(v)
	return ok
}

func (d *jsonDec) intBits(dst *int64, bits int, field string) bool {
	lit, ok := d.num(field)
	if !ok || lit == "" {
		return ok
	}
	v, err := strconv.ParseInt(lit, 10, bits)
	if err != nil {
		d.mismatch("number "+lit, field)
		return true
	}
	*dst = v
	return true
}

func (d *jsonDec) uint64(dst *uint64, field string) bool {
	lit, ok := d.num(field)
	if !ok || lit == "" {
		return ok
	}
	v, err := strconv.ParseUint(lit, 10, 64)
	if err != nil {
		d.mismatch("number "+lit, field)
		return true
	}
	*dst = v
	return true
}

func (d *jsonDec) float64(dst *float64, field string) bool {
	lit, ok := d.num(field)
	if !ok || lit == "" {
		return ok
	}
	v, err := parseFloat(lit)
	if err != nil {
		d.mismatch("number "+lit, field)
		return true
	}
	*dst = v
	return true
}

// decodeSlice reads an array into *dst as encoding/json does: null sets
// nil; elements are decoded into the slice's existing elements (a repeated
// key reuses them), appended past its capacity; [] makes an empty slice.
func decodeSlice[T any](d *jsonDec, dst *[]T, field string, elem func(*T) bool) bool {
	switch d.peek() {
	case 'n':
		*dst = nil
		return d.literal("null")
	case '[':
	default:
		return d.typeError(field)
	}
	s := *dst
	n := 0
	ok := d.array(func() bool {
		switch {
		case n < len(s):
		case n < cap(s):
			s = s[:n+1]
		default:
			var zero T
			s = append(s, zero)
		}
		n++
		return elem(&s[n-1])
	})
	if n < len(s) {
		s = s[:n]
	}
	if n == 0 {
		s = make([]T, 0)
	}
	*dst = s
	return ok
}

// decodeMap reads an object into a map with string keys: null sets nil;
// the map is made when nil and added to; each value is decoded into a zero
// V (so a null value stores the zero value).
func decodeMap[M ~map[string]V, V any](d *jsonDec, dst *M, field string, elem func(*V) bool) bool {
	switch d.peek() {
	case 'n':
		*dst = nil
		return d.literal("null")
	case '{':
	default:
		return d.typeError(field)
	}
	if *dst == nil {
		*dst = M{}
	}
	m := *dst
	return d.object(func(key string) bool {
		var v V
		ok := elem(&v)
		m[key] = v
		return ok
	})
}

// decodePtr reads into **dst: null sets nil, anything else is decoded into
// the existing value, allocated when nil.
func decodePtr[T any](d *jsonDec, dst **T, decode func(*T) bool) bool {
	if d.peek() == 'n' {
		*dst = nil
		return d.literal("null")
	}
	if *dst == nil {
		*dst = new(T)
	}
	return decode(*dst)
}

// strings is decodeSlice for []string, the lines of every parse call,
// written out: one call per element instead of three.
func (d *jsonDec) strings(dst *[]string, field string) bool {
	switch d.peek() {
	case 'n':
		*dst = nil
		return d.literal("null")
	case '[':
	default:
		return d.typeError(field)
	}
	s := *dst
	n := 0
	ok := d.array(func() bool {
		switch {
		case n < len(s):
		case n < cap(s):
			s = s[:n+1] // encoding/json reuses what is there
		default:
			s = append(s, "")
		}
		n++
		switch d.peek() {
		case '"':
			str, ok := d.str()
			s[n-1] = str
			return ok
		case 'n':
			return d.literal("null")
		}
		return d.typeError(field)
	})
	if n == 0 {
		s = make([]string, 0)
	}
	*dst = s[:n]
	return ok
}
