package sdk

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Reflection-free JSON encoders for what a guest answers: the manifest,
// PlanOutput, Failure and the envelope around them (the progress kind's
// payloads are in jsonencode_parse.go). Each writes exactly what
// json.Marshal writes for the value, byte for byte (field order,
// omitempty, sorted map keys, HTML-safe string escaping, ES6 number
// formatting), so the host's encoding/json
// reads the same values; like json.Marshal they fail on a NaN or infinite
// number. See jsondecode.go for why the guest avoids encoding/json.

// jsonObj writes the members of one JSON object.
type jsonObj struct {
	b     []byte
	first bool
}

func openObj(dst []byte) jsonObj { return jsonObj{append(dst, '{'), true} }

func (o *jsonObj) key(k string) {
	if !o.first {
		o.b = append(o.b, ',')
	}
	o.first = false
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
}

func (o *jsonObj) close() []byte { return append(o.b, '}') }

func (o *jsonObj) str(k, v string) {
	o.key(k)
	o.b = appendJSONString(o.b, v)
}

func (o *jsonObj) strOmit(k, v string) {
	if v != "" {
		o.str(k, v)
	}
}

func (o *jsonObj) int(k string, v int64) {
	o.key(k)
	o.b = strconv.AppendInt(o.b, v, 10)
}

func (o *jsonObj) intOmit(k string, v int64) {
	if v != 0 {
		o.int(k, v)
	}
}

func (o *jsonObj) strs(k string, v []string) {
	o.key(k)
	o.b = appendJSONStrings(o.b, v)
}

func (o *jsonObj) strsOmit(k string, v []string) {
	if len(v) > 0 {
		o.strs(k, v)
	}
}

func appendJSONStrings[S ~string](dst []byte, v []S) []byte {
	if v == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range v {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, string(s))
	}
	return append(dst, ']')
}

// appendManifest appends m as json.Marshal writes it.
func appendManifest(dst []byte, m *Manifest) []byte {
	o := openObj(dst)
	o.str("name", m.Name)
	o.str("version", m.Version)
	o.int("abi", int64(m.ABI))
	o.key("kinds")
	o.b = appendJSONStrings(o.b, m.Kinds)
	o.strOmit("description", m.Description)
	o.strsOmit("frameworks", m.Frameworks)
	o.intOmit("priority", int64(m.Priority))
	o.strsOmit("prefilter", m.Prefilter)
	if len(m.PrefilterConfirm) > 0 {
		o.key("prefilter_confirm")
		o.b = append(o.b, '[')
		for i := range m.PrefilterConfirm {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			c := &m.PrefilterConfirm[i]
			co := openObj(o.b)
			co.str("literal", c.Literal)
			co.strOmit("before", c.Before)
			co.strOmit("after", c.After)
			o.b = co.close()
		}
		o.b = append(o.b, ']')
	}
	return o.close()
}

// appendPlanOutput appends p as json.Marshal writes it.
func appendPlanOutput(dst []byte, p *PlanOutput) []byte {
	o := openObj(dst)
	if len(p.Risks) > 0 {
		o.key("risks")
		o.b = append(o.b, '[')
		for i := range p.Risks {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			r := &p.Risks[i]
			ro := openObj(o.b)
			ro.str("severity", r.Severity)
			ro.str("code", r.Code)
			ro.str("message", r.Message)
			ro.strOmit("evidence", r.Evidence)
			o.b = ro.close()
		}
		o.b = append(o.b, ']')
	}
	if r := p.Recommendation; r != nil {
		o.key("recommendation")
		ro := openObj(o.b)
		ro.strOmit("sandbox", r.Sandbox)
		ro.strOmit("sandbox_reason", r.SandboxReason)
		ro.strOmit("image", r.Image)
		ro.strOmit("image_reason", r.ImageReason)
		ro.intOmit("timeout_seconds", int64(r.TimeoutSeconds))
		ro.strOmit("timeout_reason", r.TimeoutReason)
		ro.intOmit("memory_bytes", r.MemoryBytes)
		ro.strOmit("memory_reason", r.MemoryReason)
		ro.strOmit("network", r.Network)
		ro.strOmit("network_reason", r.NetworkReason)
		ro.strOmit("gpus", r.GPUs)
		ro.strOmit("gpus_reason", r.GPUsReason)
		o.b = ro.close()
	}
	if s := p.Smoke; s != nil {
		o.key("smoke")
		so := openObj(o.b)
		so.strs("command", s.Command)
		so.str("flag", s.Flag)
		so.str("reason", s.Reason)
		o.b = so.close()
	}
	o.strsOmit("frameworks", p.Frameworks)
	o.strsOmit("notes", p.Notes)
	if len(p.AllowNet) > 0 {
		o.key("allow_net")
		o.b = append(o.b, '[')
		for i := range p.AllowNet {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			ao := openObj(o.b)
			ao.str("host", p.AllowNet[i].Host)
			ao.str("reason", p.AllowNet[i].Reason)
			o.b = ao.close()
		}
		o.b = append(o.b, ']')
	}
	return o.close()
}

// appendFailure appends f as json.Marshal writes it (null for nil).
func appendFailure(dst []byte, f *Failure) ([]byte, error) {
	if f == nil {
		return append(dst, "null"...), nil
	}
	o := openObj(dst)
	o.str("code", f.Code)
	o.str("message", f.Message)
	o.strsOmit("suggestions", f.Suggestions)
	o.key("retryable")
	o.b = strconv.AppendBool(o.b, f.Retryable)
	o.strsOmit("evidence", f.Evidence)
	o.key("confidence")
	var ok bool
	if o.b, ok = appendJSONFloat(o.b, f.Confidence, true); !ok {
		return o.b, unsupportedFloat(f.Confidence)
	}
	if len(f.Details) > 0 {
		o.key("details")
		keys := make([]string, 0, len(f.Details))
		for k := range f.Details {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		o.b = append(o.b, '{')
		for i, k := range keys {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = appendJSONString(o.b, k)
			o.b = append(o.b, ':')
			o.b = appendJSONString(o.b, f.Details[k])
		}
		o.b = append(o.b, '}')
	}
	o.strOmit("plugin", f.Plugin)
	o.strOmit("plugin_version", f.PluginVersion)
	return o.close(), nil
}

// parseOutputError is the error json.Marshal returns for out, which
// ParseOutput.AppendJSON refused: the first NaN or infinity in the order
// encoding/json writes the fields (metrics carry theirs, see Metrics).
func parseOutputError(out *ParseOutput) error {
	for i := range out.Updates {
		p := &out.Updates[i]
		for _, f := range []float64{p.Percentage, p.EpochExact, p.ETASeconds, p.Rate} {
			if !finite(f) {
				return unsupportedFloat(f)
			}
		}
	}
	return &jsonError{"json: unsupported value"}
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// unsupportedFloat words the error as json.Marshal does.
func unsupportedFloat(f float64) error {
	return &jsonError{"json: unsupported value: " + strconv.FormatFloat(f, 'g', -1, 64)}
}

// appendErrorEnvelope appends {"error":msg} as json.Marshal writes an Envelope
// with only Error set ({} when msg is empty).
func appendErrorEnvelope(dst []byte, msg string) []byte {
	if msg == "" {
		return append(dst, "{}"...)
	}
	dst = append(dst, `{"error":`...)
	dst = appendJSONString(dst, msg)
	return append(dst, '}')
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
