package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
)

// `runbox retry` of a sweep member through the real CLI and daemon: the
// retry is the member's next attempt, in its sweep.

func memberRow(t *testing.T, sw *api.Sweep, index int) api.SweepRun {
	t.Helper()
	for _, r := range sw.Runs {
		if r.Index == index {
			return r
		}
	}
	t.Fatalf("sweep %s has no row %d: %+v", sw.ID, index, sw.Runs)
	return api.SweepRun{}
}

// A 3-member sweep whose member x=2 fails, retried with the fault fixed
// by an env override: sweep wait waits for the retry (which takes 1 s),
// and the sweep's table has 3 rows, the member's being the retry
// (succeeded, attempt 2, the failed attempt as previous).
func TestSweepRetryOfAFailedMember(t *testing.T) {
	e := newEnv(t)
	id := strings.TrimSpace(e.must("sweep", "--param", "x=1,2,3", "--", "sh", "-c", `if test "$FIX" = 1; then sleep 1; else test {x} != 2; fi`))
	if res := e.run("", "sweep", "wait", id); res.code != 1 {
		t.Fatalf("sweep wait: exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
	}
	failed := memberRow(t, e.sweep(id), 1)
	if failed.State != api.Failed || failed.Attempt != 1 {
		t.Fatalf("member x=2: %+v", failed)
	}
	retry := strings.TrimSpace(e.must("retry", "-d", "-e", "FIX=1", failed.ID))
	if res := e.run("", "sweep", "wait", id); res.code != 0 {
		t.Fatalf("sweep wait after the retry: exit %d, want 0\n%s%s", res.code, res.stdout, res.stderr)
	}
	if r := e.getRun(retry); r.State != api.Succeeded || r.ParentRunID != failed.ID {
		t.Fatalf("sweep wait returned before the retry ended, or lineage lost: %s, parent %q", r.State, r.ParentRunID)
	}
	sw := e.sweep(id)
	if len(sw.Runs) != 3 || sw.Counts[api.Succeeded] != 3 || !sw.Done {
		t.Fatalf("sweep after the retry: %d rows, counts %v, done %v", len(sw.Runs), sw.Counts, sw.Done)
	}
	row := memberRow(t, sw, 1)
	if row.ID != retry || row.State != api.Succeeded || row.Attempt != 2 || !slices.Equal(row.Previous, []string{failed.ID}) || row.Params["x"] != "2" {
		t.Errorf("member x=2's row: %+v", row)
	}
	if table := e.must("sweep", "status", id); !strings.Contains(table, "succeeded (attempt 2)") {
		t.Errorf("the table does not say which attempt:\n%s", table)
	}
	// The earlier attempt is still reachable.
	if r := e.getRun(failed.ID); r.State != api.Failed {
		t.Errorf("first attempt: %s", r.State)
	}
}

// The sweep's --parallel limit counts a retry: with --parallel 1 and a
// member running 30 s, a retry of the member that finished waits with
// the sweep's reason, shows in its row as attempt 2, and sweep stop
// cancels it before it starts.
func TestSweepRetryWaitsForTheSweepLimit(t *testing.T) {
	e := newEnv(t)
	id := strings.TrimSpace(e.must("sweep", "--param", "s=0,30", "--parallel", "1", "--", "sleep", "{s}"))
	waitFor(t, func() bool {
		sw := e.sweep(id)
		return memberRow(t, sw, 0).State == api.Succeeded && memberRow(t, sw, 1).State == api.Running
	})
	first := memberRow(t, e.sweep(id), 0).ID
	retry := strings.TrimSpace(e.must("retry", "-d", first))
	waitFor(t, func() bool { return e.getRun(retry).Reason == "sweep limit 1 reached" })
	row := memberRow(t, e.sweep(id), 0)
	if row.ID != retry || row.State != api.Queued || row.Reason != "sweep limit 1 reached" || row.Attempt != 2 {
		t.Errorf("member 0's row while its retry waits: %+v", row)
	}
	e.must("sweep", "stop", id)
	if res := e.run("", "sweep", "wait", id); res.code != 1 {
		t.Errorf("sweep wait after stop: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if r := e.getRun(retry); r.State != api.Cancelled || r.StartedAt != nil {
		t.Errorf("the retry after sweep stop: %s, started %v", r.State, r.StartedAt)
	}
}
