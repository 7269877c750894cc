package slurm

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/runlog"
)

// Fault: the controller goes down mid-run. It is stopped for real and
// started again; the job keeps running under slurmd meanwhile. The run
// must wait, say so, and end as the job did, with its whole output. The
// controller is the test's own (privateCluster): stopping the machine's
// shared one would fail every other package's Slurm test running beside
// this one.
func TestControllerDownMidRunWaits(t *testing.T) {
	c, sb := privateCluster(t)
	spec := testSpec(t, `for i in $(seq 1 60); do echo line $i; sleep 0.1; done`)
	h := start(t, sb, spec)
	var mu sync.Mutex
	var reasons []string
	go h.(sandbox.Queued).Started(context.Background(), func(r string) {
		mu.Lock()
		reasons = append(reasons, r)
		mu.Unlock()
	})
	eventually(t, 30*time.Second, "the job's first lines", func() bool {
		return strings.Contains(streams(t, spec.LogPath)[runlog.Stdout], "line 2\n")
	})
	c.stopController(t)
	restarted := false
	restart := func() {
		if !restarted {
			restarted = true
			c.startController(t)
		}
	}
	defer restart()
	eventually(t, 60*time.Second, "the run to say the controller is unreachable", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(reasons) > 0 && strings.Contains(reasons[len(reasons)-1], "controller unreachable")
	})
	select {
	case <-h.(*handle).done:
		t.Fatal("the run ended while the controller was down")
	default:
	}
	restart()
	e := wait(t, h, 2*time.Minute)
	if e.Code != 0 || e.Error != "" || e.Lost {
		t.Fatalf("exit = %+v, want the job's own success", e)
	}
	var want strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	if got := streams(t, spec.LogPath)[runlog.Stdout]; got != want.String() {
		t.Errorf("stdout = %q, want every line once", got)
	}
	if meta := streams(t, spec.LogPath)[runlog.Meta]; !strings.Contains(meta, "controller unreachable") {
		t.Errorf("the log does not say the controller was unreachable: %q", meta)
	}
}
