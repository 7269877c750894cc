package sdk

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A reflection-free JSON decoder for the payloads the host sends a guest:
// PlanInput, ClassifyInput and ParseInput. It exists so that a guest module
// does not link encoding/json (and with it reflect and fmt), which made up
// about a third of each built-in module, and so about a third of the time
// to load it: wazero validates and decodes the whole module on every load,
// compilation cache hit or not.
//
// unmarshalPlanInput and friends behave as json.Unmarshal does for these
// types, down to its quirks: the whole input is checked first (strict JSON
// grammar, nesting at most 10000 deep; on a syntax error nothing is
// written); object keys match field names exactly or else under Unicode
// case folding (so "STEP" and "ſtep" set Step); unknown keys are skipped;
// null leaves a string, number, bool or struct alone and sets a slice, map
// or pointer to nil; a value of the wrong type (or a number that does not
// fit) is an error, but decoding goes on and the first such error is
// returned; a repeated key decodes again into the same field (pointers and
// maps are reused, slices reuse their elements, as encoding/json's do);
// invalid UTF-8 and lone surrogates in strings become U+FFFD. The tests in
// json_test.go compare it with encoding/json on tables, generated values
// and fuzzed input.

// jsonMaxDepth is encoding/json's limit on nesting.
const jsonMaxDepth = 10000

// jsonError is a syntax or type error of the decoder.
type jsonError struct {
	msg string
}

func (e *jsonError) Error() string { return e.msg }

// jsonDec reads one JSON text. Its methods that decode into a value assume
// the text was checked by valid first.
type jsonDec struct {
	s     string
	i     int
	depth int
	err   error // first type error: decoding goes on, as in encoding/json
}

// unmarshalPlanInput is json.Unmarshal([]byte(data), v) without reflection.
func unmarshalPlanInput(data string, v *PlanInput) error {
	return unmarshalWith(data, func(d *jsonDec) { d.planInput(v) })
}

// unmarshalClassifyInput is json.Unmarshal([]byte(data), v) without reflection.
func unmarshalClassifyInput(data string, v *ClassifyInput) error {
	return unmarshalWith(data, func(d *jsonDec) { d.classifyInput(v) })
}

// unmarshalParseInput is json.Unmarshal([]byte(data), v) without
// reflection. Strings in v may share memory with data.
func unmarshalParseInput(data string, v *ParseInput) error {
	return unmarshalWith(data, func(d *jsonDec) { d.parseInput(v) })
}

func unmarshalWith(data string, decode func(*jsonDec)) error {
	d := jsonDec{s: data}
	if err := d.valid(); err != nil {
		return err
	}
	d.i = 0
	d.ws()
	if d.s[d.i] == 'n' { // a top-level null changes nothing
		return nil
	}
	decode(&d)
	return d.err
}

// ---- syntax -------------------------------------------------------------------

// valid checks that d.s is exactly one JSON value, with white space around.
func (d *jsonDec) valid() error {
	if !d.skip() {
		return d.syntaxError()
	}
	d.ws()
	if d.i != len(d.s) {
		return d.syntaxError()
	}
	return nil
}

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

// skip reads one value (after optional white space) and reports whether
// it is valid JSON; on false d.i is where the error is.
func (d *jsonDec) skip() bool {
	d.ws()
	switch c := d.peek(); {
	case c == '{', c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		if d.depth++; d.depth > jsonMaxDepth {
			return false
		}
		d.i++
		d.ws()
		if d.peek() == end {
			d.i++
			d.depth--
			return true
		}
		for {
			if c == '{' {
				d.ws()
				if _, ok := d.scanString(); !ok {
					return false
				}
				d.ws()
				if d.peek() != ':' {
					return false
				}
				d.i++
			}
			if !d.skip() {
				return false
			}
			d.ws()
			switch d.peek() {
			case ',':
				d.i++
			case end:
				d.i++
				d.depth--
				return true
			default:
				return false
			}
		}
	case c == '"':
		_, ok := d.scanString()
		return ok
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		_, ok := d.scanNumber()
		return ok
	}
	return false
}

func (d *jsonDec) literal(lit string) bool {
	if strings.HasPrefix(d.s[d.i:], lit) {
		d.i += len(lit)
		return true
	}
	// Point at the first wrong byte, as encoding/json does.
	for k := 0; d.i < len(d.s) && d.s[d.i] == lit[k]; k++ {
		d.i++
	}
	return false
}

// scanString reads a string at d.i and reports whether it needs unquoting
// (escapes or non-ASCII bytes) and whether it is valid.
func (d *jsonDec) scanString() (plain, ok bool) {
	d.i, plain, ok = ScanJSONString(d.s, d.i)
	return plain, ok
}

// ScanJSONString scans the JSON string whose opening quote is at s[i].
// end is the index after the closing quote, or where the string went wrong
// when !ok (i itself when s[i] is not a quote). plain reports a body that
// needs no unquoting (no escapes, ASCII only): s[i+1:end-1] as it is;
// otherwise UnquoteJSON decodes it. For guest code that scans JSON itself.
func ScanJSONString(s string, i int) (end int, plain, ok bool) {
	if i >= len(s) || s[i] != '"' {
		return i, false, false
	}
	i++
	plain = true
	for {
		if i < len(s) {
			i += plainRun(s[i:], false)
		}
		if i >= len(s) {
			return i, false, false
		}
		switch c := s[i]; {
		case c == '"':
			return i + 1, plain, true
		case c == '\\':
			plain = false
			i++
			if i >= len(s) {
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
		default: // >= 0x80: any byte goes, invalid UTF-8 included
			plain = false
			i++
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// scanNumber reads a number at d.i (strict JSON grammar).
func (d *jsonDec) scanNumber() (string, bool) {
	start := d.i
	end, ok := ScanJSONNumber(d.s, d.i)
	d.i = end
	if !ok {
		return "", false
	}
	return d.s[start:end], true
}

// ScanJSONNumber scans the JSON number at s[i] (strict grammar). end is
// the index after it, or where it went wrong when !ok. For guest code that
// scans JSON itself.
func ScanJSONNumber(s string, i int) (end int, ok bool) {
	digits := func() int {
		k := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i - k
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return i, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return i, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return i, false
		}
	}
	return i, true
}

// str reads a (valid) string at d.i and unquotes it.
func (d *jsonDec) str() string {
	start := d.i
	plain, _ := d.scanString()
	body := d.s[start+1 : d.i-1]
	if plain {
		return body
	}
	return UnquoteJSON(body)
}

// UnquoteJSON decodes the body of a valid JSON string (what is between
// the quotes) as encoding/json does: invalid UTF-8 and lone surrogates
// become U+FFFD. Guest code that scans JSON itself can use it instead of
// linking encoding/json.
func UnquoteJSON(s string) string {
	b := make([]byte, 0, len(s)+utf8.UTFMax)
	for r := 0; r < len(s); {
		if n := plainRun(s[r:], false); n > 0 {
			b = append(b, s[r:r+n]...)
			r += n
			continue
		}
		switch c := s[r]; {
		case c == '\\':
			switch e := s[r+1]; e {
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
				rr := hex4(s[r+2:])
				r += 6
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
				continue
			default: // " \ /
				b = append(b, e)
			}
			r += 2
		case c < utf8.RuneSelf: // not reached: plainRun takes the rest of ASCII
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRuneInString(s[r:])
			b = utf8.AppendRune(b, rr) // U+FFFD for an invalid byte
			r += size
		}
	}
	return string(b)
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

// ---- values -------------------------------------------------------------------

// typeError records that the value at d.i (of JSON kind what) does not fit
// the field name, and skips it.
func (d *jsonDec) typeError(field string) {
	what := "number"
	switch d.s[d.i] {
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
	d.skip()
}

func (d *jsonDec) mismatch(what, field string) {
	if d.err == nil {
		d.err = &jsonError{"json: cannot unmarshal " + what + " into field " + field + " at offset " + strconv.Itoa(d.i)}
	}
}

// null consumes a null (after white space) and reports whether there was one.
func (d *jsonDec) null() bool {
	d.ws()
	if d.s[d.i] == 'n' {
		d.i += 4
		return true
	}
	return false
}

// fields reads an object into a struct: field is called with each key and
// d at its value, and reports whether it read the value (false: unknown
// key, skipped). null leaves the struct alone.
func (d *jsonDec) fields(name string, field func(key string) bool) {
	if d.null() {
		return
	}
	if d.s[d.i] != '{' {
		d.typeError(name)
		return
	}
	d.members(func(key string) {
		if !field(key) {
			d.skip()
		}
	})
}

// members calls member for each key of the object at d.i, with d at its value.
func (d *jsonDec) members(member func(key string)) {
	d.i++
	d.ws()
	if d.s[d.i] == '}' {
		d.i++
		return
	}
	for {
		d.ws()
		key := d.str()
		d.ws()
		d.i++ // :
		d.ws()
		member(key)
		d.ws()
		d.i++
		if d.s[d.i-1] == '}' {
			return
		}
	}
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

func (d *jsonDec) string(dst *string, field string) {
	switch d.ws(); d.s[d.i] {
	case '"':
		*dst = d.str()
	case 'n':
		d.i += 4
	default:
		d.typeError(field)
	}
}

func (d *jsonDec) bool(dst *bool, field string) {
	switch d.ws(); d.s[d.i] {
	case 't':
		*dst = true
		d.i += 4
	case 'f':
		*dst = false
		d.i += 5
	case 'n':
		d.i += 4
	default:
		d.typeError(field)
	}
}

// number returns the number literal at d.i; ok is false (and the value
// skipped, the error recorded) for any other value but null, which is
// consumed with lit "".
func (d *jsonDec) number(field string) (lit string, ok bool) {
	d.ws()
	switch c := d.s[d.i]; {
	case c == 'n':
		d.i += 4
		return "", false
	case c == '-' || '0' <= c && c <= '9':
		lit, _ = d.scanNumber()
		return lit, true
	}
	d.typeError(field)
	return "", false
}

func (d *jsonDec) int64(dst *int64, field string) {
	d.intBits(dst, 64, field)
}

func (d *jsonDec) int(dst *int, field string) {
	var v int64
	if d.intBits(&v, strconv.IntSize, field) {
		*dst = int(v)
	}
}

func (d *jsonDec) intBits(dst *int64, bits int, field string) bool {
	lit, ok := d.number(field)
	if !ok {
		return false
	}
	v, err := strconv.ParseInt(lit, 10, bits)
	if err != nil {
		d.mismatch("number "+lit, field)
		return false
	}
	*dst = v
	return true
}

func (d *jsonDec) uint64(dst *uint64, field string) {
	lit, ok := d.number(field)
	if !ok {
		return
	}
	v, err := strconv.ParseUint(lit, 10, 64)
	if err != nil {
		d.mismatch("number "+lit, field)
		return
	}
	*dst = v
}

func (d *jsonDec) float64(dst *float64, field string) {
	lit, ok := d.number(field)
	if !ok {
		return
	}
	v, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		d.mismatch("number "+lit, field)
		return
	}
	*dst = v
}

// decodeSlice reads an array into *dst as encoding/json does: null sets
// nil; elements are decoded into the slice's existing elements (a repeated
// key reuses them), appended past its capacity; [] makes an empty slice.
func decodeSlice[T any](d *jsonDec, dst *[]T, field string, elem func(*T)) {
	if d.null() {
		*dst = nil
		return
	}
	if d.s[d.i] != '[' {
		d.typeError(field)
		return
	}
	s := *dst
	i := 0
	d.i++
	d.ws()
	if d.s[d.i] == ']' {
		d.i++
	} else {
		for {
			switch {
			case i < len(s):
			case i < cap(s):
				s = s[:i+1]
			default:
				var zero T
				s = append(s, zero)
			}
			elem(&s[i])
			i++
			d.ws()
			d.i++
			if d.s[d.i-1] == ']' {
				break
			}
		}
	}
	if i < len(s) {
		s = s[:i]
	}
	if i == 0 {
		s = make([]T, 0)
	}
	*dst = s
}

// decodeMap reads an object into a map with string keys: null sets nil;
// the map is made when nil and added to; each value is decoded into a zero
// V (so a null value stores the zero value).
func decodeMap[V any](d *jsonDec, dst *map[string]V, field string, elem func(*V)) {
	if d.null() {
		*dst = nil
		return
	}
	if d.s[d.i] != '{' {
		d.typeError(field)
		return
	}
	if *dst == nil {
		*dst = map[string]V{}
	}
	m := *dst
	d.members(func(key string) {
		var v V
		elem(&v)
		m[key] = v
	})
}

// decodePtr reads into **dst: null sets nil, anything else is decoded into
// the existing value, allocated when nil.
func decodePtr[T any](d *jsonDec, dst **T, decode func(*T)) {
	if d.null() {
		*dst = nil
		return
	}
	if *dst == nil {
		*dst = new(T)
	}
	decode(*dst)
}

func (d *jsonDec) strings(dst *[]string, field string) {
	decodeSlice(d, dst, field, func(s *string) { d.string(s, field) })
}

// ---- wire types -----------------------------------------------------------------

// The JSON names of each wire type's fields, for case-folded matching
// (TestJSONFieldNames checks them against the struct tags).
var (
	planInputFields  = []string{"command", "workdir", "script_path", "script_text", "task_description", "host", "experience"}
	hostFactsFields  = []string{"os", "arch", "cpus", "memory_bytes", "disk_free_bytes", "docker_available", "docker_runtimes", "gpus"}
	gpuFields        = []string{"vendor", "name", "memory_bytes"}
	experienceFields = []string{"runs", "succeeded", "failed", "failure_codes", "median_duration_seconds",
		"max_peak_rss_bytes", "last_failure"}
	failureFields       = []string{"code", "message", "suggestions", "retryable", "evidence", "confidence", "details", "plugin"}
	classifyInputFields = []string{"exit_code", "signal", "oom_killed", "timed_out", "cancelled", "stalled", "smoke",
		"sandbox", "command", "limits", "stdout_tail", "stderr_tail", "sandbox_error", "progress", "peak_rss_bytes",
		"duration_seconds"}
	limitsFields     = []string{"memory_bytes", "timeout_seconds", "cpus", "pids"}
	parseInputFields = []string{"lines", "last"}
	progressFields   = []string{"step", "total", "percentage", "phase", "epoch", "epoch_total", "eta_seconds", "rate",
		"rate_unit", "metrics", "message", "source"}
)

func (d *jsonDec) planInput(v *PlanInput) {
	d.fields("PlanInput", func(key string) bool {
		switch f := fieldName(key, planInputFields); f {
		case "command":
			d.strings(&v.Command, f)
		case "workdir":
			d.string(&v.Workdir, f)
		case "script_path":
			d.string(&v.ScriptPath, f)
		case "script_text":
			d.string(&v.ScriptText, f)
		case "task_description":
			d.string(&v.TaskDescription, f)
		case "host":
			d.hostFacts(&v.Host)
		case "experience":
			decodePtr(d, &v.Experience, d.experience)
		default:
			return false
		}
		return true
	})
}

func (d *jsonDec) hostFacts(v *HostFacts) {
	d.fields("host", func(key string) bool {
		switch f := fieldName(key, hostFactsFields); f {
		case "os":
			d.string(&v.OS, f)
		case "arch":
			d.string(&v.Arch, f)
		case "cpus":
			d.int(&v.CPUs, f)
		case "memory_bytes":
			d.uint64(&v.MemoryBytes, f)
		case "disk_free_bytes":
			d.uint64(&v.DiskFreeBytes, f)
		case "docker_available":
			d.bool(&v.DockerAvailable, f)
		case "docker_runtimes":
			d.strings(&v.DockerRuntimes, f)
		case "gpus":
			decodeSlice(d, &v.GPUs, f, d.gpu)
		default:
			return false
		}
		return true
	})
}

func (d *jsonDec) gpu(v *GPU) {
	d.fields("gpus", func(key string) bool {
		switch f := fieldName(key, gpuFields); f {
		case "vendor":
			d.string(&v.Vendor, f)
		case "name":
			d.string(&v.Name, f)
		case "memory_bytes":
			d.uint64(&v.MemoryBytes, f)
		default:
			return false
		}
		return true
	})
}

func (d *jsonDec) experience(v *Experience) {
	d.fields("experience", func(key string) bool {
		switch f := fieldName(key, experienceFields); f {
		case "runs":
			d.int(&v.Runs, f)
		case "succeeded":
			d.int(&v.Succeeded, f)
		case "failed":
			d.int(&v.Failed, f)
		case "failure_codes":
			decodeMap(d, &v.FailureCodes, f, func(n *int) { d.int(n, f) })
		case "median_duration_seconds":
			d.float64(&v.MedianDurationSeconds, f)
		case "max_peak_rss_bytes":
			d.uint64(&v.MaxPeakRSSBytes, f)
		case "last_failure":
			decodePtr(d, &v.LastFailure, d.failure)
		default:
			return false
		}
		return true
	})
}

func (d *jsonDec) failure(v *Failure) {
	d.fields("failure", func(key string) bool {
		switch f := fieldName(key, failureFields); f {
		case "code":
			d.string(&v.Code, f)
		case "message":
			d.string(&v.Message, f)
		case "suggestions":
			d.strings(&v.Suggestions, f)
		case "retryable":
			d.bool(&v.Retryable, f)
		case "evidence":
			d.strings(&v.Evidence, f)
		case "confidence":
			d.float64(&v.Confidence, f)
		case "details":
			decodeMap(d, &v.Details, f, func(s *string) { d.string(s, f) })
		case "plugin":
			d.string(&v.Plugin, f)
		default:
			return false
		}
		return true
	})
}

func (d *jsonDec) classifyInput(v *ClassifyInput) {
	d.fields("ClassifyInput", func(key string) bool {
		switch f := fieldName(key, classifyInputFields); f {
		case "exit_code":
			d.int(&v.ExitCode, f)
		case "signal":
			d.string(&v.Signal, f)
		case "oom_killed":
			d.bool(&v.OOMKilled, f)
		case "timed_out":
			d.bool(&v.TimedOut, f)
		case "cancelled":
			d.bool(&v.Cancelled, f)
		case "stalled":
			d.bool(&v.Stalled, f)
		case "smoke":
			d.bool(&v.Smoke, f)
		case "sandbox":
			d.string(&v.Sandbox, f)
		case "command":
			d.strings(&v.Command, f)
		case "limits":
			d.limits(&v.Limits)
		case "stdout_tail":
			d.string(&v.StdoutTail, f)
		case "stderr_tail":
			d.string(&v.StderrTail, f)
		case "sandbox_error":
			d.string(&v.SandboxError, f)
		case "progress":
			decodePtr(d, &v.Progress, d.progress)
		case "peak_rss_bytes":
			d.uint64(&v.PeakRSSBytes, f)
		case "duration_seconds":
			d.float64(&v.DurationSeconds, f)
		default:
			return false
		}
		return true
	})
}

func (d *jsonDec) limits(v *Limits) {
	d.fields("limits", func(key string) bool {
		switch f := fieldName(key, limitsFields); f {
		case "memory_bytes":
			d.int64(&v.MemoryBytes, f)
		case "timeout_seconds":
			d.float64(&v.TimeoutSeconds, f)
		case "cpus":
			d.float64(&v.CPUs, f)
		case "pids":
			d.int64(&v.Pids, f)
		default:
			return false
		}
		return true
	})
}

func (d *jsonDec) parseInput(v *ParseInput) {
	d.fields("ParseInput", func(key string) bool {
		switch f := fieldName(key, parseInputFields); f {
		case "lines":
			d.strings(&v.Lines, f)
		case "last":
			decodePtr(d, &v.Last, d.progress)
		default:
			return false
		}
		return true
	})
}

func (d *jsonDec) progress(v *Progress) {
	d.fields("progress", func(key string) bool {
		switch f := fieldName(key, progressFields); f {
		case "step":
			d.int64(&v.Step, f)
		case "total":
			d.int64(&v.Total, f)
		case "percentage":
			d.float64(&v.Percentage, f)
		case "phase":
			d.string(&v.Phase, f)
		case "epoch":
			d.int64(&v.Epoch, f)
		case "epoch_total":
			d.int64(&v.EpochTotal, f)
		case "eta_seconds":
			d.float64(&v.ETASeconds, f)
		case "rate":
			d.float64(&v.Rate, f)
		case "rate_unit":
			d.string(&v.RateUnit, f)
		case "metrics":
			decodeMap(d, &v.Metrics, f, func(x *float64) { d.float64(x, f) })
		case "message":
			d.string(&v.Message, f)
		case "source":
			d.string(&v.Source, f)
		default:
			return false
		}
		return true
	})
}
