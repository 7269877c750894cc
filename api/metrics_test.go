package api

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// A series' values carry NaN and ±Inf as "NaN", "Infinity", "-Infinity";
// null (how older daemons wrote a gap) reads as NaN; other strings fail.
func TestFloatJSON(t *testing.T) {
	vs := []Float{1.5, Float(math.NaN()), Float(math.Inf(1)), Float(math.Inf(-1)), 0}
	b, err := json.Marshal(vs)
	if err != nil || string(b) != `[1.5,"NaN","Infinity","-Infinity",0]` {
		t.Fatalf("marshal: %s, %v", b, err)
	}
	var back []Float
	if err := json.Unmarshal([]byte(`[1.5,"NaN","Infinity","-Infinity",0,null]`), &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != 6 || back[0] != 1.5 || !math.IsNaN(float64(back[1])) || !math.IsInf(float64(back[2]), 1) ||
		!math.IsInf(float64(back[3]), -1) || back[4] != 0 || !math.IsNaN(float64(back[5])) {
		t.Fatalf("unmarshal: %v", back)
	}
	for _, bad := range []string{`["nan"]`, `["1"]`, `[true]`, `[{}]`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("%s read without an error", bad)
		}
	}
}

// A run's progress with a NaN loss goes over the wire and back; a record
// without one is what it always was.
func TestProgressMetricsJSON(t *testing.T) {
	p := Progress{Step: 3, Metrics: map[string]float64{"loss": math.NaN(), "acc": 0.5}}
	b, err := json.Marshal(p)
	if err != nil || !strings.Contains(string(b), `"metrics":{"acc":0.5,"loss":"NaN"}`) {
		t.Fatalf("marshal: %s, %v", b, err)
	}
	var back Progress
	if err := json.Unmarshal(b, &back); err != nil || !math.IsNaN(back.Metrics["loss"]) || back.Metrics["acc"] != 0.5 {
		t.Fatalf("unmarshal: %+v, %v", back, err)
	}
	b, _ = json.Marshal(Progress{Step: 3, Metrics: map[string]float64{"loss": 0.25}})
	if string(b) != `{"step":3,"metrics":{"loss":0.25}}` {
		t.Fatalf("finite record changed: %s", b)
	}
}
