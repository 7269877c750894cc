package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
)

// Retried with another command (docs/PYTHON.md: the lr=5000 member
// retried with --lr 0.2), a member's row and its compare row show the
// params the retry ran with, and the run sees them in RUNBOX_PARAM_LR;
// a command that no longer fits the sweep's shows no old value.
func TestRetryWithOtherCommandShowsItsParams(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 4)
	ctx := context.Background()
	out := t.TempDir()
	script := fmt.Sprintf(`echo "$RUNBOX_PARAM_LR" > %s/$$; test "$1" != --lr=5000`, out)
	sw := te.sweepOf(t, sweepReq(t, "lr", []string{"0.1", "5000"}, 0, 0, "sh", "-c", script, "train", "--lr={lr}"))
	v := te.waitSweep(t, sw.ID)
	failed := rowOf(t, v, 1)
	if failed.State != api.Failed {
		t.Fatalf("member lr=5000: %+v", failed)
	}
	run, err := te.Retry(ctx, failed.ID, api.RunRequest{Command: []string{"sh", "-c", script, "train", "--lr=0.2"}})
	if err != nil {
		t.Fatal(err)
	}
	v = te.waitSweep(t, sw.ID)
	row := rowOf(t, v, 1)
	if row.ID != run.ID || row.State != api.Succeeded || row.Params["lr"] != "0.2" {
		t.Errorf("the retried member's row: %+v, want lr 0.2, succeeded", row)
	}
	cmp, err := te.Compare(ctx, CompareQuery{Sweep: sw.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cmp.Rows {
		if r.RunID == run.ID && r.Params["lr"] != "0.2" {
			t.Errorf("compare row of the retry: params %v, want lr 0.2", r.Params)
		}
	}
	seen := map[string]bool{}
	ents, _ := os.ReadDir(out)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(out, e.Name()))
		seen[strings.TrimSpace(string(b))] = true
	}
	if !seen["0.2"] {
		t.Errorf("the retry's RUNBOX_PARAM_LR was not 0.2: the runs saw %v", seen)
	}

	// A command that does not fit the sweep's: the value is unknown, not
	// the old one.
	run, err = te.Retry(ctx, run.ID, api.RunRequest{Command: []string{"sh", "-c", "true"}})
	if err != nil {
		t.Fatal(err)
	}
	v = te.waitSweep(t, sw.ID)
	if row := rowOf(t, v, 1); row.ID != run.ID || row.Params["lr"] != RetryChangedParam {
		t.Errorf("retried with an unrelated command: row %+v, want lr %q", row, RetryChangedParam)
	}
}

// commandParams reads a member's values back from a command made from
// the sweep's, shell-quoted ones too.
func TestCommandParams(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tmpl  []string
		cmd   []string
		shell bool
		want  map[string]string // nil: does not fit
	}{
		{"argv", []string{"train", "--lr", "{lr}"}, []string{"train", "--lr", "0.2"}, false, map[string]string{"lr": "0.2"}},
		{"in an arg", []string{"train", "--lr={lr}", "--bs={bs}"}, []string{"train", "--lr=1e-3", "--bs=8"}, false, map[string]string{"lr": "1e-3", "bs": "8"}},
		{"other fixed text", []string{"train", "--lr", "{lr}"}, []string{"eval", "--lr", "0.2"}, false, nil},
		{"more args", []string{"train", "{lr}"}, []string{"train", "0.2", "--x"}, false, nil},
		{"one param two values", []string{"a{lr}", "b{lr}"}, []string{"a1", "b2"}, false, nil},
		{"shell bare", []string{"echo {x} done"}, []string{`echo 'it'\''s' done`}, true, map[string]string{"x": "it's"}},
		{"shell in double quotes", []string{`echo "v={x}"`}, []string{`echo "v=\$(id -u)"`}, true, map[string]string{"x": "$(id -u)"}},
		{"shell unquoted by hand", []string{"echo {x}"}, []string{"echo 0.5"}, true, map[string]string{"x": "0.5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := commandParams(tc.tmpl, tc.cmd, tc.shell)
			if ok != (tc.want != nil) || fmt.Sprint(got) != fmt.Sprint(tc.want) && tc.want != nil {
				t.Errorf("got %v %v, want %v", got, ok, tc.want)
			}
		})
	}
}

// --shell: each value reaches the command as itself, whatever shell
// syntax it holds, bare or inside the user's own single or double quotes;
// {NAME} in -e values, --setup and --label values is the member's value.
func TestShellSweepValuesArriveIntact(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 4)
	out := t.TempDir()
	values := []string{"it's", "$(id -u)", "a;b", "two  spaces", "", `"dq"`, `back\slash`, "`id`", "*", "new\nline"}
	req := api.SweepRequest{
		Run:        processRequest(t, fmt.Sprintf(`printf '%%s|' {x} "v={x}" 'w={x}' "$Y" > %s/{i}; printf '%%s' {x} > %s/setup{i}.check`, out, out)),
		ParamNames: []string{"i", "x"},
	}
	req.Run.Shell = true
	req.Run.Env = []string{"Y=e={x}"}
	req.Run.Setup = []string{fmt.Sprintf(`printf '%%s' {x} > %s/setup{i}`, out)}
	req.Run.Labels = map[string]string{"x": "{x}", "fixed": "yes"}
	for i, v := range values {
		req.Sets = append(req.Sets, map[string]string{"i": fmt.Sprint(i), "x": v})
	}
	sw := te.sweepOf(t, req)
	v := te.waitSweep(t, sw.ID)
	for i, val := range values {
		b, err := os.ReadFile(filepath.Join(out, fmt.Sprint(i)))
		if want := fmt.Sprintf("%s|v=%s|w=%s|e=%s|", val, val, val, val); err != nil || string(b) != want {
			t.Errorf("value %q arrived as %q (%v), want %q", val, b, err, want)
		}
		if b, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("setup%d", i))); err != nil || string(b) != val {
			t.Errorf("setup: value %q arrived as %q (%v)", val, b, err)
		}
	}
	for _, row := range v.Runs {
		r, err := te.Get(context.Background(), row.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Labels["x"] != row.Params["x"] || r.Labels["fixed"] != "yes" {
			t.Errorf("member %d: labels %v, want x=%q", row.Index, r.Labels, row.Params["x"])
		}
	}
}

// Params that no {NAME} or env var can carry, or two of which would be
// one env var, are refused; so is {NAME} of no param anywhere it is
// substituted.
func TestCheckSweepParamNames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		names []string
		mod   func(*api.RunRequest)
		want  string
	}{
		{"dash", []string{"a-b"}, nil, `param name "a-b" cannot be used`},
		{"leading digit", []string{"1x"}, nil, `param name "1x" cannot be used`},
		{"same env var", []string{"lr", "LR"}, nil, "would both be $RUNBOX_PARAM_LR"},
		{"unknown in env", []string{"lr"}, func(r *api.RunRequest) { r.Env = []string{"X={bs}"} }, "-e X uses {bs}"},
		{"unknown in setup", []string{"lr"}, func(r *api.RunRequest) { r.Setup = []string{"echo {bs}"} }, "--setup uses {bs}"},
		{"unknown in label", []string{"lr"}, func(r *api.RunRequest) { r.Labels = map[string]string{"k": "{bs}"} }, "--label k uses {bs}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := map[string]string{}
			for _, n := range tc.names {
				set[n] = "1"
			}
			req := api.SweepRequest{Run: api.RunRequest{Command: []string{"echo", "{" + tc.names[0] + "}"}}, ParamNames: tc.names, Sets: []map[string]string{set}}
			if tc.mod != nil {
				tc.mod(&req.Run)
			}
			err := checkSweep(req)
			if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}
