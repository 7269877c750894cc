package api

import "testing"

// Every similar run is counted once in a plan's experience line: the
// cancelled and lost ones used to vanish ("3 similar runs, 0 succeeded,
// 0 failed").
func TestExperienceCounts(t *testing.T) {
	for _, tc := range []struct {
		e    Experience
		want string
	}{
		{Experience{Runs: 3, Succeeded: 1, Failed: 2}, "3 similar runs: 1 succeeded, 2 failed"},
		{Experience{Runs: 3}, "3 similar runs: 0 succeeded, 0 failed, 3 cancelled or lost"},
		{Experience{Runs: 5, Succeeded: 2, Failed: 1}, "5 similar runs: 2 succeeded, 1 failed, 2 cancelled or lost"},
	} {
		if got := tc.e.Counts(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}
