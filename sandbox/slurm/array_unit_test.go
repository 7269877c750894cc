package slurm

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
)

// squeue --json (Slurm 22.05.8, this project's CI cluster) during
// sbatch --array=0-3%2: tasks 0 and 1 run with their own job ids, tasks 2
// and 3 still pending on the array's own line (job id = array id).
const squeueArray2205 = `{"jobs": [
{"job_id": 423, "name": "rbx-test-arr", "job_state": "RUNNING", "state_reason": "None", "array_job_id": 420, "array_task_id": 0, "array_task_string": "", "array_max_tasks": 2, "exit_code": 0, "nodes": "localhost"},
{"job_id": 421, "name": "runbox-01m8excnca44c4n4m77km58mzn", "job_state": "PENDING", "state_reason": "Resources", "array_job_id": 0, "array_task_id": null, "array_task_string": "", "array_max_tasks": 0, "exit_code": 0},
{"job_id": 424, "name": "rbx-test-arr", "job_state": "RUNNING", "state_reason": "None", "array_job_id": 420, "array_task_id": 1, "array_task_string": "", "array_max_tasks": 2, "exit_code": 0, "nodes": "localhost"},
{"job_id": 420, "name": "rbx-test-arr", "job_state": "PENDING", "state_reason": "JobArrayTaskLimit", "array_job_id": 420, "array_task_id": null, "array_task_string": "2-3%2", "array_max_tasks": 2, "exit_code": 0}
]}`

// The same array's last task once it ran: it took the array's own id.
const squeueArrayEnded2205 = `{"jobs": [
{"job_id": 420, "name": "rbx-test-arr", "job_state": "COMPLETED", "state_reason": "None", "array_job_id": 420, "array_task_id": 3, "array_task_string": "", "array_max_tasks": 2, "exit_code": 768, "nodes": "localhost", "start_time": 1795796938, "end_time": 1795796958}
]}`

// A newer Slurm (23.11+) writes numbers as objects.
const squeueArray2311 = `{"jobs": [
{"job_id": {"set": true, "number": 77}, "name": "a", "job_state": ["RUNNING"], "array_job_id": {"set": true, "number": 70}, "array_task_id": {"set": true, "number": 5}, "array_task_string": ""},
{"job_id": {"set": true, "number": 70}, "name": "a", "job_state": ["PENDING"], "state_reason": "JobArrayTaskLimit", "array_job_id": {"set": true, "number": 70}, "array_task_id": {"set": false, "infinite": false, "number": 0}, "array_task_string": "6,8-9%2"},
{"job_id": {"set": true, "number": 71}, "name": "b", "job_state": ["PENDING"], "array_job_id": {"set": true, "number": 0}, "array_task_id": {"set": false, "number": 0}}
]}`

func TestParseArrayJobs(t *testing.T) {
	keys := func(doc string) map[string]job {
		t.Helper()
		list, err := parseJobs([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]job{}
		for _, j := range list {
			m[j.key()] = j
		}
		return m
	}
	m := keys(squeueArray2205)
	want := map[string]string{"420_0": "RUNNING", "420_1": "RUNNING", "420_2": "PENDING", "420_3": "PENDING", "421": "PENDING"}
	if len(m) != len(want) {
		t.Errorf("jobs %v, want keys of %v", m, want)
	}
	for k, st := range want {
		if m[k].State != st {
			t.Errorf("%s: state %q, want %s", k, m[k].State, st)
		}
	}
	if m["420_3"].Reason != "JobArrayTaskLimit" || m["420_0"].ID != 423 || m["420"].Name != "" {
		t.Errorf("tasks read wrong: %+v", m)
	}
	end := keys(squeueArrayEnded2205)["420_3"]
	if end.State != "COMPLETED" || end.Code != 3 || end.ID != 420 {
		t.Errorf("ended task: %+v", end)
	}
	m = keys(squeueArray2311)
	for _, k := range []string{"70_5", "70_6", "70_8", "70_9", "71"} {
		if _, ok := m[k]; !ok {
			t.Errorf("23.11 shape: no %s in %v", k, m)
		}
	}
	if len(m) != 5 {
		t.Errorf("23.11 shape: %d jobs, want 5", len(m))
	}
}

func TestExpandTasks(t *testing.T) {
	for in, want := range map[string][]int{
		"2-3%2": {2, 3}, "[2-5%2]": {2, 3, 4, 5}, "1,3,7-9": {1, 3, 7, 8, 9}, "0-10:5": {0, 5, 10},
		"4": {4}, "": nil, "x": nil, "5-2": nil,
	} {
		if got := expandTasks(in); !slices.Equal(got, want) {
			t.Errorf("expandTasks(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestScontrolArrayTask(t *testing.T) {
	// scontrol show job -o 420_1 (22.05.8), cut.
	j, ok := parseScontrol("JobId=424 ArrayJobId=420 ArrayTaskId=1 ArrayTaskThrottle=2 JobName=rbx-test-arr JobState=COMPLETED Reason=None ExitCode=0:0 NodeList=localhost")
	if !ok || j.key() != "420_1" || j.ID != 424 || j.State != "COMPLETED" {
		t.Errorf("task line read as %+v (key %s)", j, j.key())
	}
	// A task that ended: its times, in this machine's zone (22.05.8).
	j, ok = parseScontrol("JobId=4753 ArrayJobId=4752 ArrayTaskId=1 JobName=arr.sh JobState=COMPLETED Reason=None ExitCode=0:0 RunTime=00:00:01 SubmitTime=2026-11-28T06:32:34 StartTime=2026-11-28T06:32:34 EndTime=2026-11-28T06:32:35 Deadline=N/A SuspendTime=None")
	start := time.Date(2026, 11, 28, 6, 32, 34, 0, time.Local)
	if !ok || !j.Start.Equal(start) || !j.End.Equal(start.Add(time.Second)) {
		t.Errorf("ended task's times read as %v .. %v, want %v .. +1s", j.Start, j.End, start)
	}
	// A job that has not started has no start.
	j, _ = parseScontrol("JobId=4754 JobName=x JobState=PENDING Reason=BeginTime StartTime=Unknown EndTime=Unknown")
	if !j.Start.IsZero() || !j.End.IsZero() {
		t.Errorf("pending job's times read as %v .. %v, want none", j.Start, j.End)
	}
	// The pending rest of an array names no single task.
	j, ok = parseScontrol("JobId=420 ArrayJobId=420 ArrayTaskId=2-3 JobName=x JobState=PENDING")
	if !ok || j.key() != "420" {
		t.Errorf("pending array line read as %+v", j)
	}
}

func TestArraySpecAndScript(t *testing.T) {
	for _, tt := range []struct {
		tasks    []int
		parallel int
		want     string
	}{
		{[]int{0, 1, 2, 3}, 2, "0-3%2"},
		{[]int{0, 1, 2, 3}, 0, "0-3"},
		{[]int{0, 1, 2, 3}, 4, "0-3"},
		{[]int{0, 2, 3, 4, 7}, 3, "0,2-4,7%3"},
	} {
		if got := arraySpec(tt.tasks, tt.parallel); got != tt.want {
			t.Errorf("arraySpec(%v, %d) = %q, want %q", tt.tasks, tt.parallel, got, tt.want)
		}
	}
	member := func(i int, id string) *arrayMember {
		return &arrayMember{task: i, spec: sandbox.Spec{RunID: id, Workdir: "/w/" + id, StateDir: "/s/" + id,
			Env:   []string{"HF_TOKEN=s3cr3t"},
			Slurm: &sandbox.SlurmSpec{Array: &sandbox.Group{Key: "k", Index: i}}}}
	}
	sc := arrayScript("k", []*arrayMember{member(0, "a"), member(1, "b b")})
	for _, want := range []string{`case "$SLURM_ARRAY_TASK_ID" in`, "0) cd /w/a && exec /s/a/job.sh ;;", "1) cd '/w/b b' && exec '/s/b b/job.sh' ;;", "exit 125"} {
		if !strings.Contains(sc, want) {
			t.Errorf("array script lacks %q:\n%s", want, sc)
		}
	}
	if strings.Contains(sc, "s3cr3t") {
		t.Errorf("the array script holds a secret:\n%s", sc)
	}
	args, err := sbatchArgs(member(0, "a").spec)
	if err != nil {
		t.Fatal(err)
	}
	shared := sharedArgs(args)
	for _, a := range shared {
		if strings.Contains(a, "/a") {
			t.Errorf("shared sbatch options keep a per-run one: %q", a)
		}
	}
	other, _ := sbatchArgs(member(1, "b").spec)
	if !slices.Equal(shared, sharedArgs(other)) {
		t.Errorf("two members of one template differ: %q vs %q", shared, sharedArgs(other))
	}
}

// MaxArraySize is read from `scontrol show config` (unreadable: not
// known, the caller falls back to Slurm's default).
func TestParseMaxArraySize(t *testing.T) {
	for _, tt := range []struct {
		conf string
		want int
		ok   bool
	}{
		{"MaxArrayCount = 3\nMaxArraySize            = 1001\nMaxJobCount = 10000\n", 1001, true},
		{"maxarraysize=4\n", 4, true},
		{"MaxArraySize = 0\n", 1, true},
		{"MaxArraySize = lots\n", 0, false},
		{"MaxJobCount = 10000\n", 0, false},
	} {
		if n, ok := parseMaxArraySize(tt.conf); n != tt.want || ok != tt.ok {
			t.Errorf("parseMaxArraySize(%q) = %d, %v; want %d, %v", tt.conf, n, ok, tt.want, tt.ok)
		}
	}
}

// A later array goes after the live ones (afterany), joined to a
// dependency the run already has (",": both must hold).
func TestWithAfterAny(t *testing.T) {
	for _, tt := range []struct {
		args []string
		deps []int64
		want []string
	}{
		{[]string{"--parsable"}, nil, []string{"--parsable"}},
		{[]string{"--parsable"}, []int64{7, 9}, []string{"--parsable", "--dependency=afterany:7:9"}},
		{[]string{"--dependency=afterok:3", "--mem=1G"}, []int64{7}, []string{"--dependency=afterok:3,afterany:7", "--mem=1G"}},
	} {
		if got := withAfterAny(slices.Clone(tt.args), tt.deps); !slices.Equal(got, tt.want) {
			t.Errorf("withAfterAny(%q, %v) = %q, want %q", tt.args, tt.deps, got, tt.want)
		}
	}
}

// removeArrayDir removes the array's script and per-task links, never
// what a link points to (a member's output) nor a file it did not make.
func TestRemoveArrayDirKeepsMembersFiles(t *testing.T) {
	root := t.TempDir()
	member := filepath.Join(root, "member")
	os.MkdirAll(member, 0o700)
	os.WriteFile(filepath.Join(member, "job.out"), []byte("the log"), 0o600)
	dir := filepath.Join(root, "slurm-k")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, arrayFile), []byte("#!/bin/sh\n"), 0o700)
	os.Symlink(filepath.Join(member, "job.out"), filepath.Join(dir, "0.out"))
	os.Symlink(filepath.Join(member, "job.err"), filepath.Join(dir, "0.err")) // dangling
	removeArrayDir(dir)
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("array dir left: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(member, "job.out")); string(b) != "the log" {
		t.Errorf("member's output after removal: %q, %v", b, err)
	}

	// A file runbox did not put there keeps the dir (and itself).
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600)
	os.WriteFile(filepath.Join(dir, "1.out"), []byte("a real file, not a link"), 0o600)
	removeArrayDir(dir)
	for _, f := range []string{"notes.txt", "1.out"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s removed: %v", f, err)
		}
	}
}
