// Package api is the runbox daemon's wire protocol: the request and answer
// types of its HTTP+JSON API (version v1, every path under /v1), shared by
// the daemon and every client of it — the CLI, the MCP server and the
// dashboard. These are not the store's records: the daemon converts at its
// edge, so a field kept on disk is not a protocol field by accident, and
// the protocol can stay stable while storage changes. The transport is
// package api/client.
package api

import "time"

// Version is the protocol version; every path starts with Prefix.
const (
	Version = "v1"
	Prefix  = "/" + Version
)

// Health is the answer of GET /v1/health.
type Health struct {
	Version   string    `json:"version"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
	Active    int       `json:"active"`
	Queued    int       `json:"queued"`
	Home      string    `json:"home"`
	// Store is set when the daemon found its store damaged: what it did
	// about it, until `runbox doctor` has checked the store.
	Store *StoreDamage `json:"store,omitempty"`
}

// StoreDamage is what the daemon found and did about a damaged store.
type StoreDamage struct {
	// Message is one line for people: what was wrong, what was done,
	// where the backup is and what to run next.
	Message string    `json:"message"`
	Detail  string    `json:"detail"` // the error that revealed it
	Found   time.Time `json:"found"`
	Backup  string    `json:"backup,omitempty"`
	// Replayed counts writes put back from the damaged log and after.
	Replayed int `json:"replayed"`
	// RunsFixed counts runs corrected from their run directories.
	RunsFixed int `json:"runs_fixed"`
}

// Error is the body of every non-2xx answer.
type Error struct {
	Error string `json:"error"`
	Code  string `json:"code,omitempty"` // one of the Code* constants
}

// Error codes (Error.Code).
const (
	CodeNotFound    = "not_found"
	CodeAmbiguous   = "ambiguous"
	CodeBadRequest  = "bad_request"
	CodeUnavailable = "unavailable"
	CodeDiskFull    = "disk_full"
	CodeInternal    = "internal"
)

// Backend is one sandbox backend and whether it works here.
type Backend struct {
	Name      string            `json:"name"`
	Available bool              `json:"available"`
	Version   string            `json:"version,omitempty"`
	Detail    string            `json:"detail,omitempty"` // why not available, or notes
	Runtimes  []string          `json:"runtimes,omitempty"`
	Info      map[string]string `json:"info,omitempty"`
}

// Backends is the answer of GET /v1/backends.
type Backends struct {
	Backends []Backend `json:"backends"`
	Default  string    `json:"default"` // what --sandbox auto picks now
	Reason   string    `json:"reason"`
}

// Attach and log streams: the body is a sequence of frames in the run
// log's framing (package api/client reads them). Output frames carry the
// run log's stream numbers (stdout 1, stderr 2, setup-stdout 3,
// setup-stderr 4, meta 5); these numbers are control frames carrying
// JSON, not output.
const (
	// StreamSmokeStdout and StreamSmokeStderr carry the smoke run's output
	// (runbox exec --smoke), before the run's own.
	StreamSmokeStdout = 0x7b
	StreamSmokeStderr = 0x7c
	// StreamRun carries the Run as created; it is the first frame.
	StreamRun = 0x7d
	// StreamProgress carries a Progress (latest state).
	StreamProgress = 0x7e
	// StreamFinal carries the final Run; it is the last frame.
	StreamFinal = 0x7f
)

// ContentTypeLog is the media type of framed log streams.
const ContentTypeLog = "application/x-runbox-log"
