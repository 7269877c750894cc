package cli

import (
	"io"
	"os"
	"strings"
	"testing"
)

// mainStderr runs Main and returns its exit code and what it wrote to
// stderr.
func mainStderr(t *testing.T, args []string) (int, string) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stderr
	os.Stderr = f
	var e recordingEngine
	code := Main(args, &e)
	os.Stderr = saved
	f.Seek(0, io.SeekStart)
	b, _ := io.ReadAll(f)
	return code, string(b)
}

// Values no limit or id can be are usage errors (exit 2) that say what is
// wrong: NaN reached the JSON encoder (exit 1, "unsupported value: NaN"),
// 99999999999 pids was blamed on a missing pids controller, and an empty
// run id asked for /v1/runs//logs and was told run "logs" was not found.
// A missing id says which (kong's own words were `expected "<run-b>"`).
func TestBadValuesAreUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--cpus", "NaN", "--", "true"}, "--cpus NaN: want a positive number"},
		{[]string{"run", "--cpus", "Inf", "--", "true"}, "--cpus +Inf: want a positive number"},
		{[]string{"run", "--cpus=-Inf", "--", "true"}, "--cpus -Inf"},
		{[]string{"run", "--cpus=-0.5", "--", "true"}, "--cpus -0.5"},
		{[]string{"plan", "--cpus", "nan", "--", "true"}, "--cpus NaN"},
		{[]string{"run", "--pids", "99999999999", "--", "true"}, "--pids 99999999999: want a process count from 1 to 4194304"},
		{[]string{"run", "--pids=-1", "--", "true"}, "--pids -1"},
		{[]string{"logs", ""}, "a run id is required"},
		{[]string{"logs", " "}, "a run id is required"},
		{[]string{"logs", "--tail-bytes=-5", "abc"}, "--tail-bytes -5"},
		{[]string{"status", ""}, "a run id is required"},
		{[]string{"wait", ""}, "a run id is required"},
		{[]string{"stop", ""}, "a run id is required"},
		{[]string{"retry", ""}, "a run id is required"},
		{[]string{"plot", "abc", ""}, "a run id is required"},
		{[]string{"plot"}, "a run id is required"},
		{[]string{"diff"}, "diff: two runs are required: runbox diff RUN_A RUN_B"},
		{[]string{"diff", "abc"}, "two runs are required"},
		{[]string{"diff", "abc", " "}, "two runs are required"},
		{[]string{"sweep", "status"}, "sweep status: a sweep id is required (runbox sweep ls lists them; @last is the newest)"},
		{[]string{"sweep", "wait", ""}, "a sweep id is required"},
		{[]string{"sweep", "stop"}, "a sweep id is required"},
		{[]string{"exec"}, "exec: a plan id is required"},
		{[]string{"run", "--timeout", "5", "--", "true"}, `--timeout: "5" is not a duration: give it a unit, as in 90s, 30m or 2h`},
		{[]string{"ls", "--since", "yesterday"}, `--since: "yesterday" is not a duration`},
		{[]string{"ls", "--state", "bogus"}, `--state "bogus": a run's state is one of queued, preparing, smoke, running, succeeded, failed, timed_out, cancelled, lost`},
		{[]string{"ls", "-s", "failed,done"}, `--state "done"`},
	} {
		code, stderr := mainStderr(t, tt.args)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
	for _, args := range [][]string{
		{"run", "--cpus=0.5", "--pids=4194304", "--", "true"},
		{"logs", "--tail=3", "--tail-bytes=0", "abc"},
	} {
		if _, _, err := parseFull(t, args); err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
}
