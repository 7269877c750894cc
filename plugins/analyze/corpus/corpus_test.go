package corpus

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/runbox/runbox/sdk"
)

func f(v float64) *float64 { return &v }

func TestExpectDiff(t *testing.T) {
	train := "train"
	done := true
	tests := []struct {
		name   string
		expect Expect
		got    *sdk.Progress
		ok     bool
	}{
		{"step and total", Expect{Step: f(5), Total: f(10)}, &sdk.Progress{Step: 5, Total: 10}, true},
		{"wrong step", Expect{Step: f(5)}, &sdk.Progress{Step: 4}, false},
		{"percent from step/total", Expect{Percent: f(50)}, &sdk.Progress{Step: 5, Total: 10}, true},
		{"percent within rounding", Expect{Percent: f(7.57)}, &sdk.Progress{Percentage: 7.6}, true},
		{"phase differs", Expect{Phase: &train}, &sdk.Progress{Phase: "eval"}, false},
		{"finished", Expect{Finished: &done}, &sdk.Progress{Step: 10, Total: 10}, true},
		{"not finished", Expect{Finished: &done}, &sdk.Progress{Step: 9, Total: 10}, false},
		{"none expected, none found", Expect{}, nil, true},
		{"none expected, a bar found", Expect{}, &sdk.Progress{Step: 3, Total: 9}, false},
		{"metric", Expect{Metrics: map[string]Number{"loss": 0.5}}, &sdk.Progress{Metrics: map[string]float64{"loss": 0.5}}, true},
		{"metric missing", Expect{Metrics: map[string]Number{"loss": 0.5}}, &sdk.Progress{}, false},
		{"nan metric", Expect{Metrics: map[string]Number{"loss": Number(math.NaN())}}, &sdk.Progress{Metrics: map[string]float64{"loss": math.NaN()}}, true},
		{"nan expected, number found", Expect{Metrics: map[string]Number{"loss": Number(math.NaN())}}, &sdk.Progress{Metrics: map[string]float64{"loss": 1}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := tt.expect.diff(tt.got); (d == "") != tt.ok {
				t.Errorf("diff %q, want ok=%v", d, tt.ok)
			}
		})
	}
}

func TestNumber(t *testing.T) {
	var m map[string]Number
	if err := json.Unmarshal([]byte(`{"a": 1.5, "b": "nan", "c": "-inf", "d": "inf"}`), &m); err != nil {
		t.Fatal(err)
	}
	if m["a"] != 1.5 || !math.IsNaN(float64(m["b"])) || !math.IsInf(float64(m["c"]), -1) || !math.IsInf(float64(m["d"]), 1) {
		t.Errorf("%v", m)
	}
	if err := json.Unmarshal([]byte(`{"a": "lots"}`), &m); err == nil {
		t.Error("a word taken for a number")
	}
}

func TestTallies(t *testing.T) {
	rs := []Result{{Want: "A", Split: "train", OK: true}, {Want: "A", Split: "heldout"}, {Want: "B", Split: "train", OK: true}}
	tot := Total(rs)
	if tot["all"].Right != 2 || tot["all"].All != 3 || tot["heldout"].Rate() != 0 || tot["train"].Rate() != 1 {
		t.Errorf("totals %+v %+v %+v", *tot["all"], *tot["train"], *tot["heldout"])
	}
	if g := By(rs, func(r Result) string { return r.Want }); g["A"]["all"].All != 2 || g["B"]["train"].Right != 1 {
		t.Errorf("by code %v", g)
	}
}
