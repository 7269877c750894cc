package mcp

import "github.com/runbox/runbox/sdk"

// The tools' arguments and results. Argument names are the compute-local
// flow's (contract, DESIGN §5); results are shaped for a model to read,
// not the daemon's wire types (package api), which carry fields no agent
// needs and durations a JSON schema cannot describe.

// noArgs is the input of a tool that takes none.
type noArgs struct{}

type backendsOut struct {
	Backends []computeBackend `json:"backends" jsonschema:"the compute backends; only local exists on this server"`
}

type computeBackend struct {
	Name       string       `json:"name" jsonschema:"backend name to pass to compute_plan"`
	ToolPrefix string       `json:"tool_prefix" jsonschema:"prefix of this backend's tools (local_execute, local_status, ...)"`
	Available  bool         `json:"available" jsonschema:"whether runs can start now"`
	Detail     string       `json:"detail" jsonschema:"one line on what it is and what it would use"`
	Auto       string       `json:"auto" jsonschema:"the sandbox chosen when the plan does not override it: process or docker"`
	AutoReason string       `json:"auto_reason" jsonschema:"why auto picks that sandbox"`
	Sandboxes  []sandboxOut `json:"sandboxes" jsonschema:"the sandboxes runbox knows here; only process and docker are usable over MCP"`
}

type sandboxOut struct {
	Name      string `json:"name" jsonschema:"process, docker, or one MCP cannot use (slurm)"`
	Available bool   `json:"available" jsonschema:"whether compute_plan can ask for it and runs can start in it now"`
	Detail    string `json:"detail,omitempty" jsonschema:"why it is not available, or notes"`
	Version   string `json:"version,omitempty"`
}

type recommendations struct {
	Sandbox        string   `json:"sandbox,omitempty" jsonschema:"process, docker or auto; overrides the planner's choice"`
	Image          string   `json:"image,omitempty" jsonschema:"container image for the docker sandbox"`
	TimeoutMinutes float64  `json:"timeout_minutes,omitempty" jsonschema:"end the run after this many minutes (0 < x <= 10080)"`
	Memory         any      `json:"memory,omitempty" jsonschema:"memory limit: a size such as \"512m\", \"4g\", \"8GiB\", or a number of bytes"`
	AllowNet       []string `json:"allow_net,omitempty" jsonschema:"the only hosts a process run may reach, through an egress proxy: HOST, *.SUFFIX or HOST:PORT (ports 80 and 443 otherwise); default: the hosts the planner found the command needs"`
}

type backendData struct {
	Recommendations *recommendations `json:"recommendations,omitempty" jsonschema:"values that override the planner's recommendations"`
}

type planIn struct {
	Backend         string       `json:"backend" jsonschema:"the compute backend: only \"local\""`
	Command         any          `json:"command" jsonschema:"the command: a string run with sh -c (e.g. \"python train.py --epochs 3\"), or an argv array"`
	TaskDescription string       `json:"task_description,omitempty" jsonschema:"what the command is meant to do, in a sentence; helps the planner"`
	ScriptPath      string       `json:"script_path,omitempty" jsonschema:"the script the command runs, when it is not obvious from the command (relative to workdir)"`
	Workdir         string       `json:"workdir,omitempty" jsonschema:"absolute directory the command runs in (default: the directory runbox mcp was started in)"`
	ParentRunID     string       `json:"parent_run_id,omitempty" jsonschema:"when retrying: the failed run's id; runs of this plan are linked to it"`
	BackendData     *backendData `json:"backend_data,omitempty" jsonschema:"backend-specific options"`
}

type risk struct {
	Severity string `json:"severity" jsonschema:"info, low, medium, high or critical"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	Evidence string `json:"evidence,omitempty"`
}

type experience struct {
	Runs                  int            `json:"runs" jsonschema:"similar past runs (same command)"`
	Succeeded             int            `json:"succeeded"`
	Failed                int            `json:"failed"`
	FailureCodes          map[string]int `json:"failure_codes,omitempty" jsonschema:"how often each failure code was seen"`
	MedianDurationSeconds float64        `json:"median_duration_seconds,omitempty"`
	MaxPeakRSSBytes       uint64         `json:"max_peak_rss_bytes,omitempty"`
	LastFailure           *failure       `json:"last_failure,omitempty"`
	Changes               []string       `json:"changes,omitempty" jsonschema:"what the recent failures had that the successes did not (packages, python, image, GPU driver)"`
}

type planOut struct {
	PlanID         string      `json:"plan_id" jsonschema:"pass to local_execute"`
	Backend        string      `json:"backend"`
	Command        []string    `json:"command"`
	Shell          bool        `json:"shell,omitempty" jsonschema:"the command runs with sh -c"`
	Workdir        string      `json:"workdir"`
	ScriptPath     string      `json:"script_path,omitempty"`
	ParentRunID    string      `json:"parent_run_id,omitempty"`
	Sandbox        string      `json:"sandbox" jsonschema:"process or docker"`
	SandboxReason  string      `json:"sandbox_reason"`
	Image          string      `json:"image,omitempty"`
	ImageReason    string      `json:"image_reason,omitempty"`
	Risks          []risk      `json:"risks" jsonschema:"what could go wrong, most serious first"`
	SmokeSupported bool        `json:"smokeSupported" jsonschema:"a quick validation run exists; local_execute runs it first"`
	SmokeCommand   []string    `json:"smoke_command,omitempty"`
	SmokeReason    string      `json:"smoke_reason,omitempty"`
	TimeoutMinutes float64     `json:"timeout_minutes,omitempty" jsonschema:"the run's timeout (0: none)"`
	TimeoutReason  string      `json:"timeout_reason,omitempty"`
	MemoryBytes    int64       `json:"memory_bytes,omitempty" jsonschema:"the run's memory limit (0: none)"`
	MemoryReason   string      `json:"memory_reason,omitempty"`
	Frameworks     []string    `json:"frameworks,omitempty"`
	Notes          []string    `json:"notes,omitempty"`
	Experience     *experience `json:"experience,omitempty" jsonschema:"similar past runs, when there were any"`
	Overridden     []string    `json:"overridden,omitempty" jsonschema:"recommendations taken from backend_data instead of the planner"`
	AllowNet       []allowHost `json:"allow_net,omitempty" jsonschema:"the only hosts the run may reach (through an egress proxy; nothing else gets out), each with why; absent: no allow-list"`
	Next           string      `json:"next"`
}

type executeIn struct {
	PlanID         string  `json:"plan_id" jsonschema:"the plan_id from compute_plan (a unique prefix is enough; @last is the newest plan)"`
	TimeoutMinutes float64 `json:"timeout_minutes,omitempty" jsonschema:"override the plan's timeout: end the run after this many minutes (0 < x <= 10080)"`
	ParentRunID    string  `json:"parent_run_id,omitempty" jsonschema:"when retrying: the failed run's id (keeps the retry lineage)"`
}

type executeOut struct {
	RunID       string `json:"run_id" jsonschema:"pass to local_status, local_wait, local_logs, local_stop"`
	PlanID      string `json:"plan_id"`
	State       string `json:"state"`
	Smoke       bool   `json:"smoke" jsonschema:"the smoke command runs first; the full run starts only if it passes"`
	ParentRunID string `json:"parent_run_id,omitempty"`
	Attempt     int    `json:"attempt" jsonschema:"1 for a first run, parent's + 1 for a retry"`
	Sandbox     string `json:"sandbox"`
	Next        string `json:"next"`
}

type runIn struct {
	RunID string `json:"run_id" jsonschema:"the run_id from local_execute; a unique prefix, the short id (runbox ls), or @last (the newest run, @last~1 the one before) also work"`
}

type waitIn struct {
	RunID          string   `json:"run_id" jsonschema:"the run_id from local_execute; a unique prefix, the short id (runbox ls), or @last (the newest run, @last~1 the one before) also work"`
	TimeoutSeconds *float64 `json:"timeout_seconds,omitempty" jsonschema:"how long to block, 0..600 seconds (default 45, under the 60 s at which several clients give up); the run goes on after"`
}

type logsIn struct {
	RunID       string `json:"run_id" jsonschema:"the run_id from local_execute; a unique prefix, the short id (runbox ls), or @last (the newest run, @last~1 the one before) also work"`
	Stream      string `json:"stream,omitempty" jsonschema:"stdout, stderr, setup-stdout, setup-stderr, or all (default: all output streams, interleaved as written)"`
	TailLines   *int   `json:"tail_lines,omitempty" jsonschema:"only the last N lines (1..10000); not with since_offset"`
	SinceOffset *int64 `json:"since_offset,omitempty" jsonschema:"start at this byte offset of the output: the next_offset of a previous call, or 0 for the beginning; not with tail_lines"`
}

type progress struct {
	Step       int64       `json:"step,omitempty"`
	Total      int64       `json:"total,omitempty"`
	Percentage float64     `json:"percentage,omitempty"`
	Phase      string      `json:"phase,omitempty"`
	Epoch      int64       `json:"epoch,omitempty"`
	EpochTotal int64       `json:"epoch_total,omitempty"`
	ETASeconds float64     `json:"eta_seconds,omitempty"`
	Rate       float64     `json:"rate,omitempty"`
	RateUnit   string      `json:"rate_unit,omitempty"`
	Metrics    sdk.Metrics `json:"metrics,omitempty"` // NaN, ±Inf as "NaN", "Infinity", "-Infinity"
	Message    string      `json:"message,omitempty"`
}

type usage struct {
	WallSeconds  float64 `json:"wall_seconds"`
	CPUSeconds   float64 `json:"cpu_seconds"`
	PeakRSSBytes uint64  `json:"peak_rss_bytes"`
}

type exit struct {
	Code      int    `json:"code" jsonschema:"exit status; 128+n when killed by signal n"`
	Signal    string `json:"signal,omitempty"`
	OOMKilled bool   `json:"oom_killed,omitempty"`
	TimedOut  bool   `json:"timed_out,omitempty"`
	Cancelled bool   `json:"cancelled,omitempty"`
	Error     string `json:"error,omitempty"`
}

type failure struct {
	Code        string            `json:"code" jsonschema:"one failure code, e.g. MODULE_NOT_FOUND, OOM_KILLED, TIMEOUT"`
	Message     string            `json:"message"`
	Suggestions []string          `json:"suggestions,omitempty" jsonschema:"what to do next"`
	Retryable   bool              `json:"retryable" jsonschema:"whether the same command may succeed when run again"`
	Evidence    []string          `json:"evidence,omitempty" jsonschema:"log lines the diagnosis rests on"`
	Confidence  float64           `json:"confidence,omitempty"`
	Details     map[string]string `json:"details,omitempty" jsonschema:"code-specific facts, e.g. module for MODULE_NOT_FOUND"`
}

type runOut struct {
	RunID          string     `json:"run_id"`
	State          string     `json:"state" jsonschema:"queued, preparing, smoke, running, succeeded, failed, timed_out, cancelled or lost"`
	Done           bool       `json:"done" jsonschema:"the run has ended for good"`
	Reason         string     `json:"reason,omitempty" jsonschema:"one line on the current state"`
	Command        []string   `json:"command"`
	Sandbox        string     `json:"sandbox"`
	PlanID         string     `json:"plan_id,omitempty"`
	ParentRunID    string     `json:"parent_run_id,omitempty" jsonschema:"the run this one retries"`
	Attempt        int        `json:"attempt"`
	CreatedAt      string     `json:"created_at"`
	StartedAt      string     `json:"started_at,omitempty"`
	EndedAt        string     `json:"ended_at,omitempty"`
	ElapsedSeconds float64    `json:"elapsed_seconds,omitempty" jsonschema:"since the run started"`
	Progress       *progress  `json:"progress,omitempty" jsonschema:"latest progress parsed from the output"`
	Usage          *usage     `json:"usage,omitempty"`
	Exit           *exit      `json:"exit,omitempty"`
	Failure        *failure   `json:"failure,omitempty" jsonschema:"why the run failed and what to do next"`
	Egress         *egressOut `json:"egress,omitempty" jsonschema:"what the allow-list's egress proxy forwarded and refused"`
	Note           string     `json:"note,omitempty"`
	Next           string     `json:"next,omitempty"`
	// record.go
	SinceWorked *sinceWorked `json:"since_worked,omitempty" jsonschema:"for a failed run: what changed since the same command last succeeded"`
	WhatRan     *whatRan     `json:"what_ran,omitempty" jsonschema:"the record of what ran: code, interpreter and packages, image, host"`
	Machine     *machine     `json:"machine,omitempty" jsonschema:"the run's CPU and memory use (latest sample and peak)"`
}

type logsOut struct {
	RunID      string `json:"run_id"`
	Stream     string `json:"stream"`
	Text       string `json:"text" jsonschema:"the output, UTF-8"`
	Offset     int64  `json:"offset" jsonschema:"byte offset of text in the output"`
	NextOffset int64  `json:"next_offset" jsonschema:"pass as since_offset to read on"`
	TotalBytes int64  `json:"total_bytes" jsonschema:"output so far, in bytes"`
	Truncated  bool   `json:"truncated" jsonschema:"text was cut to the size bound; page with since_offset"`
	State      string `json:"state"`
	Done       bool   `json:"done" jsonschema:"the run has ended: no more output will come"`
	Smoke      bool   `json:"smoke,omitempty" jsonschema:"this is the smoke run's output: it failed, so the full run never started"`
}

type allowHost struct {
	Host   string `json:"host" jsonschema:"HOST, *.SUFFIX or HOST:PORT"`
	Reason string `json:"reason" jsonschema:"why the run needs it"`
}
