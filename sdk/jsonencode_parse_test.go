package sdk

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var codecStrings = []string{
	"", "plain", `quote " and \ backslash`, "tab\tnl\nnul\x00 ctl\x1f del\x7f",
	"<html> & </html>", "bar ████▌     | 45%", "━━━ • ok", "bad utf8 \xff\xfe end",
	"sep \u2028 \u2029", "emoji 😀 pair", "\b\f\r", "exactly8", "sixteen bytes ok", "a\"",
	" 45%|████▌     | 450/1000 [00:12<00:15, 36.50it/s]", strings.Repeat("long line ", 30),
}

func codecInputs() []ParseInput {
	ins := []ParseInput{{}, {Lines: []string{}}, {Lines: codecStrings}}
	for _, p := range codecProgress() {
		p := p
		ins = append(ins, ParseInput{Lines: codecStrings[:3], Last: &p})
	}
	// the plugin's state (issue #24), as opaque as any line
	for _, s := range codecStrings {
		ins = append(ins, ParseInput{Lines: codecStrings[:1], State: s})
	}
	return ins
}

func codecProgress() []Progress {
	return []Progress{
		{},
		{Step: 45, Total: 100, Percentage: 45, Phase: "train", Epoch: 3, EpochTotal: 10,
			ETASeconds: 12.5, Rate: 36.5, RateUnit: "it/s", Message: "Epoch 3 <x> & y", Source: "tqdm",
			Metrics: map[string]float64{"loss": 0.4321, "acc": 0.88, "lr": 4.5e-05, "tiny": 1e-7, "big": 1e21, "neg": -2, "z": 0}},
		{Step: -1, Total: math.MaxInt64, Percentage: 1e-6, Rate: 123456789012345678901234.0, ETASeconds: math.Copysign(0, -1),
			Metrics: map[string]float64{"é\u2028": 1, "": 2}},
		{Metrics: map[string]float64{}},
	}
}

func TestParseCodecMatchesEncodingJSON(t *testing.T) {
	for _, in := range codecInputs() {
		want, _ := json.Marshal(in)
		got, err := in.AppendJSON(nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("AppendJSON(%+v)\n got %s (%v)\nwant %s", in, got, err, want)
		}
		checkDecode(t, string(want))
	}
	out := ParseOutput{Updates: codecProgress()}
	want, _ := json.Marshal(out)
	got, err := out.AppendJSON(nil)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("ParseOutput.AppendJSON\n got %s\nwant %s", got, want)
	}
	if got, _ := (ParseOutput{}).AppendJSON(nil); string(got) != "{}" {
		t.Errorf("empty output = %s", got)
	}
	for _, o := range []ParseOutput{{State: "c1;s=130;ff:1,2"}, {Updates: codecProgress()[:2], State: "<&> \"q\" \xff"}} {
		want, _ := json.Marshal(o)
		got, err := o.AppendJSON(nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("ParseOutput.AppendJSON with a state\n got %s\nwant %s", got, want)
		}
		if th := o.Thinned(); th.State != o.State {
			t.Errorf("Thinned dropped the state %q", o.State)
		}
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := (ParseOutput{Updates: []Progress{{Rate: bad}}}).AppendJSON(nil); err == nil {
			t.Errorf("%v: no error", bad)
		}
		for _, p := range []Progress{{Percentage: bad}, {EpochExact: bad}, {ETASeconds: bad}} {
			if _, err := (ParseOutput{Updates: []Progress{p}}).AppendJSON(nil); err == nil {
				t.Errorf("%+v: no error", p)
			}
		}
	}
	for _, s := range []string{
		`null`, ` { "lines" : [ "a" , "b" ] , "last" : null } `, `{"lines":["a"],"last":{}}`,
		`{"Lines":["a"]}`, `{"lines":["a"],"other":1}`, `{"lines":["a"],"lines":["b"]}`,
		`{"lines":[null,"x"]}`, `{"lines":[1]}`, `{"lines":["\u00e9\ud83d\ude00\ud800x\/"]}`,
		`{"lines":["\x"]}`, `{"lines":["a]}`, `{"lines":["a"]} x`, `{"lines":["a"],}`,
		`{"last":{"step":1.5}}`, `{"last":{"step":1e2}}`, `{"last":{"step":01}}`, `{"last":{"rate":1.}}`,
		`{"last":{"rate":-0.5e-3,"eta_seconds":1E+2}}`, `{"last":{"rate":1e400}}`, `{"last":{"step":null}}`,
		`{"last":{"metrics":{"a":1,"a":2}}}`, `{"last":{"metrics":null}}`, `{"last":{"step":1,"step":2}}`,
		`{"last":{"step":99999999999999999999}}`, `{"lines":["tab	raw"]}`, `{"lines":["bad \xff utf8"]}`,
		`[]`, ``, `{`, `{"lines":["\ud800\u0041"]}`, `{"lines":["\uD83D\uDE00"]}`,
		`{"last":{"metrics":{"a":"NaN","b":"Infinity","c":"-Infinity","d":1}}}`, `{"last":{"metrics":{"a":"\u004eaN"}}}`,
		`{"last":{"metrics":{"a":"nan"}}}`, `{"last":{"metrics":{"a":"1"}}}`, `{"last":{"metrics":{"a":"NaN}}}`,
		`{"last":{"metrics":{"a":null,"b":true}}}`, `{"last":{"metrics":[]}}`,
		`{"lines":["a"],"state":"c1;s=3"}`, `{"state":null}`, `{"state":1}`, `{"state":"\u00e9\n"}`,
	} {
		checkDecode(t, s)
	}
}

// marshalNoHTML is json.Marshal with SetEscapeHTML(false).
func marshalNoHTML(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func TestAppendJSONNoEscapeHTML(t *testing.T) {
	for _, in := range codecInputs() {
		want, werr := marshalNoHTML(in)
		got, gerr := in.AppendJSONNoEscapeHTML(nil)
		if (werr == nil) != (gerr == nil) || werr == nil && !bytes.Equal(got, want) {
			t.Errorf("AppendJSONNoEscapeHTML(%+v)\n got %s (%v)\nwant %s (%v)", in, got, gerr, want, werr)
		}
		checkDecode(t, string(got))
	}
}

func checkDecode(t *testing.T, s string) {
	t.Helper()
	var want, got ParseInput
	werr := json.Unmarshal([]byte(s), &want)
	gerr := unmarshalParseInput(s, &got)
	if (werr == nil) != (gerr == nil) || !cmp.Equal(got, want, cmpopts.EquateNaNs()) {
		t.Errorf("unmarshalParseInput(%q)\n got %#v %v\nwant %#v %v", s, got, gerr, want, werr)
	}
}

func FuzzParseCodec(f *testing.F) {
	for _, s := range codecStrings {
		f.Add(s, int64(3), 0.5, "m")
	}
	f.Fuzz(func(t *testing.T, s string, n int64, x float64, key string) {
		p := Progress{Step: n, Percentage: x, Phase: s, Metrics: map[string]float64{key: x}}
		in := ParseInput{Lines: []string{s, key}, Last: &p}
		want, werr := json.Marshal(in)
		got, gerr := in.AppendJSON(nil)
		if (werr == nil) != (gerr == nil) || werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON\n got %s %v\nwant %s %v", got, gerr, want, werr)
		}
		if werr == nil {
			checkDecode(t, string(want))
		}
		want, werr = marshalNoHTML(in)
		got, gerr = in.AppendJSONNoEscapeHTML(nil)
		if (werr == nil) != (gerr == nil) || werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("AppendJSONNoEscapeHTML\n got %s %v\nwant %s %v", got, gerr, want, werr)
		}
		if werr == nil {
			checkDecode(t, string(want))
		}
		checkDecode(t, s)
		checkDecode(t, `{"lines":["`+s+`"]}`)
		checkDecode(t, `{"last":{"metrics":{"`+key+`":`+s+`}}}`)
	})
}

func TestDecodeTruncated(t *testing.T) {
	for _, s := range []string{`{"\`, `{"lines":["\`, `{"lines":["a\`, `{"last":{"phase":"\u12`, `{"lines":["\u`} {
		checkDecode(t, s)
	}
}
