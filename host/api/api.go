// Package api holds the request and response types of the runbox daemon's
// HTTP+JSON API, shared by the server (host/daemon) and the client
// (host/client). Paths are versioned under /v1.
package api

import (
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sdk"
	"github.com/runbox/runbox/store/model"
)

// RunRequest asks the daemon to run a command (or a plan, with PlanID).
type RunRequest struct {
	Command  []string `json:"command,omitempty"`
	Shell    bool     `json:"shell,omitempty"`
	Workdir  string   `json:"workdir,omitempty"`
	Sandbox  string   `json:"sandbox,omitempty"` // process | docker | auto (default)
	Image    string   `json:"image,omitempty"`
	Env      []string `json:"env,omitempty"`
	CleanEnv bool     `json:"clean_env,omitempty"`
	EnvAllow []string `json:"env_allow,omitempty"`
	// ClientEnv is the caller's environment, inherited by process runs
	// (the daemon's own environment is not what the user expects).
	ClientEnv       []string          `json:"client_env,omitempty"`
	Stdin           []byte            `json:"stdin,omitempty"`
	StdinFile       string            `json:"stdin_file,omitempty"`
	Setup           []string          `json:"setup,omitempty"`
	Assets          []sandbox.Asset   `json:"assets,omitempty"`
	Timeout         Duration          `json:"timeout,omitempty"`
	Grace           Duration          `json:"grace,omitempty"`
	Limits          sandbox.Limits    `json:"limits"`
	Network         string            `json:"network,omitempty"`
	ReadOnlyRoot    bool              `json:"read_only_root,omitempty"`
	GPUs            string            `json:"gpus,omitempty"`
	KeepContainer   bool              `json:"keep_container,omitempty"`
	User            string            `json:"user,omitempty"`
	Name            string            `json:"name,omitempty"`
	Labels          map[string]string `json:"labels,omitempty"`
	ParentID        string            `json:"parent_id,omitempty"`
	PlanID          string            `json:"plan_id,omitempty"`
	Smoke           bool              `json:"smoke,omitempty"` // run the plan's smoke command first
	Attach          bool              `json:"attach,omitempty"`
	StallTimeout    Duration          `json:"stall_timeout,omitempty"`
	ScriptPath      string            `json:"script_path,omitempty"`
	TaskDescription string            `json:"task_description,omitempty"`
}

// PlanRequest asks for a plan without running anything.
type PlanRequest struct {
	RunRequest
}

// Backends is the answer of GET /v1/backends.
type Backends struct {
	Backends []sandbox.Health `json:"backends"`
	Default  string           `json:"default"` // what --sandbox auto picks now
	Reason   string           `json:"reason"`
}

// Health is the answer of GET /v1/health.
type Health struct {
	Version   string    `json:"version"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
	Active    int       `json:"active"`
	Queued    int       `json:"queued"`
	Home      string    `json:"home"`
}

// Error is the body of every non-2xx answer.
type Error struct {
	Error string `json:"error"`
	Code  string `json:"code,omitempty"` // not_found, ambiguous, bad_request, unavailable, disk_full, internal
}

// RunList is the answer of GET /v1/runs.
type RunList struct {
	Runs []*model.Run `json:"runs"`
}

// EventList is the answer of GET /v1/runs/{id}/events.
type EventList struct {
	Events []model.Event `json:"events"`
}

// Analysis is the answer of `runbox analyze` (contract).
type Analysis struct {
	Failure  *sdk.Failure  `json:"failure"`
	Progress *sdk.Progress `json:"progress"`
}

// Attach streams (a run started with Attach): the body is a sequence of
// runlog records; records with these stream numbers are control frames
// carrying JSON, not output.
const (
	// StreamProgress carries an sdk.Progress (latest state).
	StreamProgress = 0x7e
	// StreamFinal carries the final model.Run; it is the last frame.
	StreamFinal = 0x7f
	// StreamRun carries the model.Run as created; it is the first frame.
	StreamRun = 0x7d
)

// ContentTypeLog is the media type of framed log streams.
const ContentTypeLog = "application/x-runbox-log"
