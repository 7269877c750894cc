package slurm

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
)

// The JSON shapes below are those of squeue/sacct --json in 22.05
// (openapi v0.0.38, recorded on the CI cluster), 23.02 (exit_code an
// object) and 23.11+ (numbers as {"set","infinite","number"}, job_state
// a list of flags).
func TestParseJobsAcrossVersions(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want job
	}{
		{"22.05 squeue, exit 3", `{"jobs":[{"job_id":7,"name":"runbox-r1","comment":"runbox run r1","job_state":"FAILED","state_reason":"NonZeroExitCode","exit_code":768,"nodes":"localhost","restart_cnt":0,"start_time":1700000000,"end_time":1700000005}]}`,
			job{ID: 7, Name: "runbox-r1", Comment: "runbox run r1", State: "FAILED", Reason: "NonZeroExitCode", Code: 3, Nodes: "localhost", Start: time.Unix(1700000000, 0), End: time.Unix(1700000005, 0)}},
		{"22.05 squeue, SIGKILL", `{"jobs":[{"job_id":8,"name":"n","job_state":"FAILED","state_reason":"JobLaunchFailure","exit_code":9,"batch_host":"node1"}]}`,
			job{ID: 8, Name: "n", State: "FAILED", Reason: "JobLaunchFailure", Signal: 9, Nodes: "node1"}},
		{"23.02 squeue", `{"jobs":[{"job_id":9,"name":"n","job_state":"OUT_OF_MEMORY","state_reason":"OutOfMemory","exit_code":{"status":"SIGNALED","return_code":0,"signal":{"signal_id":9,"name":"KILL"}}}]}`,
			job{ID: 9, Name: "n", State: "OUT_OF_MEMORY", Reason: "OutOfMemory", Signal: 9}},
		{"23.11 squeue", `{"jobs":[{"job_id":10,"name":"n","job_state":["PENDING","REQUEUED"],"state_reason":"Priority","restart_cnt":{"set":true,"infinite":false,"number":2},"exit_code":{"status":["EXITED"],"return_code":{"set":true,"infinite":false,"number":4},"signal":{"id":{"set":false,"infinite":false,"number":0},"name":""}},"start_time":{"set":true,"infinite":false,"number":1700000000}}]}`,
			job{ID: 10, Name: "n", State: "PENDING", Reason: "Priority", Restarts: 2, Code: 4, Start: time.Unix(1700000000, 0)}},
		{"22.05 sacct", `{"jobs":[{"job_id":11,"name":"n","comment":{"job":"c"},"state":{"current":"TIMEOUT","reason":"TimeLimit"},"exit_code":{"status":"SUCCESS","return_code":0},"time":{"start":1700000000,"end":1700000060}}]}`,
			job{ID: 11, Name: "n", Comment: "c", State: "TIMEOUT", Reason: "TimeLimit", Start: time.Unix(1700000000, 0), End: time.Unix(1700000060, 0)}},
		{"24.05 sacct", `{"jobs":[{"job_id":12,"name":"n","state":{"current":["NODE_FAIL"],"reason":"None"},"exit_code":{"status":["SIGNALED"],"return_code":{"set":true,"number":0},"signal":{"id":{"set":true,"number":15},"name":"TERM"}}}]}`,
			job{ID: 12, Name: "n", State: "NODE_FAIL", Reason: "None", Signal: 15}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseJobs([]byte(tt.doc))
			if err != nil || len(got) != 1 {
				t.Fatalf("parseJobs = %v, %v", got, err)
			}
			if got[0] != tt.want {
				t.Errorf("got  %+v\nwant %+v", got[0], tt.want)
			}
		})
	}
	if _, err := parseJobs([]byte(`{"errors":[{"error":"Unable to contact slurm controller","description":"connect failure"}]}`)); err == nil || !strings.Contains(err.Error(), "Unable to contact") {
		t.Errorf("an errors-only answer must be an error, got %v", err)
	}
}

func TestParseScontrolLine(t *testing.T) {
	line := `JobId=1 JobName=runbox-r1 UserId=root(0) JobState=FAILED Reason=NonZeroExitCode Dependency=(null) Restarts=1 ExitCode=3:0 NodeList=localhost Comment=runbox:r1`
	j, ok := parseScontrol(line)
	want := job{ID: 1, Name: "runbox-r1", State: "FAILED", Reason: "NonZeroExitCode", Restarts: 1, Code: 3, Nodes: "localhost", Comment: "runbox:r1"}
	if !ok || j != want {
		t.Errorf("got %+v, want %+v", j, want)
	}
}

// States that a single-node cluster cannot produce on demand (node and
// boot failures, preemption) are mapped from Slurm's own records here.
func TestExitOfEveryState(t *testing.T) {
	dir := t.TempDir()
	h := &handle{spec: sandbox.Spec{RunID: "r", StateDir: dir, Slurm: &sandbox.SlurmSpec{QueueTimeout: time.Minute}},
		rec: &recordFile{path: filepath.Join(dir, stateFile)}}
	tests := []struct {
		j    job
		stop string
		want func(sandbox.Exit) bool
	}{
		{job{State: "COMPLETED"}, "", func(e sandbox.Exit) bool { return e.Code == 0 && e.Error == "" }},
		{job{State: "FAILED", Code: 3}, "", func(e sandbox.Exit) bool { return e.Code == 3 && e.Error == "" }},
		{job{State: "FAILED", Signal: 9}, "", func(e sandbox.Exit) bool { return e.Code == 137 && e.Signal == "SIGKILL" }},
		{job{State: "FAILED", Reason: "JobLaunchFailure"}, "", func(e sandbox.Exit) bool { return strings.Contains(e.Error, "JobLaunchFailure") }},
		{job{State: "OUT_OF_MEMORY"}, "", func(e sandbox.Exit) bool { return e.OOMKilled && e.Code == 137 }},
		{job{State: "TIMEOUT", Signal: 15}, "", func(e sandbox.Exit) bool { return e.TimedOut && e.Code == 143 }},
		// Cancelled outside runbox (scancel by someone else): not the
		// user's stop through runbox, and the reason says so.
		{job{State: "CANCELLED", Signal: 15}, "", func(e sandbox.Exit) bool {
			return !e.Cancelled && e.Code == 143 && strings.Contains(e.Outside, "cancelled outside runbox")
		}},
		{job{State: "CANCELLED", Signal: 15}, stopCancelled, func(e sandbox.Exit) bool { return e.Cancelled && e.Outside == "" }},
		{job{State: "CANCELLED"}, stopCancelled, func(e sandbox.Exit) bool { return e.Cancelled && e.Code == 130 }},
		{job{State: "FAILED", Signal: 15}, stopCancelled, func(e sandbox.Exit) bool { return e.Cancelled && e.Error == "" }},
		{job{State: "NODE_FAIL", Nodes: "node7"}, "", func(e sandbox.Exit) bool { return strings.Contains(e.Error, "NODE_FAIL on node node7") }},
		{job{State: "BOOT_FAIL", Nodes: "node8"}, "", func(e sandbox.Exit) bool { return strings.Contains(e.Error, "BOOT_FAIL on node node8") }},
		{job{State: "PREEMPTED", Nodes: "n1"}, "", func(e sandbox.Exit) bool { return strings.Contains(e.Error, "preempted") }},
		{job{State: "CANCELLED", Reason: "Priority"}, stopQueueTimeout, func(e sandbox.Exit) bool {
			return !e.Cancelled && strings.Contains(e.Error, "--queue-timeout")
		}},
	}
	for _, tt := range tests {
		h.rec.r.StopReason = tt.stop
		if e := h.exitOf(tt.j); !tt.want(e) {
			t.Errorf("%s/%s (stop %q) → %+v", tt.j.State, tt.j.Reason, tt.stop, e)
		}
	}
}

func TestSbatchArgsAndScript(t *testing.T) {
	spec := sandbox.Spec{RunID: "r1", Command: []string{"python3", "train.py", "--lr", "it's"}, Workdir: "/w", StateDir: "/s",
		Timeout: 90 * time.Second, Limits: sandbox.Limits{MemoryBytes: 3 << 30, CPUs: 1.5}, GPUs: "2",
		Env:   []string{"API_TOKEN=s3cr3t"},
		Setup: []string{"pip install -r req.txt"},
		Slurm: &sandbox.SlurmSpec{Partition: "gpu", Account: "lab", QOS: "high", Options: map[string]string{"constraint": "a100", "exclusive": ""}}}
	args, err := sbatchArgs(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--parsable", "--job-name=runbox-r1", "--comment=runbox:r1", "--chdir=/w", "--output=/s/job.out", "--error=/s/job.err",
		"--export=ALL", "--time=2", "--mem=3072M", "--cpus-per-task=2", "--gres=gpu:2", "--partition=gpu", "--account=lab", "--qos=high", "--constraint=a100", "--exclusive"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %q lack %s", args, want)
		}
	}
	if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--gpus") }) {
		t.Errorf("args %q ask for GPUs with --gpus: the issue's form is --gres=gpu:N", args)
	}
	sc := script(spec)
	if strings.Contains(sc, "s3cr3t") {
		t.Errorf("the batch script holds a secret:\n%s", sc)
	}
	if !strings.Contains(sc, `exec python3 train.py --lr 'it'\''s'`) || !strings.Contains(sc, "echo $c >/s/setup.failed") {
		t.Errorf("script:\n%s", sc)
	}
	for _, bad := range []sandbox.Spec{
		{GPUs: "all"}, {GPUs: "device=0"},
		{Slurm: &sandbox.SlurmSpec{Options: map[string]string{"output": "/x"}}},
		{Slurm: &sandbox.SlurmSpec{Options: map[string]string{"a b": "1"}}},
	} {
		if _, err := sbatchArgs(bad); err == nil {
			t.Errorf("sbatchArgs(%+v) accepted", bad)
		}
	}
}

func TestPartitionsFromSinfo(t *testing.T) {
	parts, idle := partitions("debug|up|1|idle\ndebug|up|2|alloc\ngpu|down|3|idle*\n")
	if strings.Join(parts, ",") != "debug(up),gpu(down)" || idle != 4 {
		t.Errorf("partitions = %v, idle = %d", parts, idle)
	}
}

func TestNoSlurmOnPath(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("SLURM_RESTD_URL", "")
	sb := New(Options{})
	if h := sb.Health(t.Context()); h.Available || !strings.Contains(h.Detail, "sbatch is not on PATH") {
		t.Errorf("health = %+v", h)
	}
	if _, err := sb.Start(t.Context(), testSpec(t, "true")); err == nil || !strings.Contains(err.Error(), "sbatch is not on PATH") {
		t.Errorf("start without Slurm: %v", err)
	}
	if Configured() {
		t.Error("Configured without sbatch or SLURM_RESTD_URL")
	}
}

// parseMemByCgroup decides whether a job's state other than OUT_OF_MEMORY
// rules an OOM kill out: only when the cluster confines memory by cgroup.
func TestParseMemByCgroup(t *testing.T) {
	tests := map[string]struct {
		conf string
		want bool
	}{
		"cgroup, RAM confined": {"TaskPlugin              = task/affinity,task/cgroup\nCgroup Support Configuration:\nConstrainRAMSpace=yes\n", true},
		"cgroup, RAM free":     {"TaskPlugin = task/cgroup\nConstrainRAMSpace=no\n", false},
		"no task/cgroup":       {"TaskPlugin = task/affinity\nConstrainRAMSpace=yes\n", false},
		"nothing said":         {"ClusterName = c\n", false},
	}
	for name, tt := range tests {
		if got := parseMemByCgroup(tt.conf); got != tt.want {
			t.Errorf("%s: %v, want %v", name, got, tt.want)
		}
	}
}
