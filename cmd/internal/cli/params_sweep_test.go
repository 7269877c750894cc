package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
)

// An empty value between commas is a value (as the Python client's
// empty string):
// it was dropped, and a,,b made two members.
func TestParamSetsKeepEmptyValues(t *testing.T) {
	for _, tc := range []struct {
		param string
		want  []string
	}{
		{"x=a,,b", []string{"a", "", "b"}},
		{"x=,a", []string{"", "a"}},
		{"x= a , b ", []string{"a", "b"}},
	} {
		_, sets, err := paramSets([]string{tc.param}, "")
		if err != nil {
			t.Fatalf("%s: %v", tc.param, err)
		}
		var got []string
		for _, s := range sets {
			got = append(got, s["x"])
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: values %q, want %q", tc.param, got, tc.want)
		}
	}
}

// A CSV params file saved by Excel starts with a UTF-8 byte order mark:
// it is not part of the first param's name.
func TestParamsFileCSVWithBOM(t *testing.T) {
	p := filepath.Join(t.TempDir(), "grid.csv")
	if err := os.WriteFile(p, []byte("\ufefflr,name\r\n0.1,a\r\n0.2,b\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	names, sets, err := paramSets(nil, p)
	if err != nil || !reflect.DeepEqual(names, []string{"lr", "name"}) || len(sets) != 2 || sets[0]["lr"] != "0.1" || sets[1]["name"] != "b" {
		t.Errorf("names %q, sets %v, err %v", names, sets, err)
	}
}

// The member table cuts a long param value (a 100 KB value made a 100 KB
// wide column) and shows control characters escaped, on one line.
func TestSweepTableCutsLongValues(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	sw := &api.Sweep{ID: "S", ParamNames: []string{"v"}, Members: 2, Counts: map[api.State]int{api.Succeeded: 2},
		Runs: []api.SweepRun{{ID: "a", Params: map[string]string{"v": long}, State: api.Succeeded}, {ID: "b", Params: map[string]string{"v": "two\nlines"}, State: api.Succeeded}}}
	var b strings.Builder
	printSweep(&b, sw)
	out := b.String()
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 200 {
			t.Fatalf("a line of %d bytes: %.100s…", len(l), l)
		}
	}
	if !strings.Contains(out, strings.Repeat("x", maxCell-1)+"…") || !strings.Contains(out, `two\nlines`) {
		t.Errorf("table:\n%s", out)
	}
}
