package api

import "github.com/runbox/runbox/record"

// The record of what ran is its own wire format: package record holds
// plain types (no engine, no store), so clients read it as the daemon
// writes it.
type (
	// Record is what ran: code, script, interpreter and packages, image,
	// host, limits, sandbox, environment names.
	Record = record.Record
	// Change is one thing that differs between two runs.
	Change = record.Change
	// Comparison is a page of runs compared side by side.
	Comparison = record.Comparison
	// CompareRow is one run of a comparison.
	CompareRow = record.Row
)

// RunDiff is the answer of GET /v1/diff: what differs from run A to run B.
type RunDiff struct {
	A       string   `json:"a"`
	B       string   `json:"b"`
	AShort  string   `json:"a_short_id,omitempty"`
	BShort  string   `json:"b_short_id,omitempty"`
	Changes []Change `json:"changes"`
	// Notes say what could not be compared (a run without a record).
	Notes []string `json:"notes,omitempty"`
}

// SinceWorked is what changed between a failed run and the last run of the
// same command that succeeded, most suspect first.
type SinceWorked struct {
	RunID   string   `json:"run_id"`
	ShortID string   `json:"short_id,omitempty"`
	Changes []Change `json:"changes"`
	// Summary is the short list people read: a line per change (at most
	// a few), or one line saying that nothing recorded differs.
	Summary []string `json:"summary"`
}

// Machine is a run's resource use from its sys/ metrics: the latest
// sample and the peak.
type Machine struct {
	CPUPercent     float64 `json:"cpu_percent"`
	PeakCPUPercent float64 `json:"peak_cpu_percent"`
	RSSBytes       uint64  `json:"rss_bytes"`
	PeakRSSBytes   uint64  `json:"peak_rss_bytes"`
	// I/O rates in bytes per second.
	ReadRate      float64  `json:"read_bytes_per_second,omitempty"`
	WriteRate     float64  `json:"write_bytes_per_second,omitempty"`
	GPUPercent    *float64 `json:"gpu_percent,omitempty"`
	GPUMemBytes   *uint64  `json:"gpu_memory_bytes,omitempty"`
	PeakGPUMemory *uint64  `json:"peak_gpu_memory_bytes,omitempty"`
	Samples       int64    `json:"samples"`
}
