// The records runbox keeps: runs, plans, events and their states. They are
// the store's types, never the wire types: the daemon converts them to api
// types at its edge.

package store

import (
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sdk"
)

// State is a run's lifecycle state (contract).
type State string

// Run states (contract): queued → preparing → (smoke) → running →
// succeeded | failed | timed_out | cancelled | lost.
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

// States lists every state in lifecycle order.
var States = []State{Queued, Preparing, Smoke, Running, Succeeded, Failed, TimedOut, Cancelled, Lost}

// Terminal reports whether a run in state s has ended for good.
func (s State) Terminal() bool {
	switch s {
	case Succeeded, Failed, TimedOut, Cancelled, Lost:
		return true
	}
	return false
}

// Valid reports whether s is a known state.
func (s State) Valid() bool {
	for _, k := range States {
		if k == s {
			return true
		}
	}
	return false
}

// Plan is the outcome of `runbox plan`: what runbox would do and why.
type Plan struct {
	ID              string          `json:"id"`
	CreatedAt       time.Time       `json:"created_at"`
	Command         []string        `json:"command"`
	Workdir         string          `json:"workdir"`
	ScriptPath      string          `json:"script_path,omitempty"`
	TaskDescription string          `json:"task_description,omitempty"`
	Spec            sandbox.Spec    `json:"spec"`    // what exec will run (env values redacted)
	Sandbox         string          `json:"sandbox"` // process | docker
	SandboxReason   string          `json:"sandbox_reason,omitempty"`
	Result          sdk.PlanOutput  `json:"result"`
	Host            sdk.HostFacts   `json:"host"`
	Experience      *sdk.Experience `json:"experience,omitempty"`

	// ParentID is the run this plan retries: a run of the plan with no
	// parent of its own is linked to it.
	ParentID string `json:"parent_id,omitempty"`
}

// Run is one execution of a command.
type Run struct {
	ID string `json:"id"`
	// Short is the store's number for the run ("42"): unique among its
	// runs, what people see and type (shortid.go).
	Short    string `json:"short,omitempty"`
	ParentID string `json:"parent_id,omitempty"` // the run this one retries
	PlanID   string `json:"plan_id,omitempty"`
	Attempt  int    `json:"attempt"` // 1 for a first run, parent's + 1 for a retry
	State    State  `json:"state"`
	Sandbox  string `json:"sandbox"`
	// SandboxReason says why this backend was chosen (--sandbox auto).
	SandboxReason string       `json:"sandbox_reason,omitempty"`
	Spec          sandbox.Spec `json:"spec"` // env values of secrets are redacted
	// Ref is the backend's handle on the run (supervisor pid, container id).
	Ref       string            `json:"ref,omitempty"`
	Name      string            `json:"name,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	CreatedAt time.Time         `json:"created_at"`
	StartedAt *time.Time        `json:"started_at,omitempty"`
	EndedAt   *time.Time        `json:"ended_at,omitempty"`
	Exit      *sandbox.Exit     `json:"exit,omitempty"`
	Failure   *sdk.Failure      `json:"failure,omitempty"`
	Progress  *sdk.Progress     `json:"progress,omitempty"`
	// Reason is a one-line human explanation of the current state
	// ("queued: 4 runs ahead", "lost: supervisor vanished", ...).
	Reason string `json:"reason,omitempty"`
	// Fingerprint groups runs of "the same" command (computed by the host,
	// e.g. a hash of the normalised command and workdir) so that Experience
	// can summarise how similar runs went. Empty means not indexed.
	Fingerprint string `json:"fingerprint,omitempty"`
	// SubmitKey is the client's idempotency key for the submission that
	// created the run: a submission sent again (after a lost answer)
	// finds this run instead of creating a second one.
	SubmitKey string `json:"submit_key,omitempty"`
	// Campaign is the run's place in a sweep, its dependencies and its
	// GPUs (campaign.go); nil for a plain run.
	Campaign *Campaign `json:"campaign,omitempty"`
}

// Event is one lifecycle transition or notable happening of a run.
type Event struct {
	RunID string    `json:"run_id"`
	Seq   uint64    `json:"seq"` // per-run, from 1
	Time  time.Time `json:"time"`
	Type  string    `json:"type"` // "state", "progress", "note", "failure"
	State State     `json:"state,omitempty"`
	// Message is human text; Data carries the structured payload (JSON).
	Message string `json:"message,omitempty"`
	Data    []byte `json:"data,omitempty"`
}

// Filter selects runs for List. Zero fields match everything.
type Filter struct {
	States   []State
	ParentID string
	PlanID   string
	Sweep    string    // members of this sweep (campaign.go)
	Since    time.Time // created at or after
	Before   time.Time // created before
	Limit    int       // 0 = no limit
}
