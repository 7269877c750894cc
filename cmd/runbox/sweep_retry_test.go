package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
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

// On Slurm a retried member goes as an array of its sweep's group: the
// cluster holds it (afterany) until the sweep's live array has ended, so
// under --parallel 1 the retry of the member that finished starts only
// after the member still running has ended (by the marks the runs wrote).
func TestSlurmSweepRetryWaitsForTheSweepsArray(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	marks := t.TempDir()
	id := strings.TrimSpace(e.must("sweep", "--sandbox", "slurm", "--param", "s=0,6", "--parallel", "1", "--",
		"sh", "-c", `date +%s.%N >> `+marks+`/{s}; sleep {s}; date +%s.%N >> `+marks+`/{s}`))
	waitFor(t, func() bool { return memberRow(t, e.sweep(id), 0).State == api.Succeeded })
	first := memberRow(t, e.sweep(id), 0).ID
	retry := strings.TrimSpace(e.must("retry", "-d", first))
	if res := e.run("", "sweep", "wait", id); res.code != 0 {
		t.Fatalf("sweep wait: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	sw := e.sweep(id)
	row := memberRow(t, sw, 0)
	if row.ID != retry || row.State != api.Succeeded || row.Attempt != 2 || sw.Counts[api.Succeeded] != 2 {
		t.Fatalf("member 0's row %+v, counts %v", row, sw.Counts)
	}
	arrayOf := func(runID string) string {
		a, _, _ := strings.Cut(e.getRun(runID).Ref, "_")
		return a
	}
	if a, b := arrayOf(retry), arrayOf(memberRow(t, sw, 1).ID); a == "" || a == b || !strings.HasPrefix(a, "slurm:") {
		t.Errorf("the retry's array %q, the sweep's %q: want an array of its own", a, b)
	}
	read := func(name string) []float64 {
		b, _ := os.ReadFile(filepath.Join(marks, name))
		var out []float64
		for _, f := range strings.Fields(string(b)) {
			v, _ := strconv.ParseFloat(f, 64)
			out = append(out, v)
		}
		return out
	}
	m0, m1 := read("0"), read("6")
	if len(m0) != 4 || len(m1) != 2 {
		t.Fatalf("marks: member 0 %v (want two runs), member 1 %v (want one)", m0, m1)
	}
	if m0[2] < m1[1] {
		t.Errorf("the retry started at %.3f, before the running member ended at %.3f (--parallel 1)", m0[2], m1[1])
	}
}
