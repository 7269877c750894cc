package slurm

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/runlog"
)

// Fault: a running job cancelled with scancel behind runbox's back -> the exit record is not "cancelled" (runbox's own stop) but says the job was cancelled outside runbox, ended by SIGTERM
func TestScancelOutsideRunboxIsNotAStop(t *testing.T) {
	sb := needSlurm(t)
	spec := testSpec(t, `echo ready; sleep 300`)
	h := start(t, sb, spec)
	eventually(t, 30*time.Second, "the job's first output", func() bool {
		return strings.Contains(streams(t, spec.LogPath)[runlog.Stdout], "ready")
	})
	job := strings.TrimPrefix(h.Ref(), "slurm:")
	if out, err := exec.Command("scancel", job).CombinedOutput(); err != nil {
		t.Fatalf("scancel %s: %v %s", job, err, out)
	}
	e := wait(t, h, time.Minute)
	if e.Cancelled || !strings.Contains(e.Outside, "cancelled outside runbox") || !strings.Contains(e.Outside, "while it ran") {
		t.Fatalf("exit after an outside scancel = %+v, want not Cancelled, Outside naming the cancel", e)
	}
	if e.Code != 143 || e.Signal != "SIGTERM" {
		t.Errorf("exit code %d signal %q, want 143 SIGTERM (scancel's)", e.Code, e.Signal)
	}
	t.Logf("outside: %s", e.Outside)
}

// Fault: a job cancelled in Slurm's queue behind runbox's back -> the exit record says it was cancelled outside runbox before it started
func TestScancelOfPendingJobOutsideRunbox(t *testing.T) {
	sb := needSlurm(t)
	spec := testSpec(t, `echo never`)
	spec.Slurm = &sandbox.SlurmSpec{Options: map[string]string{"begin": "now+1hour"}} // held PENDING (BeginTime)
	h := start(t, sb, spec)
	job := strings.TrimPrefix(h.Ref(), "slurm:")
	if out, err := exec.Command("scancel", job).CombinedOutput(); err != nil {
		t.Fatalf("scancel %s: %v %s", job, err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := h.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if e.Cancelled || !strings.Contains(e.Outside, "before it started") {
		t.Fatalf("exit after an outside scancel of a pending job = %+v, want Outside saying it never started", e)
	}
}
