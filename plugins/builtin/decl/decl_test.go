package decl

import (
	"math"
	"testing"

	"github.com/runbox/runbox/sdk"
)

func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name  string
		e     Entry
		line  string
		want  sdk.Progress
		mets  map[string]float64
		ok    bool
		count int64
	}{
		{"grouped total", Entry{Name: "b", Source: "hf", Phase: "train", Match: []string{"Total optimization steps = {total:count}$"}},
			"  Total optimization steps = 1,851", sdk.Progress{Source: "hf", Phase: "train", Total: 1851}, nil, true, 0},
		{"trailing text refused", Entry{Name: "b", Match: []string{"Total optimization steps = {total:count}$"}},
			"Total optimization steps = 1,851 (x)", sdk.Progress{}, nil, false, 0},
		{"a cut group refused", Entry{Name: "b", Match: []string{"steps = {total:count}$"}},
			"steps = 1,00", sdk.Progress{}, nil, false, 0},
		{"zero total refused", Entry{Name: "b", Match: []string{"steps = {total:count}$"}},
			"steps = 0", sdk.Progress{}, nil, false, 0},
		{"notebook bar", Entry{Name: "nb", Source: "huggingface", Phase: "train", RateUnit: "it/s",
			Match:    []string{"^[ {step}/{total} ", "Epoch {epoch:elapsed}/{epoch_total}]$"},
			Optional: []string{"< {eta:clock}", "{rate} it/s"}},
			"[ 120/500 01:02 < 03:04, 1.93 it/s, Epoch 1.35/3]",
			sdk.Progress{Source: "huggingface", Phase: "train", Step: 120, Total: 500, Percentage: 24, Epoch: 2, EpochTotal: 3, ETASeconds: 184, Rate: 1.93, RateUnit: "it/s"}, nil, true, 0},
		{"epoch past its total refused", Entry{Name: "nb", Match: []string{"Epoch {epoch:elapsed}/{epoch_total}"}},
			"Epoch 3.5/3", sdk.Progress{}, nil, false, 0},
		{"metrics and a word boundary", Entry{Name: "m", Match: []string{"Iter {step}: Train loss {loss}", "Tokens/sec {tokens_per_sec}"}},
			"XIter 5: no; Iter 10: Train loss 2.345, Tokens/sec 567.8", sdk.Progress{Source: "m", Step: 10}, map[string]float64{"loss": 2.345, "tokens_per_sec": 567.8}, true, 0},
		{"nan metric", Entry{Name: "m", Match: []string{"[it {counter}] loss={loss}"}},
			"[it 120] loss=nan", sdk.Progress{Source: "m"}, map[string]float64{"loss": math.NaN()}, true, 120},
		{"a step is no decimal", Entry{Name: "m", Match: []string{"step {step}"}},
			"step 3.5", sdk.Progress{}, nil, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.e.Compile(); err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			u, c, ok := tc.e.Read(tc.line, func(k string, v float64) { got[k] = v })
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tc.ok, u)
			}
			if !ok {
				return
			}
			if u.Metrics != nil || u.Source != tc.want.Source || u.Phase != tc.want.Phase || u.Step != tc.want.Step || u.Total != tc.want.Total ||
				u.Percentage != tc.want.Percentage || u.Epoch != tc.want.Epoch || u.EpochTotal != tc.want.EpochTotal ||
				u.ETASeconds != tc.want.ETASeconds || u.Rate != tc.want.Rate || u.RateUnit != tc.want.RateUnit {
				t.Errorf("update %+v, want %+v", u, tc.want)
			}
			if c.Value != tc.count {
				t.Errorf("counter %d, want %d", c.Value, tc.count)
			}
			if len(got) != len(tc.mets) {
				t.Errorf("metrics %v, want %v", got, tc.mets)
			}
			for k, w := range tc.mets {
				if g, ok := got[k]; !ok || !(g == w || math.IsNaN(g) && math.IsNaN(w)) {
					t.Errorf("metric %s = %v, want %v", k, g, w)
				}
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct{ tpl, want string }{
		{"step {step", "unclosed"},
		{"{a}{b} x", "right after another"},
		{"loss {loss:weird}", "unknown kind"},
		{"x {loss:elapsed}", "elapsed is for {epoch}"},
		{"{step}", "needs text after it"},
		{"plain words", "no template has a named hole"},
		{"{Loss} x", "a name is lower-case"},
		{"a {a} b {b} c {c} d {d} e {e} f {f} g {g} h {h} i {i}", "more than 8 metric holes"},
	} {
		e := Entry{Name: "x", Match: []string{tc.tpl}}
		err := e.Compile()
		if err == nil || !contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one saying %q", tc.tpl, err, tc.want)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestRise(t *testing.T) {
	prev := int64(0)
	var steps []int64
	for _, n := range []int64{17, 18, 20, 20, 3, 4} {
		if s, ok := Rise(prev, n); ok {
			steps = append(steps, s)
		}
		prev = n
	}
	if len(steps) != 3 || steps[0] != 18 || steps[1] != 20 || steps[2] != 4 {
		t.Fatalf("steps %v, want [18 20 4]", steps)
	}
}

// A blank between two word characters (a hole counts as one) needs a
// blank in the line; beside punctuation it may be none.
func TestBlanks(t *testing.T) {
	for _, tc := range []struct {
		tpl, line string
		ok        bool
	}{
		{"Num Epochs = {epoch_total}", "Num   Epochs =3", true},
		{"Num Epochs = {epoch_total}", "NumEpochs = 3", false},
		{"Iter {step}:", "Iter5:", false},
		{"Iter {step}:", "Iter\t5 :", false},
		{"Iter {step} :", "Iter\t5:", true},
		{"< {eta:clock}", "<03:04", true},
		{"{rate} it/s", "1.93it/s", false},
		{"{rate} it/s", "1.93  it/s", true},
	} {
		e := Entry{Name: "x", Match: []string{tc.tpl}}
		if err := e.Compile(); err != nil {
			t.Fatal(err)
		}
		if _, _, ok := e.Read(tc.line, nil); ok != tc.ok {
			t.Errorf("%q on %q: ok = %v, want %v", tc.tpl, tc.line, ok, tc.ok)
		}
	}
}

// A percentage outside 0–100 declines the line; Done marks the end.
func TestPercentRangeAndDone(t *testing.T) {
	e := Entry{Name: "g", Match: []string{"PROGRESS: at {percent}%"}}
	j := Entry{Name: "j", Done: "finished", Match: []string{"Done {step} out of {total}"}}
	for _, x := range []*Entry{&e, &j} {
		if err := x.Compile(); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, ok := e.Read("PROGRESS: at 101% examples", nil); ok {
		t.Error("a percentage of 101 was read")
	}
	if u, _, ok := e.Read("EPOCH 1 - PROGRESS: at 99.84% examples", nil); !ok || u.Percentage != 99.84 {
		t.Errorf("%+v %v", u, ok)
	}
	if u, _, ok := j.Read("Done 8 out of 10 | elapsed: 0.9s finished", nil); !ok || u.Step != 8 || u.Percentage != 100 {
		t.Errorf("%+v %v, want step 8 at 100%% (finished)", u, ok)
	}
	if _, _, ok := j.Read("Done 12 out of 10 | elapsed", nil); ok {
		t.Error("a count past its total was read")
	}
}

// Any template a team writes and any line: Compile answers or refuses,
// Read never panics, and what it reads is in range.
func FuzzRead(f *testing.F) {
	f.Add("Iter {step}: loss {loss}", "Iter 10: loss 2.5")
	f.Add("^[ {step} / {total}", "[ 3/4 ]")
	f.Add("{rate} it/s", "1.5 it/s, 2 it/s")
	f.Add("Epoch {epoch:elapsed}/{epoch_total}]$", "Epoch 1.35/3]")
	f.Add("{a} {b}", "1 2")
	f.Add("< {eta:clock} x {n:count}", "<1:02:03 x 1,234,567")
	f.Fuzz(func(t *testing.T, tpl, line string) {
		e := Entry{Name: "f", Match: []string{tpl}, Optional: []string{tpl}}
		if e.Compile() != nil {
			return
		}
		u, _, ok := e.Read(line, func(string, float64) {})
		if !ok {
			return
		}
		if u.Percentage < 0 || u.Percentage > 100 || u.Total < 0 || u.Total > 0 && u.Step > u.Total {
			t.Fatalf("%q on %q: out of range %+v", tpl, line, u)
		}
	})
}
