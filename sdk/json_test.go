package sdk

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The guest's codec (jsondecode.go, jsonencode.go) against encoding/json,
// which the host uses: decoding must give what json.Unmarshal gives (and
// fail when it fails), encoding must give json.Marshal's bytes.

// decoders runs each guest decoder and json.Unmarshal on the same text.
var decoders = []struct {
	name string
	mine func(string) (any, error)
	std  func([]byte) (any, error)
}{
	{"PlanInput",
		func(s string) (any, error) { var v PlanInput; err := unmarshalPlanInput(s, &v); return v, err },
		func(b []byte) (any, error) { var v PlanInput; err := json.Unmarshal(b, &v); return v, err }},
	{"ClassifyInput",
		func(s string) (any, error) { var v ClassifyInput; err := unmarshalClassifyInput(s, &v); return v, err },
		func(b []byte) (any, error) { var v ClassifyInput; err := json.Unmarshal(b, &v); return v, err }},
	{"ParseInput",
		func(s string) (any, error) { var v ParseInput; err := unmarshalParseInput(s, &v); return v, err },
		func(b []byte) (any, error) { var v ParseInput; err := json.Unmarshal(b, &v); return v, err }},
}

// checkDecoders fails t if a decoder disagrees with encoding/json on s:
// both fail, or both succeed with deeply equal values.
func checkDecoders(t *testing.T, s string) {
	t.Helper()
	for _, d := range decoders {
		got, gerr := d.mine(s)
		want, werr := d.std([]byte(s))
		if (gerr == nil) != (werr == nil) || werr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decode %q\n got %#v, %v\nwant %#v, %v", d.name, s, got, gerr, want, werr)
		}
	}
}

var decodeCases = []string{
	// shapes
	`{}`, `null`, ` null `, `[]`, `""`, `1`, `true`, ``, ` `, `{`, `}`, `{}x`, `{} `, "\t{}\r\n", `{}{}`,
	`{"command":["python","train.py"],"host":{"os":"linux","arch":"amd64","cpus":16,"memory_bytes":68719476736,` +
		`"docker_available":true,"gpus":[{"vendor":"nvidia","name":"H100"}]},"experience":{"runs":3,"succeeded":2,` +
		`"failed":1,"failure_codes":{"CUDA_OOM":1}}}`,
	`{"exit_code":1,"limits":{"memory_bytes":8589934592},"stderr_tail":"…\nModuleNotFoundError: No module named 'torchvision'\n"}`,
	`{"lines":[" 45%|████▌     | 450/1000 [00:12<00:15, 36.50it/s]"],"last":{"step":400,"total":1000,"source":"tqdm"}}`,
	// every field of ClassifyInput, nested progress with metrics
	`{"exit_code":-9,"signal":"SIGKILL","oom_killed":true,"timed_out":true,"cancelled":false,"stalled":true,"smoke":true,` +
		`"sandbox":"docker","command":["a","b"],"limits":{"memory_bytes":1,"timeout_seconds":2.5,"cpus":0.5,"pids":7},` +
		`"stdout_tail":"o","stderr_tail":"e","sandbox_error":"x","progress":{"step":1,"total":2,"percentage":50,"phase":"p",` +
		`"epoch":1,"epoch_total":3,"eta_seconds":1e3,"rate":1.5,"rate_unit":"it/s","metrics":{"loss":0.1,"acc":1},` +
		`"message":"m","source":"s"},"peak_rss_bytes":18446744073709551615,"duration_seconds":12.25}`,
	// every field of PlanInput, last_failure with details
	`{"command":[],"workdir":"/w","script_path":"t.py","script_text":"import torch\n","task_description":"d",` +
		`"host":{"os":"darwin","arch":"arm64","disk_free_bytes":5,"docker_runtimes":["runc","nvidia"],"gpus":[]},` +
		`"experience":{"median_duration_seconds":60.5,"max_peak_rss_bytes":9,"last_failure":{"code":"CUDA_OOM",` +
		`"message":"m","suggestions":["a"],"retryable":true,"evidence":["e"],"confidence":0.9,"details":{"k":"v"},"plugin":"p"}}}`,
	// unknown fields of every kind, before and after known ones
	`{"x":{"a":[1,{"b":null}],"c":"d"},"command":["a"],"y":[[[]]],"z":-0.5e-3,"w":true,"v":null,"u":"\u00e9"}`,
	`{"lines":["a"],"extra":{"lines":["b"]},"last":{"unknown":[1,2],"step":3}}`,
	// case-insensitive keys, Unicode folding (ſ is s, K is k), escapes in keys
	`{"COMMAND":["a"],"Host":{"OS":"x","Docker_Available":true}}`,
	`{"Lines":["a"],"LAST":{"Step":1,"ſtep":2,"ſource":"x"}}`,
	`{"exit_code":1,"EXIT_CODE":2}`, `{"EXIT_CODE":2,"exit_code":1}`,
	`{"\u006cines":["a"],"l\u0069nes":["b"]}`, `{"lines\u0000":["a"]}`, `{"linesX":["a"]}`, `{"":1}`,
	`{"experience":{"failure_codes":{"\u212aILLED":1}}}`, `{"host":{"gpus":[{"Name":"x","NAME":"y"}]}}`,
	// null everywhere
	`{"command":null,"workdir":null,"host":null,"experience":null}`,
	`{"lines":null,"last":null}`, `{"last":{"metrics":null,"step":null,"phase":null}}`,
	`{"lines":[null,"a",null]}`, `{"last":{"metrics":{"a":null,"b":1}}}`,
	`{"experience":{"failure_codes":{"A":null},"last_failure":{"details":{"k":null}}}}`,
	`{"host":{"gpus":[null,{"vendor":"v"},null]}}`, `{"exit_code":null,"oom_killed":null,"limits":null,"progress":null}`,
	// repeated keys: scalars replaced, maps merged, pointers reused, slices reuse elements
	`{"lines":["a","b"],"lines":["c"]}`, `{"lines":["a","b"],"lines":[]}`, `{"lines":["a"],"lines":null}`,
	`{"lines":["a","b","c"],"lines":["x"],"lines":[null,null]}`,
	`{"last":{"step":1,"metrics":{"a":1}},"last":{"total":2,"metrics":{"b":2}}}`,
	`{"last":{"step":1},"last":null,"last":{"total":2}}`,
	`{"host":{"gpus":[{"vendor":"a","name":"x"},{"vendor":"b","name":"y"}]},"host":{"gpus":[{"vendor":"c"}]}}`,
	`{"host":{"gpus":[{"vendor":"a","name":"x"},{"vendor":"b","name":"y"}]},"host":{"gpus":[{"vendor":"c"}]},` +
		`"host":{"gpus":[{"vendor":"d"},{"vendor":"e"}]}}`,
	`{"host":{"gpus":[{"name":"x"},{"name":"y"}]},"host":{"gpus":[]},"host":{"gpus":[{"vendor":"e"}]}}`,
	`{"experience":{"runs":1,"last_failure":{"code":"A"}},"experience":{"failed":2,"last_failure":{"message":"m"}}}`,
	`{"progress":{"step":1},"progress":{"total":2}}`,
	// wrong types: errors (decoding goes on)
	`{"command":"python"}`, `{"command":[1]}`, `{"command":{}}`, `{"host":[]}`, `{"host":"x"}`, `{"host":1}`,
	`{"experience":5}`, `{"experience":[]}`, `{"exit_code":"1"}`, `{"exit_code":true}`, `{"oom_killed":1}`,
	`{"oom_killed":"true"}`, `{"signal":1}`, `{"signal":false}`, `{"signal":{}}`, `{"lines":"a"}`, `{"lines":[[]]}`,
	`{"last":[]}`, `{"last":{"metrics":[]}}`, `{"last":{"metrics":{"a":"1"}}}`, `{"last":{"metrics":{"a":{}}}}`,
	`{"experience":{"failure_codes":{"a":1.5}}}`, `{"experience":{"last_failure":{"details":{"k":1}}}}`,
	`{"exit_code":"x","signal":"S"}`,
	// numbers
	`{"exit_code":-0}`, `{"exit_code":1.0}`, `{"exit_code":1e2}`, `{"exit_code":9223372036854775807}`,
	`{"exit_code":9223372036854775808}`, `{"exit_code":-9223372036854775808}`, `{"exit_code":-9223372036854775809}`,
	`{"peak_rss_bytes":-1}`, `{"peak_rss_bytes":-0}`, `{"peak_rss_bytes":18446744073709551616}`, `{"peak_rss_bytes":1.5}`,
	`{"duration_seconds":1e308}`, `{"duration_seconds":1e309}`, `{"duration_seconds":-1e400}`, `{"duration_seconds":1e-400}`,
	`{"duration_seconds":4.9e-324}`, `{"duration_seconds":0.1E+2}`, `{"duration_seconds":-0.0}`,
	`{"duration_seconds":123456789012345678901234567890}`, `{"last":{"step":1e400}}`, `{"last":{"rate":"1"}}`,
	`{"exit_code":01}`, `{"exit_code":-}`, `{"exit_code":+1}`, `{"exit_code":.5}`, `{"exit_code":1.}`, `{"exit_code":1e}`,
	`{"exit_code":1e+}`, `{"exit_code":-01}`, `{"exit_code":0x1}`, `{"exit_code":NaN}`, `{"exit_code":Infinity}`,
	`{"x":1.5e+308,"y":-0}`, `{"x":1e999}`,
	// literals
	`{"oom_killed":tru}`, `{"oom_killed":True}`, `{"oom_killed":nul}`, `{"oom_killed":false}`, `{"x":nulll}`,
	// strings
	`{"signal":"\"\\\/\b\f\n\r\t"}`, `{"signal":"\u0041\u00e9\u4e2d\ud83d\ude00"}`, `{"signal":"\ud800"}`,
	`{"signal":"\ud800\u0041"}`, `{"signal":"\udc00\ud800"}`, `{"signal":"\ud83d\ude00\ud83d"}`, `{"signal":"\uDBFF\uDFFF"}`,
	`{"signal":"\ud800\ud800\udc00"}`, `{"signal":"\u0000"}`, `{"signal":"\'"}`, `{"signal":"\x"}`, `{"signal":"\u12"}`,
	`{"signal":"\u12g4"}`, `{"signal":"a` + "\x00" + `"}`, `{"signal":"a` + "\x1f" + `"}`, `{"signal":"a` + "\x7f" + `"}`,
	`{"signal":"` + "\xff\xfe" + `"}`, `{"signal":"` + "\xed\xa0\x80" + `"}`, `{"signal":"` + "\xe2\x82" + `"}`,
	`{"signal":"` + "\xef\xbf\xbd" + `"}`, `{"signal":"é` + "\xc3" + `"}`, `{"signal":"<>&\u2028\u2029"}`,
	`{"signal":"unterminated}`, `{"signal":"\`, `{"sig` + "\xff" + `nal":"a"}`, `{"lines":["` + strings.Repeat("x", 100) + `\n"]}`,
	// syntax
	`{"a" 1}`, `{"a":1,}`, `{,}`, `{"a":1 "b":2}`, `{a:1}`, `{'a':1}`, `{"a":[1,]}`, `{"a":[,1]}`, `{"a":[1 2]}`,
	`{"a":}`, `{"a"}`, `{"a":1}}`, `{"a":1]`, `{"a":[}`, "\ufeff{}", "{}\x00", `{"a":1}` + "\n\n",
	"{\"lines\":\v[]}", "{\"lines\":\f[]}", "{\"lines\":\u00a0[]}",
	// depth: encoding/json allows 10000 levels of nesting
	`{"x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	`{"x":` + strings.Repeat(`{"a":`, 9999) + `1` + strings.Repeat("}", 9999) + `}`,
	`{"x":` + strings.Repeat(`{"a":`, 10000) + `1` + strings.Repeat("}", 10000) + `}`,
}

func TestJSONDecodeMatchesEncodingJSON(t *testing.T) {
	for _, s := range decodeCases {
		checkDecoders(t, s)
	}
}

// TestJSONDecodeGenerated round-trips generated values of every input type
// (every field set in some of them) through json.Marshal.
func TestJSONDecodeGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3000; i++ {
		for _, v := range []any{new(PlanInput), new(ClassifyInput), new(ParseInput)} {
			fill(r, reflect.ValueOf(v).Elem(), 0)
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			checkDecoders(t, string(b))
		}
	}
}

// TestJSONFieldNames: the decoders' name tables list exactly the JSON
// names of their types' fields (a field added to wire.go must be added
// to the codec; the generated tests then cover it).
func TestJSONFieldNames(t *testing.T) {
	for _, c := range []struct {
		v     any
		names []string
	}{
		{PlanInput{}, planInputFields}, {HostFacts{}, hostFactsFields}, {GPU{}, gpuFields},
		{Experience{}, experienceFields}, {Failure{}, failureFields}, {ClassifyInput{}, classifyInputFields},
		{Limits{}, limitsFields}, {ParseInput{}, parseInputFields}, {Progress{}, progressFields},
	} {
		if got := jsonNames(reflect.TypeOf(c.v)); !slices.Equal(got, c.names) {
			t.Errorf("%T: fields %q, codec knows %q", c.v, got, c.names)
		}
	}
}

func jsonNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}

func TestJSONEncodeMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	check := func(v any, got []byte, gerr error) {
		t.Helper()
		want, werr := json.Marshal(v)
		if (gerr == nil) != (werr == nil) || werr == nil && !bytes.Equal(got, want) ||
			werr != nil && gerr.Error() != werr.Error() {
			t.Fatalf("encode %#v\n got %s, %v\nwant %s, %v", v, got, gerr, want, werr)
		}
	}
	for i := 0; i < 3000; i++ {
		var m Manifest
		fill(r, reflect.ValueOf(&m).Elem(), 0)
		check(m, appendManifest(nil, &m), nil)
		var p PlanOutput
		fill(r, reflect.ValueOf(&p).Elem(), 0)
		check(p, appendPlanOutput(nil, &p), nil)
		var f *Failure
		fill(r, reflect.ValueOf(&f).Elem(), 0)
		b, err := appendFailure(nil, f)
		check(f, b, err)
	}
	check(Manifest{}, appendManifest(nil, &Manifest{}), nil)
	check(PlanOutput{}, appendPlanOutput(nil, &PlanOutput{}), nil)
	check(PlanOutput{Recommendation: &Recommendation{}, Smoke: &Smoke{}, Risks: []Risk{{}}},
		appendPlanOutput(nil, &PlanOutput{Recommendation: &Recommendation{}, Smoke: &Smoke{}, Risks: []Risk{{}}}), nil)
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 1e21, 1e-7, 123456789.125} {
		f := &Failure{Confidence: x, Details: map[string]string{"<b>": "a&b"}}
		b, err := appendFailure(nil, f)
		check(f, b, err)
		for _, po := range []ParseOutput{
			{Updates: []Progress{{Rate: x}}},
			{Updates: []Progress{{Step: 1}, {Metrics: map[string]float64{"b": x, "a": math.Inf(-1), "c": math.NaN()}}}},
			{Updates: []Progress{{Percentage: 1, ETASeconds: x, Rate: math.NaN()}}},
		} {
			got, err := po.AppendJSON(nil)
			if err != nil {
				err = parseOutputError(&po)
			}
			check(po, got, err)
		}
	}
}

// FuzzJSONDecode compares the decoders with encoding/json on any text, and
// on texts near the shapes the host sends.
func FuzzJSONDecode(f *testing.F) {
	for _, s := range decodeCases {
		if len(s) < 1000 {
			f.Add(s)
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 20; i++ {
		for _, v := range []any{new(PlanInput), new(ClassifyInput), new(ParseInput)} {
			fill(r, reflect.ValueOf(v).Elem(), 0)
			b, _ := json.Marshal(v)
			f.Add(string(b))
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkDecoders(t, s)
	})
}

// fill sets v to a random value; strings, numbers and shapes are drawn
// from the awkward cases.
func fill(r *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(randString(r))
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int64:
		v.SetInt([]int64{0, 0, 1, -1, 42, math.MaxInt64, math.MinInt64, r.Int64(), -r.Int64N(1 << 40)}[r.IntN(9)])
	case reflect.Uint64:
		v.SetUint([]uint64{0, 0, 1, math.MaxUint64, r.Uint64(), r.Uint64N(1 << 40)}[r.IntN(6)])
	case reflect.Float64:
		v.SetFloat([]float64{0, 0, 1, -1.5, 0.1, 1e-7, 1e21, 1e-300, math.MaxFloat64, math.SmallestNonzeroFloat64,
			math.Copysign(0, -1), r.Float64() * 1e6, r.NormFloat64(), float64(r.Int64())}[r.IntN(14)])
	case reflect.Pointer:
		if r.IntN(3) == 0 || depth > 3 {
			v.SetZero()
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(r, v.Elem(), depth+1)
	case reflect.Slice:
		switch n := r.IntN(6); n {
		case 0:
			v.SetZero()
		default:
			s := reflect.MakeSlice(v.Type(), n-1, n-1)
			for i := range n - 1 {
				fill(r, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		switch n := r.IntN(6); n {
		case 0:
			v.SetZero()
		default:
			m := reflect.MakeMap(v.Type())
			for range n - 1 {
				k := reflect.New(v.Type().Key()).Elem()
				e := reflect.New(v.Type().Elem()).Elem()
				fill(r, k, depth+1)
				fill(r, e, depth+1)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if r.IntN(4) != 0 {
				fill(r, v.Field(i), depth+1)
			}
		}
	default:
		panic("fill: " + v.Type().String())
	}
}

var randStrings = []string{
	"", "", "plain", "python", "train.py", `quote " and \ backslash`, "tab\tnl\nnul\x00 ctl\x1f del\x7f",
	"<html> & </html>", "bar ████▌     | 45%", "bad utf8 \xff\xfe end", "\xed\xa0\x80 surrogate", "sep \u2028 \u2029",
	"emoji 😀 pair", "\b\f\r", "é", "\ufffd", "CUDA_OOM", "ſtep", "K", "/", "\\u0041",
}

func randString(r *rand.Rand) string {
	if r.IntN(4) == 0 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	}
	return randStrings[r.IntN(len(randStrings))]
}

// FuzzJSONDecodeField puts a fuzzed key and value in every object of the
// input types.
func FuzzJSONDecodeField(f *testing.F) {
	for _, kv := range [][2]string{
		{"step", "1"}, {"STEP", "1.5"}, {"ſtep", "-0"}, {"metrics", `{"a":1}`}, {"lines", `["a",null]`},
		{"gpus", `[{"name":"x"}]`}, {"vendor", `"\u00e9"`}, {"last_failure", `{"code":"A"}`}, {"details", `{"k":"v"}`},
		{"memory_bytes", "18446744073709551615"}, {"pids", "-9223372036854775808"}, {"confidence", "1e400"},
		{"failure_codes", `{"A":1,"A":null}`}, {"command", `[]`}, {`\u0063ommand`, `["x"]`}, {"smoke", "true"},
	} {
		f.Add(kv[0], kv[1])
	}
	f.Fuzz(func(t *testing.T, key, val string) {
		m := `"` + key + `":` + val
		for _, s := range []string{
			`{` + m + `}`, `{"last":{` + m + `},"lines":["a"]}`, `{"host":{"gpus":[{` + m + `},{}]}}`,
			`{"experience":{` + m + `,"last_failure":{` + m + `}}}`, `{"progress":{` + m + `,"metrics":{` + m + `}}}`,
			`{"limits":{` + m + `},"host":{` + m + `}}`, `{"experience":{"failure_codes":{` + m + `}}}`,
		} {
			checkDecoders(t, s)
		}
	})
}

// DecodeJSONObject must read what json.Decoder.Decode into a
// map[string]any reads, giving the members in order.
func checkDecodeObject(t *testing.T, s string) {
	t.Helper()
	if t := strings.TrimLeft(s, " \t\r\n"); t == "" || t[0] != '{' {
		return // parseRunbox only decodes objects
	}
	var want map[string]any
	werr := json.NewDecoder(strings.NewReader(s)).Decode(&want)
	var keys []string
	got := map[string]any{}
	ok := DecodeJSONObject(s, func(k string, v JSONValue) {
		keys = append(keys, k)
		got[k] = v.Interface()
	})
	if !ok {
		got = nil
	} else if ks := objectKeys(s); !slices.Equal(keys, ks) {
		t.Errorf("DecodeJSONObject(%q): members %q, want %q", s, keys, ks)
	}
	if ok && werr != nil && (strings.Contains(s, "NaN") || strings.Contains(s, "Infinity")) {
		return // Python's bare NaN and Infinity: read on purpose (TestDecodeJSONObjectPythonNonFinite)
	}
	if ok != (werr == nil) || ok && !reflect.DeepEqual(got, want) {
		t.Errorf("DecodeJSONObject(%q)\n got %#v, %v\nwant %#v, %v", s, got, ok, want, werr)
	}
}

// The bare NaN, Infinity and -Infinity of Python's json.dumps read as
// numbers, at the top level and nested; anything near them is an error.
func TestDecodeJSONObjectPythonNonFinite(t *testing.T) {
	got := map[string]any{}
	ok := DecodeJSONObject(`{"loss": NaN, "gn": Infinity, "m": {"x": -Infinity, "y": [NaN]}}`, func(k string, v JSONValue) {
		got[k] = v.Interface()
	})
	isNaN := func(v any) bool { f, ok := v.(float64); return ok && math.IsNaN(f) }
	m, _ := got["m"].(map[string]any)
	y, _ := m["y"].([]any)
	if !ok || !isNaN(got["loss"]) || got["gn"] != math.Inf(1) || m["x"] != math.Inf(-1) || len(y) != 1 || !isNaN(y[0]) {
		t.Fatalf("%v: %#v", ok, got)
	}
	for _, bad := range []string{`{"a": nan}`, `{"a": NaNa}`, `{"a": Inf}`, `{"a": -Infinit}`, `{"a": +Infinity}`, `{"a": -NaN}`, `{"a": N`} {
		if DecodeJSONObject(bad, func(string, JSONValue) {}) {
			t.Errorf("%s read", bad)
		}
	}
}

var objectCases = []string{
	`{}`, `{} trailing`, `{}}`, ` {"a":1}`, `{"step":1,"total":2}`, `{"a":1,"a":"x"}`, `{"metrics":{"loss":0.5,"acc":"0.9"}}`,
	`{"a":[1,"b",null,true,false,{"c":[]}],"d":{}}`, `{"a":1e400}`, `{"a":[1e400]}`, `{"a":-0}`, `{"a":1E-2}`, `{"a":01}`,
	`{"a":1.}`, `{"a":.5}`, `{"a":-}`, `{"a":+1}`, `{"a":tru}`, `{"a":nul}`, `{"a":}`, `{"a" 1}`, `{a:1}`, `{"a":1,}`,
	`{"a":[1,]}`, `{"a":[,]}`, `{"a":1`, `{"a":"b`, `{"a":"\u00e9\ud83d\ude00\ud800\udc00x\ud800"}`, `{"a":"\'"}`,
	`{"a":"\u12"}`, `{"a":"\u\u0041"}`, `{"a":"\x"}`, `{"a":"` + "\x01" + `"}`, `{"a":"` + "\xff\xed\xa0\x80é" + `"}`,
	`{"\u0073tep":3}`, `{"a":"\"\\\/\b\f\n\r\t"}`, `{"phase":"train","step":5,"total":10,"x":{"y":[1,2,{"z":null}]}} tail`,
	`{"a":1}{"b":2}`, "{\"a\":1}\x00", `{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	`{"a":` + strings.Repeat(`{"b":`, 9998) + `1` + strings.Repeat("}", 9998) + `}`,
	`{"a":` + strings.Repeat(`{"b":`, 9999) + `1` + strings.Repeat("}", 9999) + `}`,
}

func TestDecodeJSONObjectMatchesEncodingJSON(t *testing.T) {
	for _, s := range objectCases {
		checkDecodeObject(t, s)
	}
}

func FuzzDecodeJSONObject(f *testing.F) {
	for _, s := range objectCases {
		if len(s) < 1000 {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkDecodeObject(t, s)
		checkDecodeObject(t, "{"+s)
		checkDecodeObject(t, `{"a":`+s+`}`)
	})
}

// objectKeys lists the keys of the object at the start of s in order,
// repeated ones included, as json.Decoder's tokens give them.
func objectKeys(s string) []string {
	dec := json.NewDecoder(strings.NewReader(s))
	var keys []string
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		keys = append(keys, tok.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
	}
	return keys
}

// parseFloat must give strconv.ParseFloat's value, bit for bit (-0
// included), for every JSON number literal.
func checkParseFloat(t *testing.T, lit string) {
	t.Helper()
	d := jsonDec{s: lit}
	if n, ok := d.number(); !ok || n != lit {
		return // not one number literal
	}
	got, gerr := parseFloat(lit)
	want, werr := strconv.ParseFloat(lit, 64)
	if (gerr == nil) != (werr == nil) || math.Float64bits(got) != math.Float64bits(want) {
		t.Errorf("parseFloat(%q) = %v, %v; strconv: %v, %v", lit, got, gerr, want, werr)
	}
}

var floatCases = []string{
	"0", "-0", "1", "-1", "0.1", "0.5", "-0.0", "123456789012345", "1234567890123456", "999999999999999",
	"0.000000000000001", "0.0000000000000001", "9007199254740993", "1.7976931348623157", "3.141592653589793",
	"0.3", "2.675", "1e2", "1E-2", "1e400", "-1e-400", "4.9e-324", "0.1e1", "100000000000000.5", "12.000",
}

func TestParseFloat(t *testing.T) {
	for _, s := range floatCases {
		checkParseFloat(t, s)
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 100000 {
		lit := strconv.FormatInt(r.Int64N(1e15), 10)
		if k := r.IntN(17); k > 0 && k < len(lit) {
			lit = lit[:len(lit)-k] + "." + lit[len(lit)-k:]
		}
		if r.IntN(2) == 0 {
			lit = "-" + lit
		}
		checkParseFloat(t, lit)
	}
}

func FuzzParseFloat(f *testing.F) {
	for _, s := range floatCases {
		f.Add(s)
	}
	f.Fuzz(checkParseFloat)
}
