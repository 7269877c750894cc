package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// job is what runbox needs to know about one Slurm job, whichever command
// (squeue --json, scontrol show job, sacct --json) told it.
type job struct {
	ID int64
	// ArrayID and Task place a job array's task (ArrayID is 0 for a job
	// that is not one): the task's own ID is another number, and a task
	// still pending has none yet but the array's.
	ArrayID int64
	Task    int
	Name    string
	Comment string
	State   string // base state: PENDING, RUNNING, COMPLETED, ...
	Reason  string // state_reason: Resources, Priority, None, ...
	// Exit is the job's exit: code and signal (0 when none).
	Code, Signal int
	Nodes        string
	Restarts     int
	Start, End   time.Time
}

// terminal states of a job (it will not run again under this id, except
// that a requeued PREEMPTED/NODE_FAIL job goes back to PENDING).
var terminal = map[string]bool{
	"COMPLETED": true, "FAILED": true, "OUT_OF_MEMORY": true, "TIMEOUT": true,
	"CANCELLED": true, "NODE_FAIL": true, "PREEMPTED": true, "BOOT_FAIL": true,
	"DEADLINE": true, "REVOKED": true, "SPECIAL_EXIT": true,
}

func (j job) ended() bool { return terminal[j.State] }

// key is how Slurm's commands name the job: "123", or "123_4" for task 4
// of array 123 (scancel, scontrol, sacct and --dependency all take it).
func (j job) key() string {
	if j.ArrayID > 0 {
		return taskKey(j.ArrayID, j.Task)
	}
	return strconv.FormatInt(j.ID, 10)
}

func taskKey(array int64, task int) string {
	return strconv.FormatInt(array, 10) + "_" + strconv.Itoa(task)
}

// maxExpand bounds the tasks read from one pending array line (Slurm's
// own MaxArraySize is at most 4000001).
const maxExpand = 1 << 22

// expandTasks reads the task ids of a pending array line: "2-5%2",
// "[2-5%2]", "1,3,7-9", "0-10:2".
func expandTasks(s string) []int {
	s = strings.Trim(strings.TrimSpace(s), "[]")
	s, _, _ = strings.Cut(s, "%")
	var out []int
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue
		}
		rng, stepS, hasStep := strings.Cut(part, ":")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepS)
			if err != nil || n <= 0 {
				continue
			}
			step = n
		}
		lo, hi, isRange := strings.Cut(rng, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				continue
			}
		}
		for t := a; t <= b && len(out) < maxExpand; t += step {
			out = append(out, t)
		}
	}
	return out
}

// The JSON of squeue/scontrol/sacct changed shape across versions: 22.05
// (openapi v0.0.38) writes numbers, plain state strings and exit_code as
// the raw wait status; 23.02 writes exit_code as an object; 23.11+ writes
// numbers as {"set":..,"infinite":..,"number":N} and job_state as a list
// of flags. The decoders below accept every shape.

// num reads 5, "5" or {"set":true,"number":5}.
func num(raw json.RawMessage) (int64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		v, err := n.Int64()
		if err != nil {
			f, ferr := n.Float64()
			return int64(f), ferr == nil
		}
		return v, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		v, err := strconv.ParseInt(s, 10, 64)
		return v, err == nil
	}
	var o struct {
		Set    *bool           `json:"set"`
		Number json.RawMessage `json:"number"`
	}
	if json.Unmarshal(raw, &o) == nil && o.Number != nil {
		if o.Set != nil && !*o.Set {
			return 0, false
		}
		return num(o.Number)
	}
	return 0, false
}

// states reads "RUNNING" or ["RUNNING","COMPLETING"]; the first is the base.
func states(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.ToUpper(s)
	}
	var l []string
	if json.Unmarshal(raw, &l) == nil && len(l) > 0 {
		return strings.ToUpper(l[0])
	}
	var o struct {
		Current json.RawMessage `json:"current"`
	}
	if json.Unmarshal(raw, &o) == nil && o.Current != nil {
		return states(o.Current)
	}
	return ""
}

// exitOf reads exit_code: the raw wait status (22.05: 768 = exit 3, 9 =
// SIGKILL) or {"status":..,"return_code":N,"signal":{"id"|"signal_id":N}}.
func exitOf(raw json.RawMessage) (code, sig int) {
	if st, ok := num(raw); ok {
		if st&0x7f != 0 {
			return 0, int(st & 0x7f)
		}
		return int(st>>8) & 0xff, 0
	}
	var o struct {
		ReturnCode json.RawMessage `json:"return_code"`
		Signal     struct {
			ID       json.RawMessage `json:"id"`
			SignalID json.RawMessage `json:"signal_id"`
		} `json:"signal"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return 0, 0
	}
	c, _ := num(o.ReturnCode)
	s, ok := num(o.Signal.ID)
	if !ok {
		s, _ = num(o.Signal.SignalID)
	}
	return int(c), int(s)
}

func unix(raw json.RawMessage) time.Time {
	if v, ok := num(raw); ok && v > 0 {
		return time.Unix(v, 0)
	}
	return time.Time{}
}

type rawJob struct {
	JobID     json.RawMessage `json:"job_id"`
	Name      string          `json:"name"`
	Comment   json.RawMessage `json:"comment"`
	JobState  json.RawMessage `json:"job_state"`
	State     json.RawMessage `json:"state"` // sacct
	Reason    string          `json:"state_reason"`
	ExitCode  json.RawMessage `json:"exit_code"`
	Nodes     string          `json:"nodes"`
	BatchHost string          `json:"batch_host"`
	Restarts  json.RawMessage `json:"restart_cnt"`
	// A job array's task (squeue), or its pending tasks still collapsed
	// into the array's own line ("2-5%2").
	ArrayJobID  json.RawMessage `json:"array_job_id"`
	ArrayTaskID json.RawMessage `json:"array_task_id"`
	ArrayTasks  json.RawMessage `json:"array_task_string"`
	Array       struct {        // sacct
		JobID  json.RawMessage `json:"job_id"`
		TaskID json.RawMessage `json:"task_id"`
	} `json:"array"`
	StartTime json.RawMessage `json:"start_time"`
	EndTime   json.RawMessage `json:"end_time"`
	Time      struct {        // sacct
		Start json.RawMessage `json:"start"`
		End   json.RawMessage `json:"end"`
	} `json:"time"`
}

// job reads one job; pending is the array whose pending tasks the line
// stands for (their ids in array_task_string), 0 when it is one job or
// one task.
func (r rawJob) job() (j job, pending int64) {
	id, _ := num(r.JobID)
	j = job{ID: id, Name: r.Name, Reason: r.Reason, Nodes: r.Nodes}
	aid, ok := num(r.ArrayJobID)
	if !ok || aid == 0 {
		aid, _ = num(r.Array.JobID)
	}
	if aid > 0 {
		t, ok := num(r.ArrayTaskID)
		if !ok {
			t, ok = num(r.Array.TaskID)
		}
		if ok && t >= 0 {
			j.ArrayID, j.Task = aid, int(t)
		} else {
			pending = aid
		}
	}
	// comment is a string (squeue) or {"job": "..."} (sacct).
	if json.Unmarshal(r.Comment, &j.Comment) != nil {
		var c struct {
			Job string `json:"job"`
		}
		_ = json.Unmarshal(r.Comment, &c)
		j.Comment = c.Job
	}
	j.State = states(r.JobState)
	if j.State == "" {
		j.State = states(r.State)
		var s struct {
			Reason string `json:"reason"`
		}
		if json.Unmarshal(r.State, &s) == nil && j.Reason == "" {
			j.Reason = s.Reason
		}
	}
	if j.Nodes == "" {
		j.Nodes = r.BatchHost
	}
	j.Code, j.Signal = exitOf(r.ExitCode)
	n, _ := num(r.Restarts)
	j.Restarts = int(n)
	j.Start, j.End = unix(r.StartTime), unix(r.EndTime)
	if j.Start.IsZero() {
		j.Start, j.End = unix(r.Time.Start), unix(r.Time.End)
	}
	return j, pending
}

// parseJobs decodes the {"jobs": [...]} document of squeue/sacct --json.
func parseJobs(b []byte) ([]job, error) {
	var doc struct {
		Jobs   []rawJob `json:"jobs"`
		Errors []struct {
			Error       string `json:"error"`
			Description string `json:"description"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("decode job list: %w", err)
	}
	if doc.Jobs == nil && len(doc.Errors) > 0 {
		return nil, fmt.Errorf("slurm: %s %s", doc.Errors[0].Error, doc.Errors[0].Description)
	}
	out := make([]job, 0, len(doc.Jobs))
	for _, r := range doc.Jobs {
		j, pending := r.job()
		var s string
		_ = json.Unmarshal(r.ArrayTasks, &s)
		if tasks := expandTasks(s); pending > 0 && len(tasks) > 0 {
			// The array's pending tasks, on one line until each starts
			// (squeue -r would split it; 22.05 ignores it with --json).
			for _, t := range tasks {
				jt := j
				jt.ArrayID, jt.Task = pending, t
				out = append(out, jt)
			}
			continue
		}
		out = append(out, j)
	}
	return out, nil
}

// parseScontrol reads `scontrol show job -o ID`: one line of Key=Value
// pairs, a format unchanged since long before JSON output existed.
func parseScontrol(line string) (job, bool) {
	var j job
	kv := map[string]string{}
	for _, f := range strings.Fields(line) {
		if k, v, ok := strings.Cut(f, "="); ok {
			if _, seen := kv[k]; !seen {
				kv[k] = v
			}
		}
	}
	id, err := strconv.ParseInt(kv["JobId"], 10, 64)
	if err != nil {
		return j, false
	}
	j.ID, j.Name, j.Comment = id, kv["JobName"], kv["Comment"]
	if a, err := strconv.ParseInt(kv["ArrayJobId"], 10, 64); err == nil && a > 0 {
		// One task (scontrol show job 123_4); the pending rest of an
		// array shows ArrayTaskId=2-5, which names no single task.
		if t, err := strconv.Atoi(kv["ArrayTaskId"]); err == nil && t >= 0 {
			j.ArrayID, j.Task = a, t
		}
	}
	j.State, j.Reason, j.Nodes = kv["JobState"], kv["Reason"], kv["NodeList"]
	if c, s, ok := strings.Cut(kv["ExitCode"], ":"); ok {
		j.Code, _ = strconv.Atoi(c)
		j.Signal, _ = strconv.Atoi(s)
	}
	j.Restarts, _ = strconv.Atoi(kv["Restarts"])
	// The times a run's record takes its start and end from: without
	// them a job that ended between two looks of squeue, found here,
	// had run with no start.
	j.Start, j.End = scontrolTime(kv["StartTime"]), scontrolTime(kv["EndTime"])
	return j, true
}

// scontrolTime reads scontrol's 2026-11-28T06:32:34, written in this
// machine's zone; "Unknown", "None" and "N/A" are no time.
func scontrolTime(v string) time.Time {
	t, err := time.ParseInLocation("2006-01-02T15:04:05", v, time.Local)
	if err != nil {
		return time.Time{}
	}
	return t
}

// queue caches one `squeue --json` answer for all the runs a daemon
// watches: one call a poll, whatever the number of runs (22.05 ignores
// squeue's filters with --json and returns every job anyway).
type queue struct {
	run    func(ctx context.Context, name string, args ...string) ([]byte, error)
	maxAge time.Duration

	mu   sync.Mutex
	at   time.Time
	jobs map[string]job // by key: "123", "123_4"
	err  error
}

// errGone means the controller no longer holds the job.
var errGone = errors.New("job not known to the controller")

// lookup returns job id ("123", or "123_4" for an array task) as the
// controller sees it now.
func (q *queue) lookup(ctx context.Context, id string) (job, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if time.Since(q.at) > q.maxAge {
		// --states=all: 23.x honours it and then lists finished jobs too.
		b, err := q.run(ctx, "squeue", "--json", "--me", "--states=all")
		q.at, q.err = time.Now(), err
		if err == nil {
			var list []job
			list, q.err = parseJobs(b)
			q.jobs = make(map[string]job, len(list))
			for _, j := range list {
				q.jobs[j.key()] = j
			}
		}
	}
	if q.err != nil {
		return job{}, q.err
	}
	if j, ok := q.jobs[id]; ok {
		return j, nil
	}
	// Not in squeue's answer: finished jobs are dropped by newer squeue;
	// scontrol still knows them until MinJobAge passes.
	b, err := q.run(ctx, "scontrol", "show", "job", "-o", id)
	if err != nil {
		// A job: "Invalid job id specified"; a task of an array that
		// Slurm dropped (cancelled while pending): "Job 12_3 not found".
		if m := err.Error(); strings.Contains(m, "Invalid job id") || strings.Contains(m, " not found") {
			return job{}, errGone
		}
		return job{}, err
	}
	if j, ok := parseScontrol(strings.TrimSpace(string(b))); ok && j.key() == id {
		return j, nil
	}
	return job{}, errGone
}

// accounting looks a job up in slurmdbd (sacct), for jobs the controller
// forgot. ok is false when there is no accounting or no record.
func accounting(ctx context.Context, run func(ctx context.Context, name string, args ...string) ([]byte, error), id string) (job, bool, error) {
	b, err := run(ctx, "sacct", "--json", "-X", "-j", id)
	if err != nil {
		return job{}, false, err
	}
	list, err := parseJobs(b)
	if err != nil {
		return job{}, false, err
	}
	for _, j := range list {
		if j.key() == id {
			return j, true, nil
		}
	}
	return job{}, false, nil
}
