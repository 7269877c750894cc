package api

import "time"

// State is a run's lifecycle state (contract): queued → preparing →
// (smoke) → running → succeeded | failed | timed_out | cancelled | lost.
type State string

// Run states (contract).
const (
	Queued    State = "queued"
	Preparing State = "preparing"
	Smoke     State = "smoke"
	Running   State = "running"
	Succeeded State = "succeeded"
	Failed    State = "failed"
	TimedOut  State = "timed_out"
	Cancelled State = "cancelled"
	Lost      State = "lost"
)

// States is every run state, in lifecycle order.
var States = []State{Queued, Preparing, Smoke, Running, Succeeded, Failed, TimedOut, Cancelled, Lost}

// Terminal reports whether a run in state s has ended for good.
func (s State) Terminal() bool {
	switch s {
	case Succeeded, Failed, TimedOut, Cancelled, Lost:
		return true
	}
	return false
}

// Run is one execution of a command, as clients see it.
type Run struct {
	ID string `json:"id"`
	// ShortID is the store's number for the run ("42"): what `runbox ls`
	// shows and people type. Any command takes it, the full id, a unique
	// prefix of the full id, or @last / @last~N.
	ShortID string `json:"short_id,omitempty"`
	// ParentRunID is the run this one retries (the lineage).
	ParentRunID string `json:"parent_run_id,omitempty"`
	PlanID      string `json:"plan_id,omitempty"`
	Attempt     int    `json:"attempt"` // 1 for a first run, parent's + 1 for a retry
	State       State  `json:"state"`
	Sandbox     string `json:"sandbox"`
	// SandboxReason says why this backend was chosen (--sandbox auto).
	SandboxReason string            `json:"sandbox_reason,omitempty"`
	Spec          Spec              `json:"spec"`
	Ref           string            `json:"ref,omitempty"` // supervisor pid, container id
	Name          string            `json:"name,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	CreatedAt     time.Time         `json:"created_at"`
	StartedAt     *time.Time        `json:"started_at,omitempty"`
	EndedAt       *time.Time        `json:"ended_at,omitempty"`
	Exit          *Exit             `json:"exit,omitempty"`
	Failure       *Failure          `json:"failure,omitempty"`
	Progress      *Progress         `json:"progress,omitempty"`
	// Reason is a one-line explanation of the current state ("queued: 4
	// runs ahead", "lost: supervisor vanished", ...).
	Reason string `json:"reason,omitempty"`
	// Egress is what the --allow-net proxy forwarded and refused.
	Egress *Egress `json:"egress,omitempty"`

	// What ran and what changed (api/record.go): given for one run
	// (GET /v1/runs/{id}), never in lists.
	Record      *Record      `json:"record,omitempty"`
	SinceWorked *SinceWorked `json:"since_worked,omitempty"`
	Machine     *Machine     `json:"machine,omitempty"`
}

// Egress is what a run's egress proxy did (--allow-net).
type Egress struct {
	Proxied int64 `json:"proxied"`
	Refused int64 `json:"refused"`
	// Summary is "blocked 3 connections: example.org:443" ("" when none).
	Summary string          `json:"summary,omitempty"`
	Blocked []EgressBlocked `json:"blocked,omitempty"`
}

// EgressBlocked is the refusals to one host:port.
type EgressBlocked struct {
	Host   string    `json:"host"`
	Port   int       `json:"port"`
	Count  int64     `json:"count"`
	First  time.Time `json:"first"`
	Last   time.Time `json:"last"`
	Reason string    `json:"reason"`
}

// Spec is what a run runs and with which limits. Values of secret-looking
// environment variables are redacted.
type Spec struct {
	Command []string `json:"command"`
	// CommandLine is Command as one line a shell reads back as the same
	// arguments, with control characters escaped (a shell run as its sh
	// -c): what the views show (package printable).
	CommandLine string   `json:"command_line,omitempty"`
	Shell       bool     `json:"shell,omitempty"`
	Workdir     string   `json:"workdir"`
	Env         []string `json:"env,omitempty"`
	CleanEnv    bool     `json:"clean_env,omitempty"`
	EnvAllow    []string `json:"env_allow,omitempty"`
	StdinFile   string   `json:"stdin_file,omitempty"`
	Setup       []string `json:"setup,omitempty"`
	Assets      []Asset  `json:"assets,omitempty"`
	Timeout     Duration `json:"timeout,omitempty"`
	Grace       Duration `json:"grace,omitempty"`
	Limits      Limits   `json:"limits"`
	// Isolate is how a process run is confined (none, net, fs, full):
	// what the supervisor enforced, or refused to start without. RW are
	// the paths it may write besides its workspace.
	Isolate string   `json:"isolate,omitempty"`
	RW      []string `json:"rw,omitempty"`
	// AllowNet and SetupAllowNet are the hosts the run (its setup) may
	// reach through the egress proxy.
	AllowNet      []string `json:"allow_net,omitempty"`
	SetupAllowNet []string `json:"setup_allow_net,omitempty"`
	// Container settings (docker sandbox).
	Image         string `json:"image,omitempty"`
	Network       string `json:"network,omitempty"` // none (default) | bridge | host
	ReadOnlyRoot  bool   `json:"read_only_root,omitempty"`
	GPUs          string `json:"gpus,omitempty"`
	KeepContainer bool   `json:"keep_container,omitempty"`
	User          string `json:"user,omitempty"`
}

// Asset is a file or directory copied into the workspace before the run.
type Asset struct {
	Src string `json:"src"` // path on the host
	Dst string `json:"dst"` // path relative to the workspace
}

// Limits bound a run's resources (0 = no limit).
type Limits struct {
	MemoryBytes int64   `json:"memory_bytes,omitempty"`
	CPUs        float64 `json:"cpus,omitempty"`
	Pids        int64   `json:"pids,omitempty"`
}

// Exit is how a run's process ended.
type Exit struct {
	Code        int    `json:"code"`             // exit status; 128+n when killed by signal n
	Signal      string `json:"signal,omitempty"` // "SIGKILL", ... when a signal ended it
	OOMKilled   bool   `json:"oom_killed,omitempty"`
	TimedOut    bool   `json:"timed_out,omitempty"`
	Cancelled   bool   `json:"cancelled,omitempty"`
	SetupFailed bool   `json:"setup_failed,omitempty"`
	Error       string `json:"error,omitempty"`
	Lost        bool   `json:"lost,omitempty"`
	// LogDropped counts output bytes that could not be kept (a full disk).
	LogDropped int64     `json:"log_dropped,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	EndedAt    time.Time `json:"ended_at"`
	Usage      Usage     `json:"usage"`
}

// Usage is what a run consumed.
type Usage struct {
	WallSeconds  float64 `json:"wall_seconds"`
	CPUSeconds   float64 `json:"cpu_seconds"`
	PeakRSSBytes uint64  `json:"peak_rss_bytes"`
}

// Event is one lifecycle transition or notable happening of a run.
type Event struct {
	RunID   string    `json:"run_id"`
	Seq     uint64    `json:"seq"` // per run, from 1
	Time    time.Time `json:"time"`
	Type    string    `json:"type"` // state, progress, note, failure
	State   State     `json:"state,omitempty"`
	Message string    `json:"message,omitempty"`
	Data    []byte    `json:"data,omitempty"` // structured payload (JSON)
}

// RunList is the answer of GET /v1/runs.
type RunList struct {
	Runs []*Run `json:"runs"`
}

// EventList is the answer of GET /v1/runs/{id}/events.
type EventList struct {
	Events []Event `json:"events"`
}
