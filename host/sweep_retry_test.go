package host

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/store"
)

// Retries of sweep members with real process runs: the retry joins the
// member's sweep as its next attempt.

func (te *testEngine) sweepOf(t *testing.T, req api.SweepRequest) *store.Sweep {
	t.Helper()
	sw, err := te.SubmitSweep(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return sw
}

func (te *testEngine) waitSweep(t *testing.T, id string) *api.Sweep {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	v, err := te.WaitSweep(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Done {
		t.Fatalf("sweep %s not done: %+v", id, v)
	}
	return v
}

func sweepReq(t *testing.T, param string, vals []string, parallel, maxFailures int, cmd ...string) api.SweepRequest {
	var sets []map[string]string
	for _, v := range vals {
		sets = append(sets, map[string]string{param: v})
	}
	return api.SweepRequest{Run: processRequest(t, cmd...), ParamNames: []string{param}, Sets: sets, Parallel: parallel, MaxFailures: maxFailures}
}

func rowOf(t *testing.T, v *api.Sweep, index int) api.SweepRun {
	t.Helper()
	for _, r := range v.Runs {
		if r.Index == index {
			return r
		}
	}
	t.Fatalf("sweep %s has no row %d: %+v", v.ID, index, v.Runs)
	return api.SweepRun{}
}

// A member that failed, retried with the fault fixed (an env override):
// the sweep still has 3 rows, the member's row is the retry (attempt 2,
// succeeded, the first attempt as previous), the counts are of members,
// and the retry kept its params and lineage.
func TestRetryOfSweepMemberJoinsItsSweep(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 4)
	ctx := context.Background()
	sw := te.sweepOf(t, sweepReq(t, "x", []string{"1", "2", "3"}, 0, 0, "sh", "-c", `test "$FIX" = 1 || test {x} != 2`))
	v := te.waitSweep(t, sw.ID)
	failed := rowOf(t, v, 1)
	if failed.State != api.Failed || failed.Attempt != 1 || len(failed.Previous) != 0 {
		t.Fatalf("member 1 before the retry: %+v", failed)
	}
	run, err := te.Retry(ctx, failed.ID, api.RunRequest{Env: []string{"FIX=1"}})
	if err != nil {
		t.Fatal(err)
	}
	if c := run.Campaign; c == nil || c.Sweep != sw.ID || c.Index != 1 || c.Params["x"] != "2" || run.ParentID != failed.ID {
		t.Fatalf("the retry is not member 1 of the sweep: campaign %+v parent %q", run.Campaign, run.ParentID)
	}
	v = te.waitSweep(t, sw.ID) // returns only once the retry has ended
	if len(v.Runs) != 3 || v.Counts[api.Succeeded] != 3 || v.Counts[api.Failed] != 0 {
		t.Fatalf("after the retry: %d rows, counts %v", len(v.Runs), v.Counts)
	}
	row := rowOf(t, v, 1)
	if row.ID != run.ID || row.State != api.Succeeded || row.Attempt != 2 || !slices.Equal(row.Previous, []string{failed.ID}) || row.Params["x"] != "2" {
		t.Errorf("member 1's row: %+v", row)
	}
	if r := rowOf(t, v, 0); r.Attempt != 1 || r.Previous != nil {
		t.Errorf("member 0's row: %+v", r)
	}
	// compare --sweep puts the members side by side: the retry, not
	// the attempt it replaced.
	cmp, err := te.Compare(ctx, CompareQuery{Sweep: sw.ID})
	if err != nil {
		t.Fatal(err)
	}
	var compared []string
	for _, r := range cmp.Rows {
		compared = append(compared, r.RunID)
	}
	if len(compared) != 3 || !slices.Contains(compared, run.ID) || slices.Contains(compared, failed.ID) {
		t.Errorf("compare --sweep: %v (retry %s, first attempt %s)", compared, run.ID, failed.ID)
	}
	if ls, err := te.ListSweeps(ctx); err != nil || len(ls) != 1 || ls[0].Counts[api.Succeeded] != 3 || !ls[0].Done {
		t.Errorf("sweep list: %+v, %v", ls, err)
	}
}

// --max-failures counts a member once, by its latest attempt: a member
// that fails again on retry is still one failure (counting attempts, the
// sweep would stop at 2).
func TestSweepMaxFailuresCountsAMemberOnce(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 4)
	sw := te.sweepOf(t, sweepReq(t, "i", []string{"1", "2"}, 0, 2, "sh", "-c", "test {i} != 1"))
	v := te.waitSweep(t, sw.ID)
	first := rowOf(t, v, 0)
	run, err := te.Retry(context.Background(), first.ID, api.RunRequest{})
	if err != nil {
		t.Fatal(err)
	}
	v = te.waitSweep(t, sw.ID)
	if row := rowOf(t, v, 0); row.ID != run.ID || row.State != api.Failed || row.Attempt != 2 {
		t.Fatalf("member 0: %+v", row)
	}
	if v.Stopped != "" || v.Counts[api.Failed] != 1 {
		t.Errorf("one failed member counted as %v; stopped %q", v.Counts, v.Stopped)
	}
	// A daemon that starts again reads the same count from the store.
	te.mu.Lock()
	delete(te.camp.sweeps, sw.ID)
	st := te.sweepStateLocked(sw.ID)
	te.mu.Unlock()
	if len(st.failed) != 1 || !st.failed[0] || !st.replaced[first.ID] {
		t.Errorf("reloaded: failed %v, replaced %v", st.failed, st.replaced)
	}
}

// A sweep stopped by --max-failures is reopened by a retry of its failed
// member: the retry runs (not cancelled as the stopped sweep's queued
// members were), the stop is lifted, the cancelled members stay
// cancelled.
func TestRetryReopensAStoppedSweep(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 4)
	sw := te.sweepOf(t, sweepReq(t, "i", []string{"1", "2", "3"}, 1, 1, "sh", "-c", `test "$FIX" = 1 || test {i} != 1`))
	v := te.waitSweep(t, sw.ID)
	if v.Stopped == "" || v.Counts[api.Failed] != 1 || v.Counts[api.Cancelled] != 2 {
		t.Fatalf("before the retry: stopped %q, counts %v", v.Stopped, v.Counts)
	}
	if _, err := te.Retry(context.Background(), rowOf(t, v, 0).ID, api.RunRequest{Env: []string{"FIX=1"}}); err != nil {
		t.Fatal(err)
	}
	v = te.waitSweep(t, sw.ID)
	if v.Stopped != "" || v.Counts[api.Succeeded] != 1 || v.Counts[api.Cancelled] != 2 || rowOf(t, v, 0).Attempt != 2 {
		t.Errorf("after the retry: stopped %q, counts %v, rows %+v", v.Stopped, v.Counts, v.Runs)
	}
}

// A member has one live attempt at a time: retrying an earlier attempt
// while the latest still runs is refused (the same retry sent again gets
// its run), and a sweep stop reaches the retry.
func TestRetryOfAMemberWithALiveAttemptIsRefused(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 4)
	ctx := context.Background()
	sw := te.sweepOf(t, sweepReq(t, "s", []string{"0", "30"}, 0, 0, "sleep", "{s}"))
	for {
		v, err := te.SweepStatus(ctx, sw.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		if rowOf(t, v, 0).State.Terminal() {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	v, _ := te.SweepStatus(ctx, sw.ID, "")
	first := rowOf(t, v, 0).ID
	// The retry sleeps 30 s: the member's index, not its command, is what joins it.
	req := api.RunRequest{Command: []string{"sleep", "30"}, IdempotencyKey: "k1"}
	retry, err := te.Retry(ctx, first, req)
	if err != nil {
		t.Fatal(err)
	}
	// The same request sent again (its answer lost) gets the same run.
	if again, err := te.Retry(ctx, first, req); err != nil || again.ID != retry.ID {
		t.Fatalf("the retry sent again: %v, %v (want run %s)", again, err, retry.ID)
	}
	_, err = te.Retry(ctx, first, api.RunRequest{})
	if err == nil || !strings.Contains(err.Error(), "still being run by "+retry.ID) {
		t.Fatalf("a second live attempt of member 0: %v", err)
	}
	if _, err := te.StopSweep(ctx, sw.ID); err != nil {
		t.Fatal(err)
	}
	v = te.waitSweep(t, sw.ID)
	if row := rowOf(t, v, 0); row.ID != retry.ID || row.State != api.Cancelled {
		t.Errorf("sweep stop did not reach the retry: %+v", row)
	}
}

func TestMemberAttempts(t *testing.T) {
	t0 := time.Unix(1000, 0)
	run := func(id string, idx int, at int) *store.Run {
		return &store.Run{ID: id, CreatedAt: t0.Add(time.Duration(at) * time.Second), Campaign: &store.Campaign{Sweep: "s", Index: idx}}
	}
	got := memberAttempts([]*store.Run{run("c", 1, 5), run("a", 0, 1), run("b", 1, 2), run("d", 1, 5)})
	ids := func(rs []*store.Run) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	if len(got) != 2 || !slices.Equal(ids(got[0]), []string{"a"}) || !slices.Equal(ids(got[1]), []string{"b", "c", "d"}) {
		t.Errorf("got %v / %v", ids(got[0]), ids(got[1]))
	}
}
