package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/runlog"
)

// arraySpecs are n runs of one job array (key, %parallel); each prints
// its index and HF_TOKEN, waits for the file go (in dir), then exits
// with its index as code.
func arraySpecs(t *testing.T, n, parallel int, secret, dir string) []sandbox.Spec {
	t.Helper()
	key := fmt.Sprintf("a%d", time.Now().UnixNano())
	var specs []sandbox.Spec
	for i := range n {
		s := testSpec(t, fmt.Sprintf(`echo "member $RUNBOX_PARAM_I:$HF_TOKEN"; while [ ! -e %s/go ]; do sleep 0.1; done; exit $RUNBOX_PARAM_I`, dir))
		s.RunID = fmt.Sprintf("%s-%d", key, i)
		s.Env = append(s.Env, "HF_TOKEN="+secret, fmt.Sprintf("RUNBOX_PARAM_I=%d", i))
		s.Slurm = &sandbox.SlurmSpec{Array: &sandbox.Group{Key: key, Dir: filepath.Join(dir, "array"), Index: i, Size: n, Parallel: parallel}}
		specs = append(specs, s)
	}
	return specs
}

// startAll starts the specs at once, as the engine's runners do (each
// Start returns once the array is submitted).
func startAll(t *testing.T, sb *Sandbox, specs []sandbox.Spec) []sandbox.Handle {
	t.Helper()
	hs := make([]sandbox.Handle, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	for i, s := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hs[i], errs[i] = sb.Start(context.Background(), s)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("start member %d: %v", i, err)
		}
		h := hs[i]
		t.Cleanup(func() { h.Stop(context.Background(), time.Second) })
	}
	return hs
}

// Four runs with %2 become ONE Slurm job array: every task of it is
// ArrayJobId A with ArrayTaskThrottle=2; no more than two tasks run at
// once (the tasks' start and end times); each run sees its own env and
// output and exit code; stopping one member, pending or running, cancels
// its task alone; no secret reaches Slurm's state or the array's script.
func TestSweepIsOneJobArray(t *testing.T) {
	sb := needSlurm(t)
	dirs := slurmDirs(t)
	secret := secretValue(t)
	dir := t.TempDir()
	specs := arraySpecs(t, 4, 2, secret, dir)
	hs := startAll(t, sb, specs)

	var array string
	for i, h := range hs {
		a, task, ok := strings.Cut(strings.TrimPrefix(h.Ref(), "slurm:"), "_")
		if !ok || task != fmt.Sprint(i) {
			t.Fatalf("member %d: ref %s, want ARRAY_%d", i, h.Ref(), i)
		}
		if array == "" {
			array = a
		} else if a != array {
			t.Fatalf("member %d is in array %s, member 0 in %s: not one array", i, a, array)
		}
	}
	out, err := exec.Command("scontrol", "show", "job", "-o", array).Output()
	if err != nil {
		t.Fatalf("scontrol show job %s: %v", array, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, l := range lines {
		if !strings.Contains(l, "ArrayJobId="+array+" ") || !strings.Contains(l, "ArrayTaskThrottle=2 ") {
			t.Errorf("scontrol: a line not of array %s with throttle 2: %.200s", array, l)
		}
	}

	// Tasks 0 and 1 run (they wait for go), 2 and 3 are held by %2.
	eventually(t, 90*time.Second, "two tasks running", func() bool {
		return running(t, array) == 2
	})
	time.Sleep(time.Second) // the scheduler had its chance to start a third
	if n := running(t, array); n != 2 {
		t.Fatalf("%d tasks of array %s running, want 2 (%%2)", n, array)
	}
	// Stop member 2 while it is pending: its task alone is cancelled.
	if err := hs[2].Stop(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	if e := wait(t, hs[2], 30*time.Second); !e.Cancelled {
		t.Fatalf("stopped member: exit %+v", e)
	}
	for _, k := range []string{"_0", "_1", "_3"} {
		if !liveJob(t, array+k) {
			t.Errorf("task %s%s ended with member 2's stop", array, k)
		}
	}
	// Stop member 1 while it runs: its task alone ends (TERM), cancelled.
	if err := hs[1].Stop(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	if e := wait(t, hs[1], 30*time.Second); !e.Cancelled || e.StartedAt.IsZero() {
		t.Fatalf("stopped running member: exit %+v", e)
	}
	for _, k := range []string{"_0", "_3"} {
		if !liveJob(t, array+k) {
			t.Errorf("task %s%s ended with member 1's stop", array, k)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "array", arrayFile)); len(b) == 0 || bytes.Contains(b, []byte(secret)) {
		t.Errorf("array script missing or holds the secret:\n%s", b)
	}
	if found := grepDirs(t, dirs, secret); len(found) > 0 {
		t.Fatalf("the secret is in Slurm's state: %q", found)
	}
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)

	var spans [][2]time.Time
	for i, h := range hs {
		if i == 1 || i == 2 {
			continue
		}
		e := wait(t, h, 90*time.Second)
		if e.Code != i || e.Cancelled || e.Error != "" {
			t.Errorf("member %d: exit %+v, want code %d", i, e, i)
		}
		if got, want := streams(t, specs[i].LogPath)[runlog.Stdout], fmt.Sprintf("member %d:%s\n", i, secret); got != want {
			t.Errorf("member %d printed %q, want %q", i, got, want)
		}
		if _, err := os.Stat(filepath.Join(specs[i].StateDir, envFile)); !os.IsNotExist(err) {
			t.Errorf("member %d: the env file outlived the run: %v", i, err)
		}
		spans = append(spans, [2]time.Time{e.StartedAt, e.EndedAt})
	}
	if n := maxOverlap(spans); n > 2 {
		t.Errorf("%d members ran at once (spans %v), want at most 2", n, spans)
	}
}

// running counts the tasks of array that squeue shows RUNNING.
func running(t *testing.T, array string) int {
	t.Helper()
	out, _ := exec.Command("squeue", "-h", "-r", "-j", array, "-t", "RUNNING", "-o", "%i").Output()
	return len(strings.Fields(string(out)))
}

// maxOverlap is the most spans [start, end) that hold one instant.
func maxOverlap(spans [][2]time.Time) int {
	most := 0
	for _, s := range spans {
		n := 0
		for _, o := range spans {
			if !o[0].After(s[0]) && o[1].After(s[0]) {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// The process that submitted a job array is SIGKILLed while its tasks
// run and wait: Recover in another process re-attaches each run to its
// own task (nothing submitted again: the array still has three tasks),
// and each log ends with every line once and the run's own exit code.
func TestArrayRecoverAfterKill(t *testing.T) {
	sb := needSlurm(t)
	dir := t.TempDir()
	specs := arraySpecs(t, 3, 2, "s", dir)
	for i := range specs {
		specs[i].Command = []string{"sh", "-c", fmt.Sprintf(`for i in $(seq 1 20); do echo m%d line $i; sleep 0.1; done; exit %d`, i, i)}
	}
	b, _ := json.Marshal(specs)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+string(b))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the first task's first lines", func() bool {
		return strings.Contains(streams(t, specs[0].LogPath)[runlog.Stdout], "m0 line 3\n")
	})
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	var array string
	for i, spec := range specs {
		h, err := sb.Recover(context.Background(), spec)
		if err != nil {
			t.Fatalf("recover member %d: %v", i, err)
		}
		a, task, _ := strings.Cut(strings.TrimPrefix(h.Ref(), "slurm:"), "_")
		if task != fmt.Sprint(i) || (array != "" && a != array) {
			t.Errorf("member %d re-attached to %s (array %s)", i, h.Ref(), array)
		}
		array = a
		e := wait(t, h, 90*time.Second)
		if e.Code != i || e.Error != "" {
			t.Errorf("member %d: exit %+v, want code %d", i, e, i)
		}
		var want strings.Builder
		for k := 1; k <= 20; k++ {
			fmt.Fprintf(&want, "m%d line %d\n", i, k)
		}
		if got := streams(t, spec.LogPath)[runlog.Stdout]; got != want.String() {
			t.Errorf("member %d stdout after recovery = %q, want every line once", i, got)
		}
	}
	out, _ := exec.Command("scontrol", "show", "job", "-o", array).Output()
	if n := len(strings.Split(strings.TrimSpace(string(out)), "\n")); n != 3 {
		t.Errorf("array %s has %d tasks, want 3 (nothing submitted again):\n%s", array, n, out)
	}
	// The recovered handles saw every task end: the array's dir goes.
	gone(t, filepath.Join(dir, "array"))

	// A daemon killed after the exit records but before the dir went
	// leaves it behind; that state is made here by putting the dir back
	// (the window is too short to hit with a kill). Recovering an ended
	// member removes it, the member's own files kept.
	os.MkdirAll(filepath.Join(dir, "array"), 0o700)
	os.WriteFile(filepath.Join(dir, "array", arrayFile), []byte("#!/bin/sh\n"), 0o700)
	os.Symlink(filepath.Join(specs[0].StateDir, stdoutFile), filepath.Join(dir, "array", "0.out"))
	if _, err := New(Options{Poll: 100 * time.Millisecond}).Recover(context.Background(), specs[0]); err != nil {
		t.Fatalf("recover an ended member: %v", err)
	}
	gone(t, filepath.Join(dir, "array"))
	if b, err := os.ReadFile(filepath.Join(specs[0].StateDir, stdoutFile)); err != nil || !bytes.Contains(b, []byte("m0 line 20")) {
		t.Errorf("member 0's job.out after its array dir went: %q, %v", b, err)
	}
}

// arrayOfRef splits ref "slurm:A_T" into array A and task T.
func arrayOfRef(t *testing.T, ref string) (string, string) {
	t.Helper()
	a, task, ok := strings.Cut(strings.TrimPrefix(ref, "slurm:"), "_")
	if !ok {
		t.Fatalf("ref %s is not an array task", ref)
	}
	return a, task
}

// showJob is `scontrol show job -o id`.
func showJob(t *testing.T, id string) string {
	t.Helper()
	out, err := exec.Command("scontrol", "show", "job", "-o", id).Output()
	if err != nil {
		t.Fatalf("scontrol show job %s: %v", id, err)
	}
	return string(out)
}

// gone waits until path no longer exists.
func gone(t *testing.T, path string) {
	t.Helper()
	eventually(t, 60*time.Second, path+" removed", func() bool {
		_, err := os.Lstat(path)
		return os.IsNotExist(err)
	})
}

// A sweep larger than the cluster's MaxArraySize (here made 2) goes as
// several arrays of at most that many tasks (ids 0..1), each held by the
// cluster until the ones before it end (afterany): five
// members run once each, with their own output and exit code, never
// more than two at once; no secret in Slurm's state or the scripts; and
// every array's dir is gone once its tasks ended, the members' logs kept.
func TestSweepLargerThanMaxArrayIsChainedArrays(t *testing.T) {
	sb := needCluster(t, New(Options{Poll: 100 * time.Millisecond, MaxArray: 2}))
	dirs := slurmDirs(t)
	secret := secretValue(t)
	dir := t.TempDir()
	specs := arraySpecs(t, 5, 2, secret, dir)
	for _, s := range specs {
		s.Slurm.Array.Sweep = "sweep-" + s.Slurm.Array.Key
	}
	hs := startAll(t, sb, specs)

	arrays := map[int]string{} // chunk -> array id
	for i, h := range hs {
		a, task := arrayOfRef(t, h.Ref())
		if task != fmt.Sprint(i%2) {
			t.Errorf("member %d is task %s, want %d (ids 0..1 in each array)", i, task, i%2)
		}
		if prev, ok := arrays[i/2]; ok && prev != a {
			t.Errorf("member %d in array %s, its chunk's other member in %s", i, a, prev)
		}
		arrays[i/2] = a
	}
	if len(arrays) != 3 || arrays[0] == arrays[1] || arrays[1] == arrays[2] {
		t.Fatalf("arrays %v, want three", arrays)
	}
	for c := 0; c < 3; c++ {
		// (No %2 on an array of two: it caps nothing there.)
		out := showJob(t, arrays[c])
		for p := 0; p < c; p++ {
			if !strings.Contains(out, "afterany:"+arrays[p]) {
				t.Errorf("array %s (chunk %d) not after array %s: %.400s", arrays[c], c, arrays[p], out)
			}
		}
	}
	eventually(t, 90*time.Second, "the first array's two tasks running", func() bool {
		return running(t, arrays[0]) == 2
	})
	time.Sleep(2 * time.Second) // the scheduler had its chance to start a later array
	if n := running(t, arrays[1]) + running(t, arrays[2]); n != 0 {
		t.Fatalf("%d tasks of the later arrays run beside the first's two", n)
	}
	for c := 0; c < 3; c++ {
		p := filepath.Join(dir, "array")
		if c > 0 {
			p += fmt.Sprintf("-c%d", c)
		}
		if b, err := os.ReadFile(filepath.Join(p, arrayFile)); err != nil || bytes.Contains(b, []byte(secret)) {
			t.Errorf("array script %s: %v, or it holds the secret", p, err)
		}
	}
	if found := grepDirs(t, dirs, secret); len(found) > 0 {
		t.Fatalf("the secret is in Slurm's state: %q", found)
	}
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)

	var spans [][2]time.Time
	for i, h := range hs {
		e := wait(t, h, 180*time.Second)
		if e.Code != i || e.Cancelled || e.Error != "" {
			t.Errorf("member %d: exit %+v, want code %d", i, e, i)
		}
		spans = append(spans, [2]time.Time{e.StartedAt, e.EndedAt})
	}
	if n := maxOverlap(spans); n > 2 {
		t.Errorf("%d members ran at once (spans %v), want at most 2", n, spans)
	}
	for _, c := range []string{"array", "array-c1", "array-c2"} {
		gone(t, filepath.Join(dir, c))
	}
	for i := range hs {
		if got, want := streams(t, specs[i].LogPath)[runlog.Stdout], fmt.Sprintf("member %d:%s\n", i, secret); got != want {
			t.Errorf("member %d printed %q, want %q", i, got, want)
		}
		if b, err := os.ReadFile(filepath.Join(specs[i].StateDir, stdoutFile)); err != nil || !bytes.Contains(b, []byte(fmt.Sprintf("member %d:", i))) {
			t.Errorf("member %d's job.out after the array dir went: %q, %v", i, b, err)
		}
	}
}

// An array of a group submitted while an earlier one of the group runs
// (a sweep's retried member) is held by the cluster until that one
// ends: the group's %2 holds across both arrays, where each array's own
// %2 alone would let three run.
func TestLaterArrayOfGroupWaitsForEarlier(t *testing.T) {
	sb := needSlurm(t)
	dir := t.TempDir()
	first := arraySpecs(t, 2, 2, "s", dir)
	group := "sweep-" + first[0].Slurm.Array.Key
	for _, s := range first {
		s.Slurm.Array.Sweep = group
	}
	hs := startAll(t, sb, first)
	a1, _ := arrayOfRef(t, hs[0].Ref())
	eventually(t, 90*time.Second, "the first array's two tasks running", func() bool {
		return running(t, a1) == 2
	})

	later := arraySpecs(t, 1, 2, "s", dir) // exits 0 once go exists
	later[0].Slurm.Array.Sweep = group
	later[0].Slurm.Array.Dir = filepath.Join(dir, "array-later")
	hl := startAll(t, sb, later)[0]
	a2, task := arrayOfRef(t, hl.Ref())
	if a2 == a1 || task != "0" {
		t.Fatalf("later member: %s, want task 0 of a new array", hl.Ref())
	}
	if out := showJob(t, a2); !strings.Contains(out, "afterany:"+a1) {
		t.Errorf("later array %s not after %s: %.400s", a2, a1, out)
	}
	time.Sleep(2 * time.Second) // the scheduler had its chance to start it
	if n := running(t, a2); n != 0 {
		t.Fatalf("the later array runs beside the earlier's two tasks")
	}
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
	var spans [][2]time.Time
	for i, h := range append(hs, hl) {
		e := wait(t, h, 120*time.Second)
		if e.Code != i%2 || e.Error != "" || e.Cancelled {
			t.Errorf("run %d: exit %+v", i, e)
		}
		spans = append(spans, [2]time.Time{e.StartedAt, e.EndedAt})
	}
	if n := maxOverlap(spans); n > 2 {
		t.Errorf("%d runs of the group at once (spans %v), want at most 2", n, spans)
	}
	gone(t, filepath.Join(dir, "array"))
	gone(t, filepath.Join(dir, "array-later"))
}

// --max-failures cancels only members not yet started. The attack is the
// moment a failed member frees its array's slot: Slurm starts the next
// pending task then, and a look-then-cancel cut it short. HoldIfQueued
// holds a pending task first: with the slot freed, the held task stays
// queued while the task after it, not held, is started in its place
// (the window is real), and its cancel ends a run that never started. A
// running task is not queued, and its hold is released.
func TestHoldIfQueuedKeepsTheTaskFromStarting(t *testing.T) {
	sb := needSlurm(t)
	dir := t.TempDir()
	key := fmt.Sprintf("h%d", time.Now().UnixNano())
	var specs []sandbox.Spec
	for i := range 3 {
		s := testSpec(t, fmt.Sprintf(`echo "member $RUNBOX_PARAM_I"; while [ ! -e %s/go$RUNBOX_PARAM_I ]; do sleep 0.1; done`, dir))
		s.RunID = fmt.Sprintf("%s-%d", key, i)
		s.Env = append(s.Env, fmt.Sprintf("RUNBOX_PARAM_I=%d", i))
		s.Slurm = &sandbox.SlurmSpec{Array: &sandbox.Group{Key: key, Dir: filepath.Join(dir, "array"), Index: i, Size: 3, Parallel: 1}}
		specs = append(specs, s)
	}
	hs := startAll(t, sb, specs)
	q := make([]sandbox.Queued, len(hs))
	for i, h := range hs {
		q[i] = h.(sandbox.Queued)
	}
	started := func(i int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := q[i].Started(ctx, nil); err != nil {
			t.Fatalf("member %d did not start: %v", i, err)
		}
	}
	ref := func(i int) string { return strings.TrimPrefix(hs[i].Ref(), "slurm:") }
	show := func(i int) string {
		out, _ := exec.Command("squeue", "-h", "-r", "-j", ref(i), "-o", "%T %r").Output()
		return strings.TrimSpace(string(out))
	}

	started(0)
	if q[0].HoldIfQueued(context.Background()) {
		t.Fatal("the running member reads as queued")
	}
	if s := show(0); s != "RUNNING None" {
		t.Errorf("running member 0 after HoldIfQueued: %q, want RUNNING None (released)", s)
	}
	// %1 keeps task 1 queued while task 0 runs.
	if !q[1].HoldIfQueued(context.Background()) {
		t.Fatalf("pending member 1 not held as queued: %s", show(1))
	}
	if s := show(1); s != "PENDING JobHeldUser" {
		t.Fatalf("member 1 after the hold: %q, want PENDING JobHeldUser", s)
	}
	os.WriteFile(filepath.Join(dir, "go0"), nil, 0o644) // task 0 ends: its slot is free
	started(2)                                          // the unheld task takes it
	if s := show(1); !strings.HasPrefix(s, "PENDING") {
		t.Fatalf("held member 1 is %q after the slot freed, want PENDING", s)
	}
	if err := hs[1].Stop(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	if e := wait(t, hs[1], 30*time.Second); !e.Cancelled || !e.StartedAt.IsZero() {
		t.Errorf("held member after its stop: exit %+v, want cancelled, never started", e)
	}
	if got := streams(t, specs[1].LogPath)[runlog.Stdout]; got != "" {
		t.Errorf("held member printed %q", got)
	}
	if e := wait(t, hs[0], 30*time.Second); e.Code != 0 || e.Cancelled {
		t.Errorf("member 0 (released after its hold): exit %+v", e)
	}
	os.WriteFile(filepath.Join(dir, "go2"), nil, 0o644)
	if e := wait(t, hs[2], 60*time.Second); e.Code != 0 || e.Cancelled || e.StartedAt.IsZero() {
		t.Errorf("member 2: exit %+v", e)
	}
}
