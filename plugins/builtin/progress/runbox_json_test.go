package progress

import (
	"fmt"
	"reflect"
	"testing"
)

// TestRunboxAliasesInOrder: aliases in a contract object resolve the same
// way whatever else the object holds (nested values, escapes, non-ASCII):
// a repeated key counts at its last place, the last alias wins.
func TestRunboxAliasesInOrder(t *testing.T) {
	for _, flat := range []string{
		`{"step":1,"current":2,"n":3}`, `{"n":3,"step":1,"current":2}`, `{"step":1,"current":2,"step":5}`,
		`{"eta":1,"eta_seconds":2}`, `{"percent":10,"pct":20,"progress":30}`, `{"loss":1,"metrics":{"loss":2}}`,
		`{"metrics":{"loss":2},"loss":1}`, `{"epochs":4,"total_epochs":5,"epoch":1,"phase":"a","stage":"b"}`,
	} {
		want, ok := parseRunbox("##PROGRESS## " + flat)
		if !ok {
			t.Fatalf("%s: not parsed", flat)
		}
		for _, s := range []string{
			flat[:len(flat)-1] + `,"x":{"y":[1]}}`, `{"x":[],` + flat[1:], flat[:len(flat)-1] + `,"z":"\u0041"}`,
			flat[:len(flat)-1] + `,"big":1e5}`, flat[:len(flat)-1] + `,"é":"à"}`,
		} {
			for range 20 { // map order would show within a few tries
				got, ok := parseRunbox("##PROGRESS## " + s)
				if !ok || !reflect.DeepEqual(got.Metrics["x"], want.Metrics["x"]) || got.Step != want.Step ||
					got.ETASeconds != want.ETASeconds || got.Percentage != want.Percentage || got.EpochTotal != want.EpochTotal ||
					got.Phase != want.Phase || got.Metrics["loss"] != want.Metrics["loss"] {
					t.Fatalf("%s: got %+v, want (as %s) %+v", s, got, flat, want)
				}
			}
		}
	}
}

func TestMixFormatIsSprintf(t *testing.T) {
	for _, p := range mixProgress {
		for _, n := range []int{0, 7, 999} {
			if got, want := mixFormat(p, n, 1000), fmt.Sprintf(p, n, 1000); got != want {
				t.Errorf("mixFormat(%q) = %q, want %q", p, got, want)
			}
		}
	}
}
