package slurm

import (
	"testing"

	"github.com/runbox/runbox/sandbox"
)

// ChainAfter holds a job on Slurm jobs and array tasks only; anything
// else (another backend's run, no runs) leaves the run in the daemon.
func TestChainAfter(t *testing.T) {
	s := New(Options{})
	tests := []struct {
		refs   []string
		anyEnd bool
		want   string // "" when it refuses
	}{
		{[]string{"slurm:12"}, false, "afterok:12"},
		{[]string{"slurm:12", "slurm:13_4"}, true, "afterany:12:13_4"},
		{[]string{"slurm:12", "process:99"}, false, ""},
		{[]string{"slurm:"}, false, ""},
		{nil, false, ""},
	}
	for _, tt := range tests {
		chain := s.ChainAfter(tt.refs, tt.anyEnd)
		if tt.want == "" {
			if chain != nil {
				t.Errorf("%q: chained, want refused", tt.refs)
			}
			continue
		}
		if chain == nil {
			t.Errorf("%q: refused, want %s", tt.refs, tt.want)
			continue
		}
		var spec sandbox.Spec
		chain(&spec)
		if got := spec.Slurm.Options["dependency"]; got != tt.want {
			t.Errorf("%q: dependency %q, want %q", tt.refs, got, tt.want)
		}
	}
}

func TestArrayJob(t *testing.T) {
	for ref, want := range map[string]int64{
		"slurm:123_4": 123,
		"slurm:7_0":   7,
		"slurm:123":   0, // a job, not an array task
		"slurm:x_1":   0,
		"process:1_2": 0,
		"":            0,
	} {
		if got := arrayJob(ref); got != want {
			t.Errorf("arrayJob(%q) = %d, want %d", ref, got, want)
		}
	}
}

// Group places the run in its group's job array and keeps its own
// options.
func TestGroup(t *testing.T) {
	spec := sandbox.Spec{Slurm: &sandbox.SlurmSpec{Partition: "p"}}
	New(Options{}).Group(&spec, sandbox.Group{Key: "k", Dir: "/d", Index: 2, Size: 5, Sweep: "s", Parallel: 3})
	a := spec.Slurm.Array
	if a == nil || *a != (sandbox.Group{Key: "k", Dir: "/d", Index: 2, Size: 5, Sweep: "s", Parallel: 3}) || spec.Slurm.Partition != "p" {
		t.Errorf("spec after Group: %+v, array %+v", spec.Slurm, a)
	}
}
