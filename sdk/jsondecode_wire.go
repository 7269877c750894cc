package sdk

import (
	"strconv"
	"strings"
)

// The wire types' decoders, on the decoder of jsondecode.go.

// unmarshalPlanInput is json.Unmarshal([]byte(data), v) for a zero *v,
// without reflection. Strings in v may share memory with data.
func unmarshalPlanInput(data string, v *PlanInput) error {
	return decodeJSON(data, func(d *jsonDec) bool { return d.planInput(v) }, func() { *v = PlanInput{} })
}

// unmarshalClassifyInput is json.Unmarshal([]byte(data), v) for a zero *v,
// without reflection. Strings in v may share memory with data.
func unmarshalClassifyInput(data string, v *ClassifyInput) error {
	return decodeJSON(data, func(d *jsonDec) bool { return d.classifyInput(v) }, func() { *v = ClassifyInput{} })
}

// unmarshalParseInput is json.Unmarshal([]byte(data), v) for a zero *v,
// without reflection. Strings in v may share memory with data.
func unmarshalParseInput(data string, v *ParseInput) error {
	return decodeJSON(data, func(d *jsonDec) bool { return d.parseInput(v) }, func() { *v = ParseInput{} })
}

// ---- values -------------------------------------------------------------------

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
func decodeMap[V any](d *jsonDec, dst *map[string]V, field string, elem func(*V) bool) bool {
	switch d.peek() {
	case 'n':
		*dst = nil
		return d.literal("null")
	case '{':
	default:
		return d.typeError(field)
	}
	if *dst == nil {
		*dst = map[string]V{}
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

func (d *jsonDec) planInput(v *PlanInput) bool {
	return d.fields("PlanInput", func(key string) bool {
		switch f := fieldName(key, planInputFields); f {
		case "command":
			return d.strings(&v.Command, f)
		case "workdir":
			return d.string(&v.Workdir, f)
		case "script_path":
			return d.string(&v.ScriptPath, f)
		case "script_text":
			return d.string(&v.ScriptText, f)
		case "task_description":
			return d.string(&v.TaskDescription, f)
		case "host":
			return d.hostFacts(&v.Host)
		case "experience":
			return decodePtr(d, &v.Experience, d.experience)
		default:
			return d.skip()
		}
	})
}

func (d *jsonDec) hostFacts(v *HostFacts) bool {
	return d.fields("host", func(key string) bool {
		switch f := fieldName(key, hostFactsFields); f {
		case "os":
			return d.string(&v.OS, f)
		case "arch":
			return d.string(&v.Arch, f)
		case "cpus":
			return d.int(&v.CPUs, f)
		case "memory_bytes":
			return d.uint64(&v.MemoryBytes, f)
		case "disk_free_bytes":
			return d.uint64(&v.DiskFreeBytes, f)
		case "docker_available":
			return d.bool(&v.DockerAvailable, f)
		case "docker_runtimes":
			return d.strings(&v.DockerRuntimes, f)
		case "gpus":
			return decodeSlice(d, &v.GPUs, f, d.gpu)
		default:
			return d.skip()
		}
	})
}

func (d *jsonDec) gpu(v *GPU) bool {
	return d.fields("gpus", func(key string) bool {
		switch f := fieldName(key, gpuFields); f {
		case "vendor":
			return d.string(&v.Vendor, f)
		case "name":
			return d.string(&v.Name, f)
		case "memory_bytes":
			return d.uint64(&v.MemoryBytes, f)
		default:
			return d.skip()
		}
	})
}

func (d *jsonDec) experience(v *Experience) bool {
	return d.fields("experience", func(key string) bool {
		switch f := fieldName(key, experienceFields); f {
		case "runs":
			return d.int(&v.Runs, f)
		case "succeeded":
			return d.int(&v.Succeeded, f)
		case "failed":
			return d.int(&v.Failed, f)
		case "failure_codes":
			return decodeMap(d, &v.FailureCodes, f, func(n *int) bool { return d.int(n, f) })
		case "median_duration_seconds":
			return d.float64(&v.MedianDurationSeconds, f)
		case "max_peak_rss_bytes":
			return d.uint64(&v.MaxPeakRSSBytes, f)
		case "last_failure":
			return decodePtr(d, &v.LastFailure, d.failure)
		default:
			return d.skip()
		}
	})
}

func (d *jsonDec) failure(v *Failure) bool {
	return d.fields("failure", func(key string) bool {
		switch f := fieldName(key, failureFields); f {
		case "code":
			return d.string(&v.Code, f)
		case "message":
			return d.string(&v.Message, f)
		case "suggestions":
			return d.strings(&v.Suggestions, f)
		case "retryable":
			return d.bool(&v.Retryable, f)
		case "evidence":
			return d.strings(&v.Evidence, f)
		case "confidence":
			return d.float64(&v.Confidence, f)
		case "details":
			return decodeMap(d, &v.Details, f, func(s *string) bool { return d.string(s, f) })
		case "plugin":
			return d.string(&v.Plugin, f)
		default:
			return d.skip()
		}
	})
}

func (d *jsonDec) classifyInput(v *ClassifyInput) bool {
	return d.fields("ClassifyInput", func(key string) bool {
		switch f := fieldName(key, classifyInputFields); f {
		case "exit_code":
			return d.int(&v.ExitCode, f)
		case "signal":
			return d.string(&v.Signal, f)
		case "oom_killed":
			return d.bool(&v.OOMKilled, f)
		case "timed_out":
			return d.bool(&v.TimedOut, f)
		case "cancelled":
			return d.bool(&v.Cancelled, f)
		case "stalled":
			return d.bool(&v.Stalled, f)
		case "smoke":
			return d.bool(&v.Smoke, f)
		case "sandbox":
			return d.string(&v.Sandbox, f)
		case "command":
			return d.strings(&v.Command, f)
		case "limits":
			return d.limits(&v.Limits)
		case "stdout_tail":
			return d.string(&v.StdoutTail, f)
		case "stderr_tail":
			return d.string(&v.StderrTail, f)
		case "sandbox_error":
			return d.string(&v.SandboxError, f)
		case "progress":
			return decodePtr(d, &v.Progress, d.progress)
		case "peak_rss_bytes":
			return d.uint64(&v.PeakRSSBytes, f)
		case "duration_seconds":
			return d.float64(&v.DurationSeconds, f)
		default:
			return d.skip()
		}
	})
}

func (d *jsonDec) limits(v *Limits) bool {
	return d.fields("limits", func(key string) bool {
		switch f := fieldName(key, limitsFields); f {
		case "memory_bytes":
			return d.int64(&v.MemoryBytes, f)
		case "timeout_seconds":
			return d.float64(&v.TimeoutSeconds, f)
		case "cpus":
			return d.float64(&v.CPUs, f)
		case "pids":
			return d.int64(&v.Pids, f)
		default:
			return d.skip()
		}
	})
}

func (d *jsonDec) parseInput(v *ParseInput) bool {
	return d.fields("ParseInput", func(key string) bool {
		switch f := fieldName(key, parseInputFields); f {
		case "lines":
			return d.strings(&v.Lines, f)
		case "last":
			return decodePtr(d, &v.Last, d.progress)
		default:
			return d.skip()
		}
	})
}

func (d *jsonDec) progress(v *Progress) bool {
	return d.fields("progress", func(key string) bool {
		switch f := fieldName(key, progressFields); f {
		case "step":
			return d.int64(&v.Step, f)
		case "total":
			return d.int64(&v.Total, f)
		case "percentage":
			return d.float64(&v.Percentage, f)
		case "phase":
			return d.string(&v.Phase, f)
		case "epoch":
			return d.int64(&v.Epoch, f)
		case "epoch_total":
			return d.int64(&v.EpochTotal, f)
		case "eta_seconds":
			return d.float64(&v.ETASeconds, f)
		case "rate":
			return d.float64(&v.Rate, f)
		case "rate_unit":
			return d.string(&v.RateUnit, f)
		case "metrics":
			return decodeMap(d, &v.Metrics, f, func(x *float64) bool { return d.float64(x, f) })
		case "message":
			return d.string(&v.Message, f)
		case "source":
			return d.string(&v.Source, f)
		default:
			return d.skip()
		}
	})
}
