package corpus

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
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
		{"number expected, nan found", Expect{Metrics: map[string]Number{"loss": 1}}, &sdk.Progress{Metrics: sdk.Metrics{"loss": math.NaN()}}, false},
		{"number expected, inf found", Expect{Metrics: map[string]Number{"loss": 1}}, &sdk.Progress{Metrics: sdk.Metrics{"loss": math.Inf(1)}}, false},
		{"inf of its sign", Expect{Metrics: map[string]Number{"loss": Number(math.Inf(-1))}}, &sdk.Progress{Metrics: sdk.Metrics{"loss": math.Inf(-1)}}, true},
		{"inf of the other sign", Expect{Metrics: map[string]Number{"loss": Number(math.Inf(-1))}}, &sdk.Progress{Metrics: sdk.Metrics{"loss": math.Inf(1)}}, false},
		{"two names that compare equal, one wrong", Expect{Metrics: map[string]Number{"loss": 0.5}}, &sdk.Progress{Metrics: sdk.Metrics{"loss": 0.5, "Loss": 0.7}}, false},
		{"two names that compare equal, both right", Expect{Metrics: map[string]Number{"train loss": 0.5}}, &sdk.Progress{Metrics: sdk.Metrics{"train_loss": 0.5, "Train Loss": 0.5}}, true},
		{"inf expected, nan found", Expect{Metrics: map[string]Number{"loss": Number(math.Inf(1))}}, &sdk.Progress{Metrics: sdk.Metrics{"loss": math.NaN()}}, false},
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

// The corpus in the repo is whole: every case's file exists, every code is
// one of the contract's, every case is in a split, ids are unique.
func TestCorpusIsWhole(t *testing.T) {
	c, err := Load("../../builtin/testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Failures) < 250 || len(c.Progress) < 120 {
		t.Errorf("%d failures and %d progress cases, want at least 250 and 120", len(c.Failures), len(c.Progress))
	}
	codes := map[string]bool{}
	for _, code := range sdk.Codes {
		codes[code] = true
	}
	ids := map[string]bool{}
	check := func(id, file, split, source string) {
		if ids[id] {
			t.Errorf("%s: id used twice", id)
		}
		ids[id] = true
		if _, err := os.Stat(filepath.Join(c.Dir, file)); err != nil {
			t.Errorf("%s: %v", id, err)
		}
		if split != "train" && split != "heldout" {
			t.Errorf("%s: split %q", id, split)
		}
		if !strings.HasPrefix(source, "https://") {
			t.Errorf("%s: source %q is not a URL", id, source)
		}
	}
	for _, f := range c.Failures {
		check(f.ID, f.File, f.Split, f.Source)
		if !codes[f.Code] {
			t.Errorf("%s: %q is not a failure code", f.ID, f.Code)
		}
	}
	for _, p := range c.Progress {
		check(p.ID, p.File, p.Split, p.Source)
	}
}
