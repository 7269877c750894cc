package host

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/store"
)

func TestCheckSweep(t *testing.T) {
	ok := api.SweepRequest{Run: api.RunRequest{Command: []string{"train", "--lr", "{lr}", "${HOME}"}}, ParamNames: []string{"lr"}, Sets: []map[string]string{{"lr": "1"}}}
	if err := checkSweep(ok); err != nil {
		t.Fatalf("a good sweep refused: %v", err)
	}
	many := ok
	many.Sets = make([]map[string]string, api.MaxSweepMembers+1)
	for i := range many.Sets {
		many.Sets[i] = map[string]string{"lr": "1"}
	}
	for _, tc := range []struct {
		name string
		mod  func(*api.SweepRequest)
		want string
	}{
		{"unknown placeholder", func(r *api.SweepRequest) { r.Run.Command = []string{"echo", "x{bs}y"} }, "no param is called bs"},
		{"unknown placeholder right after a known one", func(r *api.SweepRequest) { r.Run.Command = []string{"echo", "{lr}{bs}"} }, "no param is called bs"},
		{"no sets", func(r *api.SweepRequest) { r.Sets = nil }, "no parameter sets"},
		{"no params", func(r *api.SweepRequest) { r.ParamNames = nil }, "at least one --param"},
		{"set lacks a param", func(r *api.SweepRequest) { r.Sets = []map[string]string{{"x": "1"}} }, "no value for lr"},
		{"negative parallel", func(r *api.SweepRequest) { r.Parallel = -1 }, "negative"},
		{"too many", func(r *api.SweepRequest) { *r = many }, "--yes"},
		{"no command", func(r *api.SweepRequest) { r.Run.Command = nil }, "no command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ok
			tc.mod(&r)
			err := checkSweep(r)
			if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
	many.Yes = true
	if err := checkSweep(many); err != nil {
		t.Errorf("--yes: %v", err)
	}
}

func TestMemberRequest(t *testing.T) {
	sw := &store.Sweep{ID: "S1", Name: "grid", ParamNames: []string{"lr", "opt-name"}, Sets: []map[string]string{{"lr": "0.1", "opt-name": "adam"}}}
	tmpl := api.RunRequest{Command: []string{"sh", "-c", "x={lr}; echo ${x} {opt-name} {lr}{lr}"}, Env: []string{"A=1"}}
	got := memberRequest(sw, tmpl, 0)
	if want := "x=0.1; echo ${x} {opt-name} 0.10.1"; got.Command[2] != want {
		t.Errorf("command %q, want %q", got.Command[2], want)
	}
	if !slices.Equal(got.Env, []string{"A=1", "RUNBOX_PARAM_LR=0.1", "RUNBOX_PARAM_OPT_NAME=adam"}) {
		t.Errorf("env %v", got.Env)
	}
	if got.IdempotencyKey != "sweep/S1/0" || got.Name != "grid[0]" {
		t.Errorf("key %q name %q", got.IdempotencyKey, got.Name)
	}
	if tmpl.Command[2] != "x={lr}; echo ${x} {opt-name} {lr}{lr}" || len(tmpl.Env) != 1 {
		t.Error("the template was changed")
	}
}

func TestLowerIsBetter(t *testing.T) {
	for name, want := range map[string]bool{"loss": true, "val/loss": true, "error_rate": true, "acc": false, "accuracy": false, "f1": false, "eval_ppl": true} {
		if lowerIsBetter(name) != want {
			t.Errorf("%s: %v", name, !want)
		}
	}
}
