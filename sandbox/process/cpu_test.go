package process_test

import (
	"strings"
	"testing"

	"github.com/runbox/runbox/sandbox/process/supervisor"
	"github.com/runbox/runbox/sandbox/runlog"
)

// A CPU limit holds a run that spins to its share: with --cpus 0.1, 1.5 s
// of a busy loop gets about 0.15 s of CPU (the cgroup's CFS quota, 10 ms
// in every 100 ms). The same loop with no limit takes what it can, at
// least 2.5 times the limit even on a machine other tests share: the loop
// would go past the limit but for the cgroup.
func TestCPULimit(t *testing.T) {
	if supervisor.CPULimitMode() == "" {
		t.Skip("no writable cpu cgroup here: a CPU limit cannot be enforced")
	}
	const spin = "import time\nt = time.time()\nwhile time.time() - t < 1.5:\n    pass"
	share := func(cpus float64) (float64, string) {
		spec := newSpec(t, "python3", "-c", spin)
		spec.Limits.CPUs = cpus
		e, st := run(t, spec)
		if e.Code != 0 || e.Usage.WallSeconds < 1.5 {
			t.Fatalf("exit %+v\nmeta: %s", e, st[runlog.Meta])
		}
		return e.Usage.CPUSeconds / e.Usage.WallSeconds, string(st[runlog.Meta])
	}
	limited, meta := share(0.1)
	if !strings.Contains(meta, "cpu limit 0.1 CPUs enforced by cgroup") {
		t.Errorf("the run's log does not say how its CPU limit is enforced: %q", meta)
	}
	if limited > 0.15 {
		t.Errorf("under --cpus 0.1 the loop used %.2f CPUs", limited)
	}
	free, _ := share(0)
	t.Logf("CPUs used: %.3f under --cpus 0.1, %.3f with no limit", limited, free)
	if free < 0.25 {
		t.Errorf("with no limit the loop used only %.2f CPUs: the test cannot tell a limit from a busy machine", free)
	}
}
