package api

import (
	"fmt"
	"time"
)

// Plan is what runbox would do with a command and why (POST /v1/plans).
type Plan struct {
	ID string `json:"id"`
	// PlanID is ID again under the name MCP's compute_plan and
	// local_execute use, so a plan reads the same on every surface
	// (`runbox plan --json` included); id stays for existing clients.
	PlanID          string    `json:"plan_id"`
	CreatedAt       time.Time `json:"created_at"`
	Command         []string  `json:"command"`
	Workdir         string    `json:"workdir"`
	ScriptPath      string    `json:"script_path,omitempty"`
	TaskDescription string    `json:"task_description,omitempty"`
	// ParentRunID is the run this plan retries; its runs are linked to
	// it unless they name a parent of their own.
	ParentRunID string `json:"parent_run_id,omitempty"`
	// Spec is what exec will run (secret env values redacted).
	Spec          Spec        `json:"spec"`
	Sandbox       string      `json:"sandbox"` // process | docker
	SandboxReason string      `json:"sandbox_reason,omitempty"`
	Result        PlanResult  `json:"result"`
	Host          HostFacts   `json:"host"`
	Experience    *Experience `json:"experience,omitempty"`
	// Isolation is how a process run of this plan is confined on this
	// host (nil for containers).
	Isolation *Isolation `json:"isolation,omitempty"`
}

// Isolation is what confines a process run here: the level enforced and
// what it means, and, when the plan wanted more than this host can give,
// what and why not.
type Isolation struct {
	Level      string `json:"level"` // none | net | fs | full: what will be enforced
	Network    string `json:"network"`
	Filesystem string `json:"filesystem"`
	Processes  string `json:"processes"`
	// Wanted is the level the plan's findings call for, when more than
	// Level; Unavailable says why this host cannot give it.
	Wanted       string `json:"wanted,omitempty"`
	WantedReason string `json:"wanted_reason,omitempty"`
	Unavailable  string `json:"unavailable,omitempty"`
	// Refused: exec refuses this plan without allow_risk (a critical
	// risk that cannot get full isolation here).
	Refused bool `json:"refused,omitempty"`
}

// Risk severities, from least to most serious.
const (
	SeverityInfo     = "info"
	SeverityLow      = "low"
	SeverityMedium   = "medium"
	SeverityHigh     = "high"
	SeverityCritical = "critical"
)

// PlanResult is the planner's answer.
type PlanResult struct {
	Risks          []Risk          `json:"risks,omitempty"`
	Recommendation *Recommendation `json:"recommendation,omitempty"`
	Smoke          *SmokeTest      `json:"smoke,omitempty"`
	Frameworks     []string        `json:"frameworks,omitempty"`
	Notes          []string        `json:"notes,omitempty"`
	// AllowNet are the hosts the planner found the command needs, each
	// with why; the plan's spec.allow_net is what a run will get.
	AllowNet []AllowHost `json:"allow_net,omitempty"`
}

// AllowHost is a host proposed for --allow-net, and why.
type AllowHost struct {
	Host   string `json:"host"`
	Reason string `json:"reason"`
}

// Risk is something that could go wrong or harm the machine.
type Risk struct {
	Severity string `json:"severity"`
	Code     string `json:"code"` // short stable id, e.g. rm-outside-workspace
	Message  string `json:"message"`
	Evidence string `json:"evidence,omitempty"`
}

// Recommendation is how the planner suggests running the command; every
// value that is set carries its reason.
type Recommendation struct {
	Sandbox        string `json:"sandbox,omitempty"`
	SandboxReason  string `json:"sandbox_reason,omitempty"`
	Image          string `json:"image,omitempty"`
	ImageReason    string `json:"image_reason,omitempty"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty"`
	TimeoutReason  string `json:"timeout_reason,omitempty"`
	MemoryBytes    int64  `json:"memory_bytes,omitempty"`
	MemoryReason   string `json:"memory_reason,omitempty"`
	Network        string `json:"network,omitempty"`
	NetworkReason  string `json:"network_reason,omitempty"`
	GPUs           string `json:"gpus,omitempty"`
	GPUsReason     string `json:"gpus_reason,omitempty"`
}

// SmokeTest is a cheap variant of the command that checks it can start.
type SmokeTest struct {
	Command []string `json:"command"`
	Flag    string   `json:"flag"`   // the flag found, e.g. --dry-run
	Reason  string   `json:"reason"` // where it was found
}

// HostFacts is what the planner knew about the machine.
type HostFacts struct {
	OS              string   `json:"os"`
	Arch            string   `json:"arch"`
	CPUs            int      `json:"cpus,omitempty"`
	MemoryBytes     uint64   `json:"memory_bytes,omitempty"`
	DiskFreeBytes   uint64   `json:"disk_free_bytes,omitempty"`
	DockerAvailable bool     `json:"docker_available"`
	DockerRuntimes  []string `json:"docker_runtimes,omitempty"`
	GPUs            []GPU    `json:"gpus,omitempty"`
}

// GPU is one accelerator the host can see.
type GPU struct {
	Vendor      string `json:"vendor"`
	Name        string `json:"name,omitempty"`
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
}

// Experience summarises similar past runs.
type Experience struct {
	Runs                  int            `json:"runs"`
	Succeeded             int            `json:"succeeded"`
	Failed                int            `json:"failed"`
	FailureCodes          map[string]int `json:"failure_codes,omitempty"`
	MedianDurationSeconds float64        `json:"median_duration_seconds,omitempty"`
	MaxPeakRSSBytes       uint64         `json:"max_peak_rss_bytes,omitempty"`
	LastFailure           *Failure       `json:"last_failure,omitempty"`
	// Changes is what the recent failures had that the successes did not,
	// from the records of what ran (api/record.go).
	Changes []string `json:"changes,omitempty"`
}

// Counts says how the similar runs ended, every run counted once: "3
// similar runs: 1 succeeded, 0 failed, 2 cancelled or lost".
func (e *Experience) Counts() string {
	s := fmt.Sprintf("%d similar runs: %d succeeded, %d failed", e.Runs, e.Succeeded, e.Failed)
	if other := e.Runs - e.Succeeded - e.Failed; other > 0 {
		s += fmt.Sprintf(", %d cancelled or lost", other)
	}
	return s
}
