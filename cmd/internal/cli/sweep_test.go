package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
)

func TestParamSetsGrid(t *testing.T) {
	names, sets, err := paramSets([]string{"lr=0.1,0.2", "bs= 8 ,16,32"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(names, []string{"lr", "bs"}) || len(sets) != 6 {
		t.Fatalf("names %v, %d sets", names, len(sets))
	}
	// The first param varies slowest.
	if sets[0]["lr"] != "0.1" || sets[0]["bs"] != "8" || sets[1]["bs"] != "16" || sets[3]["lr"] != "0.2" || sets[5]["bs"] != "32" {
		t.Errorf("sets %v", sets)
	}
	for _, tc := range []struct {
		params []string
		want   string
	}{
		{[]string{"lr="}, "has no values"},
		{[]string{"lr=,,"}, "has no values"},
		{[]string{"=1,2"}, "want NAME=V1"},
		{[]string{"lr"}, "want NAME=V1"},
		{[]string{"a=1", "a=2"}, "given twice"},
		{nil, "--param"},
	} {
		if _, _, err := paramSets(tc.params, ""); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.params, err, tc.want)
		}
	}
}

func TestParamsFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	names, sets, err := paramSets(nil, write("g.jsonl", `{"lr": 0.001, "opt": "adam"}
{"lr": 1e-4, "opt": "sgd"}
`))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(names, []string{"lr", "opt"}) || sets[0]["lr"] != "0.001" || sets[1]["lr"] != "1e-4" || sets[1]["opt"] != "sgd" {
		t.Errorf("jsonl: %v %v", names, sets)
	}
	names, sets, err = paramSets(nil, write("g.csv", "lr,opt\n0.1,adam\n0.2,sgd\n"))
	if err != nil || !reflect.DeepEqual(names, []string{"lr", "opt"}) || len(sets) != 2 || sets[1]["opt"] != "sgd" {
		t.Errorf("csv: %v %v %v", names, sets, err)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"e.jsonl", "", "no parameter sets"},
		{"b.jsonl", "{\"lr\": 1}\nnot json\n", "set 2"},
		{"h.csv", "lr,opt\n", "at least one row"},
		{"r.csv", "lr,opt\n1\n", "wrong number of fields"},
		{"x.yaml", "lr: 1\n", ".jsonl or .csv"},
	} {
		if _, _, err := paramSets(nil, write(tc.name, tc.body)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, _, err := paramSets([]string{"a=1"}, write("g2.csv", "a\n1\n")); err == nil {
		t.Error("--param and --params-file together accepted")
	}
}

// A sweep's one-line summary counts every member, whatever its state: a
// member preparing (copying its snapshot, pending in Slurm's queue) or
// lost was left out, and "4 members: 2 queued" hid two.
func TestSweepSummaryCountsEveryMember(t *testing.T) {
	sw := api.Sweep{ID: "01abcdefghijklmnop", Members: 6, Counts: map[api.State]int{
		api.Preparing: 2, api.Queued: 1, api.Running: 1, api.Lost: 1, api.TimedOut: 1}}
	if got, want := summary(&sw), "sweep 01abcdefghij: 6 members: 1 queued, 2 preparing, 1 running, 1 timed_out, 1 lost"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}
