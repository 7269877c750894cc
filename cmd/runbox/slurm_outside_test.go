package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
)

// Fault: a Slurm job cancelled with scancel behind runbox's back -> the run is not reported as stopped by the user through runbox: it fails as TERMINATED with a reason that says it was cancelled outside runbox
func TestSlurmScancelOutsideRunboxIsReportedAsSuch(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	id := strings.TrimSpace(e.must("run", "-d", "--sandbox", "slurm", "--", "sh", "-c", "echo started; sleep 300"))
	waitFor(t, func() bool { return e.getRun(id).State == api.Running })
	job := strings.TrimPrefix(e.getRun(id).Ref, "slurm:")
	if out, err := exec.Command("scancel", job).CombinedOutput(); err != nil {
		t.Fatalf("scancel %s: %v %s", job, err, out)
	}
	e.run("", "wait", id)
	r := e.getRun(id)
	t.Logf("after scancel: %s (%s)", r.State, r.Reason)
	if r.State != api.Failed || r.Failure == nil || r.Failure.Code != "TERMINATED" {
		t.Fatalf("state %s failure %+v, want failed TERMINATED", r.State, r.Failure)
	}
	if !strings.Contains(r.Failure.Message, "cancelled outside runbox") || !strings.Contains(r.Reason, "outside runbox") ||
		strings.Contains(r.Reason+r.Failure.Message, "stopped by the user") {
		t.Fatalf("reason %q / message %q do not say the job was cancelled outside runbox", r.Reason, r.Failure.Message)
	}
	// What the user reads says it too.
	if out := e.must("status", id); !strings.Contains(out, "cancelled outside runbox") {
		t.Errorf("status does not say who ended it:\n%s", out)
	}
}
