package sdk

// ABIVersion is the plugin ABI this SDK speaks. A guest returns it from
// runbox_abi_version; the host refuses modules that report another major.
const ABIVersion = 1

// Kind names one of the three things a plugin can do.
type Kind string

// Plugin kinds (contract).
const (
	KindPlanner    Kind = "planner"
	KindClassifier Kind = "classifier"
	KindProgress   Kind = "progress"
)

// Manifest describes a plugin. The guest returns it from runbox_describe.
type Manifest struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	ABI         int      `json:"abi"`
	Kinds       []Kind   `json:"kinds"`
	Description string   `json:"description,omitempty"`
	Frameworks  []string `json:"frameworks,omitempty"`
	// Priority breaks ties between plugins of the same kind: higher wins.
	// Built-in plugins use 0; a user plugin that wants to override them
	// uses a positive number.
	Priority int `json:"priority,omitempty"`
	// Prefilter lists literals for progress plugins: the host sends a line
	// to runbox_parse only if it contains one of them. Empty means every line.
	Prefilter []string `json:"prefilter,omitempty"`
	// PrefilterConfirm narrows Prefilter literals that also occur in
	// ordinary text: a literal named here lets a line through only at an
	// occurrence where one of its entries matches the text around it (see
	// PrefilterConfirm and docs/PLUGINS.md). Optional; a host that
	// predates it ignores it and sends every line with a literal, which is
	// slower but gives the same progress.
	PrefilterConfirm []PrefilterConfirm `json:"prefilter_confirm,omitempty"`
}

// PrefilterConfirm is one condition on the text around a Prefilter
// literal: Before must match the text that ends where the literal starts,
// After the text that starts where it ends (an empty pattern always
// matches). Patterns are RE2 syntax matched byte by byte, restricted to
// what needs no backtracking: ASCII literals, classes, ".", repetition of
// one character or class, alternation, groups, "^" at the start of Before
// and "$" at the end of After. A byte >= 0x80 of the line counts as one
// character U+FFFD. An entry the host cannot compile makes its literal
// plain again (never stricter than intended).
type PrefilterConfirm struct {
	Literal string `json:"literal"`
	Before  string `json:"before,omitempty"`
	After   string `json:"after,omitempty"`
}

// ---- planner ----------------------------------------------------------------

// GPU is one accelerator the host can see.
type GPU struct {
	Vendor      string `json:"vendor"` // nvidia, amd, apple
	Name        string `json:"name,omitempty"`
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
}

// HostFacts is what the planner knows about the machine.
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

// Experience summarises similar past runs.
type Experience struct {
	Runs                  int            `json:"runs"`
	Succeeded             int            `json:"succeeded"`
	Failed                int            `json:"failed"`
	FailureCodes          map[string]int `json:"failure_codes,omitempty"`
	MedianDurationSeconds float64        `json:"median_duration_seconds,omitempty"`
	// MaxPeakRSSBytes is the largest peak RSS of past runs, zero unless one
	// of them succeeded, timed out or was killed for memory: a run that
	// failed another way, was cancelled or lost may have stopped long before
	// its peak, so its peak may raise the figure but never sets it alone. A
	// failed smoke run's peak (the smoke command's) does not count.
	MaxPeakRSSBytes uint64   `json:"max_peak_rss_bytes,omitempty"`
	LastFailure     *Failure `json:"last_failure,omitempty"`
}

// PlanInput is what runbox_plan receives.
type PlanInput struct {
	Command         []string    `json:"command"`
	Workdir         string      `json:"workdir,omitempty"`
	ScriptPath      string      `json:"script_path,omitempty"`
	ScriptText      string      `json:"script_text,omitempty"`
	TaskDescription string      `json:"task_description,omitempty"`
	Host            HostFacts   `json:"host"`
	Experience      *Experience `json:"experience,omitempty"`
}

// Severity of a risk, from least to most serious.
const (
	SeverityInfo     = "info"
	SeverityLow      = "low"
	SeverityMedium   = "medium"
	SeverityHigh     = "high"
	SeverityCritical = "critical"
)

// Risk is one thing about a command that a user should know before running it.
type Risk struct {
	Severity string `json:"severity"`
	Code     string `json:"code"` // short stable id, e.g. "rm-outside-workspace"
	Message  string `json:"message"`
	Evidence string `json:"evidence,omitempty"`
}

// Recommendation is how the planner suggests running the command. Every
// value that is set carries its reason.
type Recommendation struct {
	Sandbox        string `json:"sandbox,omitempty"` // process | docker
	SandboxReason  string `json:"sandbox_reason,omitempty"`
	Image          string `json:"image,omitempty"`
	ImageReason    string `json:"image_reason,omitempty"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty"`
	TimeoutReason  string `json:"timeout_reason,omitempty"`
	MemoryBytes    int64  `json:"memory_bytes,omitempty"`
	MemoryReason   string `json:"memory_reason,omitempty"`
	Network        string `json:"network,omitempty"` // none | bridge | host
	NetworkReason  string `json:"network_reason,omitempty"`
	GPUs           string `json:"gpus,omitempty"` // "" | "all" | count
	GPUsReason     string `json:"gpus_reason,omitempty"`
}

// Smoke is a cheap variant of the command that checks it can start.
type Smoke struct {
	Command []string `json:"command"`
	Flag    string   `json:"flag"`   // the flag actually found, e.g. "--dry-run"
	Reason  string   `json:"reason"` // where it was found
}

// PlanOutput is what runbox_plan returns.
type PlanOutput struct {
	Risks          []Risk          `json:"risks,omitempty"`
	Recommendation *Recommendation `json:"recommendation,omitempty"`
	Smoke          *Smoke          `json:"smoke,omitempty"`
	Frameworks     []string        `json:"frameworks,omitempty"`
	Notes          []string        `json:"notes,omitempty"`
	// AllowNet are the hosts the command needs to reach, each with why
	// (--allow-net HOST: a pip install's index, a clone's host, ...). A
	// plan with a critical risk proposes none.
	AllowNet []AllowHost `json:"allow_net,omitempty"`
}

// AllowHost is one host a plan proposes for --allow-net, and why.
type AllowHost struct {
	Host   string `json:"host"` // HOST, *.SUFFIX or HOST:PORT
	Reason string `json:"reason"`
}

// ---- classifier ---------------------------------------------------------------

// Limits the run was started with (0 = none).
type Limits struct {
	MemoryBytes    int64   `json:"memory_bytes,omitempty"`
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`
	CPUs           float64 `json:"cpus,omitempty"`
	Pids           int64   `json:"pids,omitempty"`
	// StallSeconds is runbox's stall window (--stall-timeout), when set.
	StallSeconds float64 `json:"stall_seconds,omitempty"`
}

// ClassifyInput is what runbox_classify receives after a run ended unsuccessfully.
type ClassifyInput struct {
	ExitCode  int    `json:"exit_code"`
	Signal    string `json:"signal,omitempty"` // e.g. "SIGKILL"
	OOMKilled bool   `json:"oom_killed,omitempty"`
	// OOMChecked: the sandbox looked for an OOM kill where one would be
	// recorded (the run's cgroup memory.events, the container's state) and
	// found none, so a SIGKILL came from something else.
	OOMChecked bool     `json:"oom_checked,omitempty"`
	TimedOut   bool     `json:"timed_out,omitempty"`
	Cancelled  bool     `json:"cancelled,omitempty"` // stopped by the user through runbox
	Stalled    bool     `json:"stalled,omitempty"`
	Smoke      bool     `json:"smoke,omitempty"` // this was the smoke run
	Sandbox    string   `json:"sandbox,omitempty"`
	Command    []string `json:"command,omitempty"`
	Limits     Limits   `json:"limits"`
	StdoutTail string   `json:"stdout_tail,omitempty"`
	StderrTail string   `json:"stderr_tail,omitempty"`
	// SandboxError is set when the sandbox itself could not start or lost the run.
	SandboxError    string    `json:"sandbox_error,omitempty"`
	Progress        *Progress `json:"progress,omitempty"`
	PeakRSSBytes    uint64    `json:"peak_rss_bytes,omitempty"`
	DurationSeconds float64   `json:"duration_seconds,omitempty"`
}

// Failure explains why a run failed and what to do next.
type Failure struct {
	Code        string   `json:"code"`
	Message     string   `json:"message"`
	Suggestions []string `json:"suggestions,omitempty"`
	Retryable   bool     `json:"retryable"`
	Evidence    []string `json:"evidence,omitempty"`
	Confidence  float64  `json:"confidence"` // 0..1
	// Details holds code-specific facts: "module" for MODULE_NOT_FOUND,
	// "exception" for PYTHON_EXCEPTION, "path" for FILE_NOT_FOUND, ...
	Details map[string]string `json:"details,omitempty"`
	// Plugin is filled in by the host: which plugin produced this.
	Plugin string `json:"plugin,omitempty"`
	// PluginVersion is filled in by the host: that plugin's version.
	PluginVersion string `json:"plugin_version,omitempty"`
}

// ---- progress -----------------------------------------------------------------

// ParseInput is a batch of output lines (without line endings) plus the
// state so far, so a plugin can stay stateless between calls.
type ParseInput struct {
	Lines []string  `json:"lines"`
	Last  *Progress `json:"last,omitempty"`
	// State is what the plugin returned as ParseOutput.State with its
	// previous batch of this run (empty for the first, and from a host
	// older than the field). It lets a plugin remember what Last cannot
	// say — the built-in progress plugin's counters across lines of one
	// shape — so that its answer does not depend on where the host cut
	// the batches. Added compatibly: a plugin that never sets it gets "".
	State string `json:"state,omitempty"`
}

// ParseOutput is what runbox_parse returns: zero or more updates in order.
type ParseOutput struct {
	Updates []Progress `json:"updates,omitempty"`
	// State is opaque to the host: it keeps it for this plugin and this
	// run and sends it back as the next batch's ParseInput.State
	// (replaced by each answer, "" included). Keep it small: it crosses
	// the ABI twice per batch.
	State string `json:"state,omitempty"`
}

// Progress is what a person would read off the screen. Zero values mean
// "not known"; an update is merged into the current state with Merge.
type Progress struct {
	Step       int64   `json:"step,omitempty"`
	Total      int64   `json:"total,omitempty"`
	Percentage float64 `json:"percentage,omitempty"`
	Phase      string  `json:"phase,omitempty"`
	Epoch      int64   `json:"epoch,omitempty"`
	EpochTotal int64   `json:"epoch_total,omitempty"`
	// EpochExact is the epoch as printed when it is not whole (Hugging
	// Face Trainer's 0.58, fairseq's 26.267); Epoch holds the epoch in
	// progress (its ceiling).
	EpochExact float64 `json:"epoch_exact,omitempty"`
	ETASeconds float64 `json:"eta_seconds,omitempty"`
	Rate       float64 `json:"rate,omitempty"`
	RateUnit   string  `json:"rate_unit,omitempty"` // "it/s", "samples/s", "tok/s"
	// Metrics may hold NaN and ±Inf (see Metrics for their JSON form).
	Metrics Metrics `json:"metrics,omitempty"`
	Message string  `json:"message,omitempty"`
	Source  string  `json:"source,omitempty"` // which format matched: "runbox", "tqdm", "keras", ...
}
