package sdk

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// Non-finite metric values cross the wire as "NaN", "Infinity" and
// "-Infinity", both ways: written by the guest's encoder and encoding/json
// (the host), read back by both decoders with their kind and sign.
func TestMetricsNonFiniteWire(t *testing.T) {
	out := ParseOutput{Updates: []Progress{{Step: 3, Metrics: Metrics{
		"loss": math.NaN(), "grad_norm": math.Inf(1), "logit": math.Inf(-1), "acc": 0.5,
	}}}}
	const want = `{"updates":[{"step":3,"metrics":{"acc":0.5,"grad_norm":"Infinity","logit":"-Infinity","loss":"NaN"}}]}`
	got, err := out.AppendJSON(nil)
	if err != nil || string(got) != want {
		t.Fatalf("guest encoder: %s, %v\nwant %s", got, err, want)
	}
	std, err := json.Marshal(out)
	if err != nil || string(std) != want {
		t.Fatalf("encoding/json: %s, %v\nwant %s", std, err, want)
	}
	check := func(who string, m Metrics) {
		t.Helper()
		if len(m) != 4 || !math.IsNaN(m["loss"]) || !math.IsInf(m["grad_norm"], 1) || !math.IsInf(m["logit"], -1) || m["acc"] != 0.5 {
			t.Errorf("%s read %v", who, m)
		}
	}
	var host ParseOutput
	if err := json.Unmarshal(got, &host); err != nil {
		t.Fatal(err)
	}
	check("host (encoding/json)", host.Updates[0].Metrics)
	// The guest reads the state the host sends back in ParseInput.Last.
	in := ParseInput{Lines: []string{"x"}, Last: &host.Updates[0]}
	b, err := in.AppendJSONNoEscapeHTML(nil)
	if err != nil {
		t.Fatal(err)
	}
	var guest ParseInput
	if err := unmarshalParseInput(string(b), &guest); err != nil {
		t.Fatal(err)
	}
	check("guest", guest.Last.Metrics)
}

// A record written before non-finite values were kept (plain numbers)
// reads as it did; a string that is not one of the three spellings is an
// error that says what is allowed, on both decoders.
func TestMetricsDecodeOldAndBad(t *testing.T) {
	var p Progress
	if err := json.Unmarshal([]byte(`{"step":1,"metrics":{"loss":0.25,"lr":1e-4}}`), &p); err != nil || p.Metrics["loss"] != 0.25 || p.Metrics["lr"] != 1e-4 {
		t.Fatalf("old record: %+v, %v", p, err)
	}
	for _, bad := range []string{`"nan"`, `"inf"`, `"+Infinity"`, `"0.5"`, `""`, `true`, `[]`} {
		s := `{"last":{"metrics":{"loss":` + bad + `}}}`
		var host ParseInput
		herr := json.Unmarshal([]byte(s), &host)
		var guest ParseInput
		gerr := unmarshalParseInput(s, &guest)
		if herr == nil || gerr == nil {
			t.Errorf("%s: host %v, guest %v: want errors", bad, herr, gerr)
		}
		if strings.HasPrefix(bad, `"`) && (gerr == nil || !strings.Contains(gerr.Error(), `"NaN", "Infinity" or "-Infinity"`)) {
			t.Errorf("%s: guest error %v does not say what is allowed", bad, gerr)
		}
	}
}

func TestFormatMetric(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{math.NaN(), "NaN"}, {math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"}, {0.125, "0.125"}, {1e-7, "1e-07"}} {
		if got := FormatMetric(c.v); got != c.want {
			t.Errorf("FormatMetric(%v) = %q, want %q", c.v, got, c.want)
		}
		if f, ok := ParseMetricString(c.want); ok != (math.IsNaN(c.v) || math.IsInf(c.v, 0)) || ok && FormatMetric(f) != c.want {
			t.Errorf("ParseMetricString(%q) = %v, %v", c.want, f, ok)
		}
	}
}
