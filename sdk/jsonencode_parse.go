package sdk

import (
	"errors"
	"strconv"
)

// The encoders of the progress kind's payloads, the only ones that cross
// the ABI per batch of lines: the host writes ParseInput with them, the
// guest ParseOutput. They write exactly what encoding/json writes for these
// types, byte for byte (HTML-safe escaping included, unless asked not to),
// scanning strings eight bytes at a time (jsonscan.go).

// AppendJSON appends in as encoding/json would marshal it. It fails, like
// encoding/json, on a NaN or infinite number outside Metrics (whose
// non-finite values are strings, see Metrics).
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
	if in.State != "" {
		dst = append(dst, `,"state":`...)
		dst = appendJSONStr(dst, in.State, html)
	}
	return append(dst, '}'), nil
}

// errUnsupported is returned for a NaN or infinite number, which
// encoding/json refuses too (callers fall back to it for its error).
var errUnsupported = errors.New("sdk: unsupported value")

// AppendJSON appends out as encoding/json would marshal it. It fails, like
// encoding/json, on a NaN or infinite number outside Metrics.
func (out ParseOutput) AppendJSON(dst []byte) ([]byte, error) {
	if len(out.Updates) == 0 {
		if out.State != "" {
			dst = append(dst, `{"state":`...)
			dst = appendJSONStr(dst, out.State, true)
			return append(dst, '}'), nil
		}
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
	dst = append(dst, ']')
	if out.State != "" {
		dst = append(dst, `,"state":`...)
		dst = appendJSONStr(dst, out.State, true)
	}
	return append(dst, '}'), nil
}

// AppendJSON appends p as encoding/json would marshal it. It fails, like
// encoding/json, on a NaN or infinite number outside Metrics.
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
	floatField(`"epoch_exact":`, p.EpochExact)
	floatField(`"eta_seconds":`, p.ETASeconds)
	floatField(`"rate":`, p.Rate)
	strField(`"rate_unit":`, p.RateUnit)
	if len(p.Metrics) > 0 {
		sep()
		dst = append(dst, `"metrics":`...)
		dst = appendMetrics(dst, p.Metrics, html)
	}
	strField(`"message":`, p.Message)
	strField(`"source":`, p.Source)
	dst = append(dst, '}')
	if !ok {
		return dst, errUnsupported
	}
	return dst, nil
}
