package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
)

// Campaigns through the real CLI and daemon: sweeps, chains, GPUs.

func (e *env) sweep(id string, args ...string) *api.Sweep {
	e.t.Helper()
	var sw api.Sweep
	out := e.must(append([]string{"sweep", "status", "--json", id}, args...)...)
	if err := json.Unmarshal([]byte(out), &sw); err != nil {
		e.t.Fatalf("%v: %s", err, out)
	}
	return &sw
}

// warmProgress waits (bounded) until the daemon's progress plugin has
// read a run's progress. Unlike e.progressReady, the warm-up run stays up
// a while after its progress line: on this loaded machine (load 20-30)
// an `echo` run ended before the plugin had loaded and its progress was
// never read, on main as here.
func (e *env) warmProgress() {
	e.t.Helper()
	id := strings.TrimSpace(e.must("run", "-d", "--", "sh", "-c", `echo '##PROGRESS## {"step": 1, "total": 1}'; sleep 3`))
	e.must("wait", id)
	if r := e.getRun(id); r.Progress == nil {
		e.t.Fatalf("the progress plugin read nothing of a 3 s run: %+v", r)
	}
}

// maxOverlap is the most runs that were running at one moment, from the
// start and end times the store recorded.
func maxOverlap(t *testing.T, runs []*api.Run) int {
	t.Helper()
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, r := range runs {
		if r.StartedAt == nil || r.EndedAt == nil {
			t.Fatalf("run %s has no start or end (%s)", r.ID, r.State)
		}
		edges = append(edges, edge{*r.StartedAt, 1}, edge{*r.EndedAt, -1})
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at.Equal(edges[j].at) {
			return edges[i].delta < edges[j].delta // an end before a start at the same instant
		}
		return edges[i].at.Before(edges[j].at)
	})
	n, most := 0, 0
	for _, e := range edges {
		n += e.delta
		most = max(most, n)
	}
	return most
}

func TestSweepParallelLimitParamsAndSortedTable(t *testing.T) {
	e := newEnv(t)
	e.warmProgress()
	// loss = lr * bs: the member lr=0.1 bs=8 (0.8) is best.
	prog := `echo "##PROGRESS## {\"step\": 1, \"total\": 1, \"metrics\": {\"loss\": $(awk 'BEGIN{print {lr} * {bs}}')}}"; sleep 0.6; echo lr=$RUNBOX_PARAM_LR`
	id := strings.TrimSpace(e.must("sweep", "--param", "lr=0.1,0.2", "--param", "bs=8,16", "--parallel", "2", "--", "sh", "-c", prog))
	res := e.run("", "sweep", "wait", id)
	if res.code != 0 {
		t.Fatalf("sweep wait: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	sw := e.sweep(id)
	if sw.Members != 4 || len(sw.Runs) != 4 || sw.Counts[api.Succeeded] != 4 {
		t.Fatalf("sweep: %+v", sw)
	}
	var runs []*api.Run
	grid := map[string]bool{}
	for _, m := range sw.Runs {
		r := e.getRun(m.ID)
		runs = append(runs, r)
		grid[m.Params["lr"]+"/"+m.Params["bs"]] = true
		if out := e.must("logs", m.ID); !strings.Contains(out, "lr="+m.Params["lr"]) {
			t.Errorf("member %v: RUNBOX_PARAM_LR not set: %q", m.Params, out)
		}
	}
	if len(grid) != 4 {
		t.Errorf("params recorded: %v", grid)
	}
	if n := maxOverlap(t, runs); n > 2 {
		t.Errorf("%d members ran at once under --parallel 2", n)
	} else if n < 2 {
		t.Logf("note: at most %d member ran at once", n)
	}
	sorted := e.sweep(id, "--sort", "loss")
	var losses []float64
	for _, m := range sorted.Runs {
		l, ok := m.Metrics["loss"]
		if !ok {
			t.Fatalf("member %v has no loss metric: %+v", m.Params, m)
		}
		losses = append(losses, float64(l.Best))
	}
	if !sort.Float64sAreSorted(losses) {
		t.Errorf("--sort loss: %v not best (lowest) first", losses)
	}
	table := e.must("sweep", "status", id, "--sort", "loss")
	if !strings.Contains(table, "loss (last/best)") || !strings.Contains(table, "lr") {
		t.Errorf("table:\n%s", table)
	}
	if ls := e.must("sweep", "ls"); !strings.Contains(ls, id) {
		t.Errorf("sweep ls:\n%s", ls)
	}
}

func TestSweepMaxFailuresCancelsTheRest(t *testing.T) {
	e := newEnv(t)
	id := strings.TrimSpace(e.must("sweep", "--param", "i=1,2,3,4", "--parallel", "1", "--max-failures", "1", "--", "sh", "-c", "exit 3"))
	if res := e.run("", "sweep", "wait", id); res.code != 1 {
		t.Fatalf("sweep wait: exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
	}
	sw := e.sweep(id)
	if sw.Counts[api.Failed] != 1 || sw.Counts[api.Cancelled] != 3 {
		t.Fatalf("counts %v, want 1 failed and 3 cancelled", sw.Counts)
	}
	for _, m := range sw.Runs {
		if m.State == api.Cancelled {
			if r := e.getRun(m.ID); !strings.Contains(r.Reason, "--max-failures 1") || r.StartedAt != nil {
				t.Errorf("cancelled member: reason %q, started %v", r.Reason, r.StartedAt)
			}
		}
	}
	if !strings.Contains(sw.Stopped, "failed") {
		t.Errorf("sweep stopped: %q", sw.Stopped)
	}
}

func TestSweepBadInput(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "--param", "a=1", "--", "echo", "{b}"}, "no param is called b"},
		{[]string{"sweep", "--param", "a=", "--", "echo", "{a}"}, "has no values"},
		{[]string{"sweep", "--param", "a=1,2,3,4,5,6,7,8,9,10", "--param", "b=1,2,3,4,5,6,7,8,9,10", "--param", "c=1,2,3,4,5,6,7,8,9,10", "--param", "d=1,2,3,4,5,6,7,8,9,10,11", "--", "echo", "{a}"}, "--yes"},
		{[]string{"sweep", "--", "echo"}, "--param"},
	} {
		res := e.run("", tc.args...)
		if res.code == 0 || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, res.code, res.stderr, tc.want)
		}
	}
	// The shell's own ${a} is not a placeholder.
	id := strings.TrimSpace(e.must("sweep", "--param", "a=1", "--", "sh", "-c", "x=ok; echo ${x}-{a}"))
	e.must("sweep", "wait", id)
	sw := e.sweep(id)
	if out := e.must("logs", sw.Runs[0].ID); strings.TrimSpace(out) != "ok-1" {
		t.Errorf("output %q", out)
	}
}

func TestAfterSuccessAndFailure(t *testing.T) {
	e := newEnv(t)
	a := strings.TrimSpace(e.must("run", "-d", "--", "sh", "-c", "sleep 1"))
	b := strings.TrimSpace(e.must("run", "-d", "--after", a, "--", "echo", "b"))
	if r := e.getRun(b); r.State != api.Queued || !strings.Contains(r.Reason, "waiting for") {
		t.Errorf("dependent while its dependency runs: %s %q", r.State, r.Reason)
	}
	if ls := e.must("ls"); !strings.Contains(ls, "waiting for") {
		t.Errorf("ls does not say why the run waits:\n%s", ls)
	}
	e.must("wait", b)
	ra, rb := e.getRun(a), e.getRun(b)
	if rb.State != api.Succeeded || rb.StartedAt.Before(*ra.EndedAt) {
		t.Errorf("b %s started %v, a ended %v", rb.State, rb.StartedAt, ra.EndedAt)
	}

	c := strings.TrimSpace(e.must("run", "-d", "--", "sh", "-c", "sleep 0.5; exit 3"))
	d := strings.TrimSpace(e.must("run", "-d", "--after", c, "--", "echo", "d"))
	anyRun := strings.TrimSpace(e.must("run", "-d", "--after", c, "--after-any", "--", "echo", "any"))
	e.run("", "wait", d)
	rd := e.getRun(d)
	if rd.State != api.Cancelled || rd.StartedAt != nil {
		t.Errorf("dependent of a failed run: %s %q", rd.State, rd.Reason)
	}
	// The code once, as for any end, and the dependency by its number, as
	// the waiting reason names it: "CANCELLED: dependency 3 failed".
	if want := "dependency " + e.getRun(c).ShortID + " failed"; rd.Failure == nil || rd.Failure.Message != want || rd.Reason != "CANCELLED: "+want {
		t.Errorf("dependent of a failed run: reason %q, failure %+v, want the message %q", rd.Reason, rd.Failure, want)
	}
	e.must("wait", anyRun)
	// A dependency that already failed: cancelled at once, with the reason.
	late := strings.TrimSpace(e.must("run", "-d", "--after", c, "--", "echo", "late"))
	e.run("", "wait", late)
	if r := e.getRun(late); r.State != api.Cancelled || !strings.Contains(r.Reason, "failed") {
		t.Errorf("after a failed run: %s %q", r.State, r.Reason)
	}
	res := e.run("", "run", "-d", "--after", "nosuchrun", "--", "true")
	if res.code == 0 || !strings.Contains(res.stderr, "no such run") {
		t.Errorf("unknown dependency: exit %d %q", res.code, res.stderr)
	}
}

func TestChainAcrossDaemonKill9(t *testing.T) {
	e := newEnv(t)
	a := strings.TrimSpace(e.must("run", "-d", "--", "sh", "-c", "sleep 2"))
	b := strings.TrimSpace(e.must("run", "-d", "--after", a, "--", "echo", "b"))
	old := e.daemonPID()
	e.killDaemon(syscall.SIGKILL)
	res := e.run("", "wait", "--timeout", "60s", b)
	if res.code != 0 {
		t.Fatalf("wait b after restart: exit %d %s %s", res.code, res.stdout, res.stderr)
	}
	if e.daemonPID() == old {
		t.Fatal("no new daemon")
	}
	ra, rb := e.getRun(a), e.getRun(b)
	if ra.State != api.Succeeded || rb.State != api.Succeeded || rb.StartedAt.Before(*ra.EndedAt) {
		t.Errorf("a %s (ended %v), b %s (started %v)", ra.State, ra.EndedAt, rb.State, rb.StartedAt)
	}
}

func TestSweepCarriesOnAfterDaemonKill9(t *testing.T) {
	e := newEnv(t)
	marks := t.TempDir()
	id := strings.TrimSpace(e.must("sweep", "--param", "i=1,2,3,4,5,6", "--parallel", "2", "--",
		"sh", "-c", "echo ran >> "+marks+"/{i}; sleep 1"))
	time.Sleep(300 * time.Millisecond) // the first two have started
	e.killDaemon(syscall.SIGKILL)
	if res := e.run("", "sweep", "wait", id); res.code != 0 {
		t.Fatalf("sweep wait after kill -9: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	sw := e.sweep(id)
	if len(sw.Runs) != 6 || sw.Counts[api.Succeeded] != 6 {
		t.Fatalf("after restart: %d members, counts %v", len(sw.Runs), sw.Counts)
	}
	var runs []*api.Run
	for _, m := range sw.Runs {
		runs = append(runs, e.getRun(m.ID))
		out, err := exec.Command("cat", marks+"/"+m.Params["i"]).Output()
		if err != nil || strings.Count(string(out), "ran") != 1 {
			t.Errorf("member i=%s ran %d times (%v)", m.Params["i"], strings.Count(string(out), "ran"), err)
		}
	}
	if n := maxOverlap(t, runs); n > 2 {
		t.Errorf("%d members ran at once under --parallel 2 across the restart", n)
	}
}

func TestGPUsHandedOutAndWaitedFor(t *testing.T) {
	e := newEnv(t, "RUNBOX_GPUS=0,1")
	cmd := []string{"sh", "-c", `echo "cvd=$CUDA_VISIBLE_DEVICES"; sleep 1.5`}
	var ids []string
	for range 3 {
		ids = append(ids, strings.TrimSpace(e.must(append([]string{"run", "-d", "--gpus", "1", "--"}, cmd...)...)))
	}
	third := e.getRun(ids[2])
	if third.State != api.Queued || !strings.Contains(third.Reason, "waiting for 1 GPU (none free)") {
		t.Errorf("third run: %s %q", third.State, third.Reason)
	}
	for _, id := range ids {
		e.must("wait", id)
	}
	var got []string
	for _, id := range ids {
		out := strings.TrimSpace(e.must("logs", id))
		got = append(got, strings.TrimPrefix(out, "cvd="))
	}
	if got[0] == got[1] || !slices.Contains([]string{"0", "1"}, got[0]) || !slices.Contains([]string{"0", "1"}, got[1]) {
		t.Errorf("first two runs got CUDA_VISIBLE_DEVICES %q and %q", got[0], got[1])
	}
	if !slices.Contains([]string{"0", "1"}, got[2]) {
		t.Errorf("third run got %q", got[2])
	}
	r0, r1, r2 := e.getRun(ids[0]), e.getRun(ids[1]), e.getRun(ids[2])
	first := r0.EndedAt
	if r1.EndedAt.Before(*first) {
		first = r1.EndedAt
	}
	if r2.StartedAt.Before(*first) {
		t.Errorf("third run started %v before a GPU was freed (%v)", r2.StartedAt, first)
	}
	res := e.run("", "run", "-d", "--gpus", "3", "--", "true")
	if res.code == 0 || !strings.Contains(res.stderr, "2 known (0, 1)") {
		t.Errorf("--gpus 3 with 2 known: exit %d %q", res.code, res.stderr)
	}
}

func TestGPUsWithNoneKnownAreRefused(t *testing.T) {
	if _, err := exec.LookPath("nvidia-smi"); err == nil {
		t.Skip("this machine has nvidia-smi: its GPUs are known")
	}
	e := newEnv(t, "RUNBOX_GPUS=")
	res := e.run("", "run", "-d", "--gpus", "1", "--", "true")
	if res.code == 0 || !strings.Contains(res.stderr, "RUNBOX_GPUS=0,1") {
		t.Errorf("--gpus with none known: exit %d %q", res.code, res.stderr)
	}
}

// A sweep on Slurm is ONE job array (--array=0-3%2): every member's run
// follows its own task of it (ref slurm:ARRAY_INDEX), the cluster holds
// them to two at once (ArrayTaskThrottle=2, and the start and end times
// the store recorded), each member has its params and output, and
// stopping one member while it is pending cancels that task alone: the
// member after it still runs and succeeds.
func TestSlurmSweepIsOneJobArray(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	id := strings.TrimSpace(e.must("sweep", "--sandbox", "slurm", "--param", "i=1,2,3,4", "--parallel", "2", "--",
		"sh", "-c", `echo "member {i} $RUNBOX_PARAM_I"; if [ {i} -le 2 ]; then sleep 5; fi`))
	sw := e.sweep(id)
	if len(sw.Runs) != 4 {
		t.Fatalf("%d members", len(sw.Runs))
	}
	third := sw.Runs[2].ID // i=3, task 2: pending behind the two that sleep
	waitFor(t, func() bool { return strings.Contains(e.getRun(third).Reason, "_2") })
	if r := e.getRun(third); r.State != api.Preparing {
		t.Fatalf("member i=3 is %s (%q) before its stop, want pending in Slurm", r.State, r.Reason)
	}
	e.must("stop", third)
	e.run("", "sweep", "wait", id) // exits non-zero: a member was cancelled
	sw = e.sweep(id)
	var runs []*api.Run
	array := ""
	for _, m := range sw.Runs {
		r := e.getRun(m.ID)
		a, task, ok := strings.Cut(strings.TrimPrefix(r.Ref, "slurm:"), "_")
		if m.ID == third {
			if r.State != api.Cancelled || r.StartedAt != nil {
				t.Errorf("stopped member: %s %q, started %v (it never ran)", r.State, r.Reason, r.StartedAt)
			}
			continue
		}
		runs = append(runs, r)
		if r.State != api.Succeeded {
			t.Errorf("member i=%s: %s %q", m.Params["i"], r.State, r.Reason)
		}
		if !ok || task != fmt.Sprint(m.Index) {
			t.Errorf("member %d: ref %q, want slurm:ARRAY_%d", m.Index, r.Ref, m.Index)
		}
		if array == "" {
			array = a
		} else if a != array {
			t.Errorf("member %d is in job %s, others in %s: not one array", m.Index, a, array)
		}
		want := "member " + m.Params["i"] + " " + m.Params["i"]
		if out := e.must("logs", m.ID); !strings.Contains(out, want) {
			t.Errorf("member i=%s output %q, want %q", m.Params["i"], out, want)
		}
	}
	out, err := exec.Command("scontrol", "show", "job", "-o", array).Output()
	if err != nil {
		t.Fatalf("scontrol show job %s: %v", array, err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.Contains(l, "ArrayJobId="+array+" ") || !strings.Contains(l, "ArrayTaskThrottle=2 ") {
			t.Errorf("not a task of array %s with throttle 2: %.160s", array, l)
		}
	}
	if n := maxOverlap(t, runs); n > 2 {
		t.Errorf("%d Slurm members ran at once under --parallel 2", n)
	}
}

// --max-failures on a Slurm sweep cancels the array's tasks still
// pending, each with the reason; the members already running go on. The
// member that fails ends at once; the others run until the test writes
// a go file, which it does once task 3 is cancelled: until then %2 holds
// task 3, however long the daemon takes to see the failure (a fixed
// sleep of 4 s was too short for a loaded machine). Slurm itself starts
// task 2 in the freed place before the daemon can: it may run or not.
func TestSlurmSweepMaxFailuresCancelsPendingTasks(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	marks := t.TempDir()
	release := func() { _ = os.WriteFile(marks+"/go", nil, 0o644) }
	t.Cleanup(release) // before the dir goes: the members' loops end (60 s at most in any case)
	id := strings.TrimSpace(e.must("sweep", "--sandbox", "slurm", "--param", "i=1,2,3,4", "--parallel", "2", "--max-failures", "1", "--",
		"sh", "-c", `if [ {i} = 1 ]; then exit 3; fi; for n in $(seq 600); do [ -e `+marks+`/go ] && break; sleep 0.1; done`))
	var third string
	for _, m := range e.sweep(id).Runs {
		if m.Index == 3 {
			third = m.ID
		}
	}
	waitFor(t, func() bool { return e.getRun(third).State.Terminal() })
	release()
	e.run("", "sweep", "wait", id)
	sw := e.sweep(id)
	// Member 1 runs beside member 0 unless the cluster is too busy to
	// start both; either way it is not cut short.
	want := map[int]api.State{0: api.Failed, 3: api.Cancelled}
	for _, m := range sw.Runs {
		r := e.getRun(m.ID)
		if w, ok := want[m.Index]; ok && r.State != w {
			t.Errorf("member %d: %s %q, want %s", m.Index, r.State, r.Reason, w)
		}
		switch r.State {
		case api.Succeeded, api.Failed:
		case api.Cancelled:
			if !strings.Contains(r.Reason, "--max-failures 1") || r.StartedAt != nil {
				t.Errorf("cancelled member %d: reason %q, started %v", m.Index, r.Reason, r.StartedAt)
			}
		default:
			t.Errorf("member %d: %s %q", m.Index, r.State, r.Reason)
		}
	}
	if !strings.Contains(sw.Stopped, "failed") {
		t.Errorf("sweep stopped: %q", sw.Stopped)
	}
}

// sweep stop on Slurm cancels the whole array (one scancel): running and
// pending members alike end cancelled by runbox, not "cancelled outside
// runbox", and nothing of the array is left in the queue.
func TestSlurmSweepStopCancelsTheArray(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	id := strings.TrimSpace(e.must("sweep", "--sandbox", "slurm", "--param", "i=1,2,3,4", "--parallel", "2", "--",
		"sh", "-c", "sleep 60"))
	first := e.sweep(id).Runs[0].ID
	var array string
	waitFor(t, func() bool { // in Slurm: pending (its reason names the task) or running
		r := e.getRun(first)
		m := regexp.MustCompile(`(\d+)_0\b`).FindStringSubmatch(r.Ref + " " + r.Reason)
		if m != nil {
			array = m[1]
		}
		return m != nil
	})
	e.must("sweep", "stop", id)
	e.run("", "sweep", "wait", id)
	sw := e.sweep(id)
	if sw.Counts[api.Cancelled] != 4 {
		t.Errorf("counts %v, want 4 cancelled", sw.Counts)
	}
	for _, m := range sw.Runs {
		if r := e.getRun(m.ID); r.State != api.Cancelled || strings.Contains(r.Reason, "outside") {
			t.Errorf("member %d: %s %q", m.Index, r.State, r.Reason)
		}
	}
	waitFor(t, func() bool {
		out, _ := exec.Command("squeue", "-h", "-r", "-j", array, "-t", "PENDING,RUNNING", "-o", "%i").Output()
		return strings.TrimSpace(string(out)) == ""
	})
}

// A daemon killed while a Slurm sweep's array runs: the next one
// re-attaches each member to its task; every member runs once, all in
// the one array, never more than two at once.
func TestSlurmSweepArrayAcrossDaemonKill9(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	marks := t.TempDir()
	id := strings.TrimSpace(e.must("sweep", "--sandbox", "slurm", "--param", "i=1,2,3,4", "--parallel", "2", "--",
		"sh", "-c", "echo ran >> "+marks+"/{i}; sleep 2"))
	first := e.sweep(id).Runs[0].ID
	waitFor(t, func() bool { return strings.HasPrefix(e.getRun(first).Ref, "slurm:") })
	e.killDaemon(syscall.SIGKILL)
	if res := e.run("", "sweep", "wait", id); res.code != 0 {
		t.Fatalf("sweep wait after kill -9: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	sw := e.sweep(id)
	if sw.Counts[api.Succeeded] != 4 {
		t.Fatalf("after restart: counts %v", sw.Counts)
	}
	var runs []*api.Run
	arrays := map[string]bool{}
	for _, m := range sw.Runs {
		r := e.getRun(m.ID)
		runs = append(runs, r)
		a, _, _ := strings.Cut(strings.TrimPrefix(r.Ref, "slurm:"), "_")
		arrays[a] = true
		b, err := os.ReadFile(marks + "/" + m.Params["i"])
		if err != nil || strings.Count(string(b), "ran") != 1 {
			t.Errorf("member i=%s ran %d times (%v)", m.Params["i"], strings.Count(string(b), "ran"), err)
		}
	}
	if len(arrays) != 1 {
		t.Errorf("members in jobs %v, want one array", arrays)
	}
	if n := maxOverlap(t, runs); n > 2 {
		t.Errorf("%d members ran at once under --parallel 2 across the restart", n)
	}
}

// A Slurm sweep larger than the cluster's MaxArraySize (made 2 here by
// RUNBOX_SLURM_MAX_ARRAY; the real one is 1001) goes as chained arrays
// of at most 2 tasks (ids 0..1): five members with --parallel 2 are
// three arrays; every member runs once with its params and output;
// never more than two run at once, and no member of an array starts
// before every member of the array before it ended (times the members
// took themselves, in the job); each array's dir under the sweep is gone
// once its tasks ended.
func TestSlurmSweepSplitIntoChainedArrays(t *testing.T) {
	needSlurm(t)
	e := newEnv(t, "RUNBOX_SLURM_MAX_ARRAY=2")
	marks := t.TempDir()
	id := strings.TrimSpace(e.must("sweep", "--sandbox", "slurm", "--param", "i=1,2,3,4,5", "--parallel", "2", "--",
		"sh", "-c", `date +%s.%N >> `+marks+`/{i}; echo "member {i} $RUNBOX_PARAM_I"; sleep 1; date +%s.%N >> `+marks+`/{i}`))
	if res := e.run("", "sweep", "wait", id); res.code != 0 {
		t.Fatalf("sweep wait: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	sw := e.sweep(id)
	if sw.Counts[api.Succeeded] != 5 {
		t.Fatalf("counts %v, want 5 succeeded", sw.Counts)
	}
	type span struct{ start, end float64 }
	byArray := map[int64][]span{}
	var all []span
	for _, m := range sw.Runs {
		r := e.getRun(m.ID)
		a, task, ok := strings.Cut(strings.TrimPrefix(r.Ref, "slurm:"), "_")
		n, err := strconv.ParseInt(a, 10, 64)
		if !ok || err != nil || (task != "0" && task != "1") {
			t.Errorf("member %d: ref %q, want slurm:ARRAY_0 or _1", m.Index, r.Ref)
		}
		if out, want := e.must("logs", m.ID), "member "+m.Params["i"]+" "+m.Params["i"]; !strings.Contains(out, want) {
			t.Errorf("member i=%s output %q, want %q", m.Params["i"], out, want)
		}
		b, _ := os.ReadFile(filepath.Join(marks, m.Params["i"]))
		f := strings.Fields(string(b))
		if len(f) != 2 {
			t.Fatalf("member i=%s marks %q: it ran %d times, want once", m.Params["i"], b, len(f)/2)
		}
		s, _ := strconv.ParseFloat(f[0], 64)
		en, _ := strconv.ParseFloat(f[1], 64)
		byArray[n] = append(byArray[n], span{s, en})
		all = append(all, span{s, en})
	}
	if len(byArray) != 3 {
		t.Fatalf("members in arrays %v, want three of at most two", byArray)
	}
	for _, sp := range all {
		n := 0
		for _, o := range all {
			if o.start <= sp.start && o.end > sp.start {
				n++
			}
		}
		if n > 2 {
			t.Errorf("%d members ran at once under --parallel 2: %v", n, all)
		}
	}
	ids := make([]int64, 0, len(byArray))
	for a := range byArray {
		ids = append(ids, a)
	}
	slices.Sort(ids)
	for i := 1; i < len(ids); i++ {
		for _, prev := range byArray[ids[i-1]] {
			for _, next := range byArray[ids[i]] {
				if next.start < prev.end {
					t.Errorf("array %d started a member at %.3f before array %d's member ended at %.3f", ids[i], next.start, ids[i-1], prev.end)
				}
			}
		}
	}
	waitFor(t, func() bool {
		left, _ := filepath.Glob(filepath.Join(e.home, "sweeps", id, "slurm-*"))
		return len(left) == 0
	})
}

// A run waiting for another shows that run's progress; `sweep --wait`
// blocks until the end; `sweep stop` cancels the members not started.
func TestWaitingReasonShowsProgressAndSweepStop(t *testing.T) {
	e := newEnv(t)
	e.warmProgress()
	a := strings.TrimSpace(e.must("run", "-d", "--", "sh", "-c", `echo '##PROGRESS## {"step": 2, "total": 5}'; sleep 4`))
	b := strings.TrimSpace(e.must("run", "-d", "--after", a, "--", "true"))
	waitFor(t, func() bool { return strings.Contains(e.getRun(b).Reason, "(running, 40%)") })
	if st := e.must("status", b); !strings.Contains(st, "waiting for") {
		t.Errorf("status does not say why:\n%s", st)
	}
	e.must("stop", a)
	e.run("", "wait", b)

	id := strings.TrimSpace(e.must("sweep", "--param", "i=1,2,3", "--parallel", "1", "--", "sleep", "30"))
	waitFor(t, func() bool { return e.sweep(id).Counts[api.Running] == 1 })
	if m := e.sweep(id).Runs[2]; m.State != api.Queued || m.Reason != "sweep limit 1 reached" {
		t.Errorf("third member: %s %q", m.State, m.Reason)
	}
	e.must("sweep", "stop", id)
	res := e.run("", "sweep", "wait", id)
	sw := e.sweep(id)
	if res.code != 1 || sw.Counts[api.Cancelled] != 3 || !strings.Contains(sw.Stopped, "by the user") {
		t.Errorf("after sweep stop: exit %d, counts %v, stopped %q", res.code, sw.Counts, sw.Stopped)
	}
	res = e.run("", "sweep", "--wait", "--param", "i=1,2", "--", "sh", "-c", "exit {i}")
	if res.code != 1 || !strings.Contains(res.stdout, "1 failed") && !strings.Contains(res.stdout, "2 failed") {
		t.Errorf("sweep --wait: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// Fault: the daemon is killed -9 while it is still creating a sweep's
// members -> the next daemon creates the rest from the sweep's template:
// every member exists once and ran once.
func TestSweepKilledMidSubmission(t *testing.T) {
	e := newEnv(t)
	marks := t.TempDir()
	const n = 300
	vals := make([]string, n)
	for i := range vals {
		vals[i] = strconv.Itoa(i)
	}
	e.must("run", "--", "true") // a daemon up
	cmd := exec.Command(runboxBin, "sweep", "--param", "i="+strings.Join(vals, ","), "--parallel", "4", "--json", "--",
		"sh", "-c", "echo ran >> "+marks+"/{i}")
	cmd.Env, cmd.Dir = e.vars, e.work
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var id string
	waitFor(t, func() bool {
		var l api.SweepList
		if json.Unmarshal([]byte(e.must("sweep", "ls", "--json")), &l) == nil && len(l.Sweeps) == 1 {
			id = l.Sweeps[0].ID
			return true
		}
		return false
	})
	e.killDaemon(syscall.SIGKILL)
	_ = cmd.Wait() // its daemon died under it
	if res := e.run("", "sweep", "wait", id); res.code != 0 {
		t.Fatalf("sweep wait after kill -9: exit %d\n%s", res.code, res.stderr)
	}
	sw := e.sweep(id)
	if len(sw.Runs) != n || sw.Counts[api.Succeeded] != n {
		t.Fatalf("%d members, counts %v, want %d succeeded", len(sw.Runs), sw.Counts, n)
	}
	seen := map[int]bool{}
	for _, m := range sw.Runs {
		if seen[m.Index] {
			t.Errorf("member %d exists twice", m.Index)
		}
		seen[m.Index] = true
		out, err := os.ReadFile(filepath.Join(marks, m.Params["i"]))
		if c := strings.Count(string(out), "ran"); err != nil || c != 1 {
			t.Errorf("member i=%s ran %d times (%v)", m.Params["i"], c, err)
		}
	}
}

// Slurm-to-Slurm chains: the dependent is in the cluster at once, held
// there by --dependency; when the first fails, the daemon cancels the
// dependent (Slurm would leave it pending forever), naming the run.
func TestSlurmChainUsesDependency(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	a := strings.TrimSpace(e.must("run", "-d", "--sandbox", "slurm", "--", "sh", "-c", "sleep 3"))
	waitFor(t, func() bool { return strings.HasPrefix(e.getRun(a).Ref, "slurm:") })
	b := strings.TrimSpace(e.must("run", "-d", "--sandbox", "slurm", "--after", a, "--", "echo", "b ran"))
	waitFor(t, func() bool { return strings.Contains(e.getRun(b).Reason, "Dependency") })
	job := strings.TrimPrefix(e.getRun(b).Ref, "slurm:")
	if out, err := exec.Command("scontrol", "show", "job", job).Output(); err != nil || !strings.Contains(string(out), "Dependency=afterok:"+strings.TrimPrefix(e.getRun(a).Ref, "slurm:")) {
		t.Errorf("the cluster does not hold job %s on a: %v\n%s", job, err, out)
	}
	e.must("wait", b)
	ra, rb := e.getRun(a), e.getRun(b)
	if rb.State != api.Succeeded || rb.StartedAt.Before(*ra.EndedAt) {
		t.Errorf("b %s started %v, a ended %v", rb.State, rb.StartedAt, ra.EndedAt)
	}

	c := strings.TrimSpace(e.must("run", "-d", "--sandbox", "slurm", "--", "sh", "-c", "sleep 2; exit 3"))
	waitFor(t, func() bool { return strings.HasPrefix(e.getRun(c).Ref, "slurm:") })
	d := strings.TrimSpace(e.must("run", "-d", "--sandbox", "slurm", "--after", c, "--", "echo", "d ran"))
	e.run("", "wait", d)
	rd := e.getRun(d)
	if rd.State != api.Cancelled || rd.Reason != "CANCELLED: dependency "+e.getRun(c).ShortID+" failed" {
		t.Errorf("dependent of a failed Slurm run: %s %q", rd.State, rd.Reason)
	}
	if out := e.must("logs", d); strings.Contains(out, "d ran") {
		t.Error("the dependent ran")
	}
}
