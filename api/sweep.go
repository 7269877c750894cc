package api

import "time"

// SweepRequest asks for one run per parameter set (POST /v1/sweeps). Run
// is the template: "{NAME}" in its command is replaced with each set's
// value, and RUNBOX_PARAM_NAME is set in its environment.
type SweepRequest struct {
	Run         RunRequest          `json:"run"`
	ParamNames  []string            `json:"param_names"`
	Sets        []map[string]string `json:"sets"`
	Parallel    int                 `json:"parallel,omitempty"`
	MaxFailures int                 `json:"max_failures,omitempty"`
	Name        string              `json:"name,omitempty"`
	// Yes allows a sweep of more than MaxSweepMembers members.
	Yes bool `json:"yes,omitempty"`
	// IdempotencyKey names one submission, as for runs: sent again after
	// a lost answer, it gets the sweep it created (api/client sets it).
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// MaxSweepMembers is the largest sweep made without Yes.
const MaxSweepMembers = 10000

// Sweep is a sweep and its members, as `runbox sweep status` shows it.
type Sweep struct {
	ID          string        `json:"id"`
	Name        string        `json:"name,omitempty"`
	Command     []string      `json:"command"`
	CommandLine string        `json:"command_line,omitempty"` // Command as `runbox sweep ls` shows it: one shell line, hidden characters escaped
	ParamNames  []string      `json:"param_names"`
	Parallel    int           `json:"parallel,omitempty"`
	MaxFailures int           `json:"max_failures,omitempty"`
	CreatedAt   time.Time     `json:"created_at"`
	Stopped     string        `json:"stopped,omitempty"`
	Members     int           `json:"members"`
	Counts      map[State]int `json:"counts"`
	Done        bool          `json:"done"`
	Runs        []SweepRun    `json:"runs,omitempty"`
}

// SweepRun is one member: its params, state and metrics.
type SweepRun struct {
	ID       string            `json:"id"`
	ShortID  string            `json:"short_id,omitempty"`
	Index    int               `json:"index"`
	Params   map[string]string `json:"params"`
	State    State             `json:"state"`
	Reason   string            `json:"reason,omitempty"`
	Progress *float64          `json:"progress,omitempty"` // percent
	Metrics  map[string]Metric `json:"metrics,omitempty"`
	Failure  string            `json:"failure,omitempty"` // failure code
	Started  *time.Time        `json:"started_at,omitempty"`
	Ended    *time.Time        `json:"ended_at,omitempty"`
	// Attempt is which attempt of the member this row shows (its latest:
	// 1 until the member is retried); Previous are the earlier attempts'
	// run ids, oldest first.
	Attempt  int      `json:"attempt"`
	Previous []string `json:"previous,omitempty"`
}

// Metric is a member's last and best value of one metric. Best is the
// best finite value, NaN when the member has none; either may be NaN or
// ±Inf (a loss that diverged), written "NaN", "Infinity", "-Infinity".
type Metric struct {
	Last Float `json:"last"`
	Best Float `json:"best"`
}

// SweepList is GET /v1/sweeps.
type SweepList struct {
	Sweeps []Sweep `json:"sweeps"`
}
