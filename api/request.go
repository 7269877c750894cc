package api

// RunRequest asks the daemon to run a command (POST /v1/runs), to plan one
// (POST /v1/plans), or to run a plan (with PlanID).
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
	ClientEnv    []string `json:"client_env,omitempty"`
	Stdin        []byte   `json:"stdin,omitempty"`
	StdinFile    string   `json:"stdin_file,omitempty"`
	Setup        []string `json:"setup,omitempty"`
	Assets       []Asset  `json:"assets,omitempty"`
	Timeout      Duration `json:"timeout,omitempty"`
	Grace        Duration `json:"grace,omitempty"`
	Limits       Limits   `json:"limits"`
	Network      string   `json:"network,omitempty"`
	ReadOnlyRoot bool     `json:"read_only_root,omitempty"`
	GPUs         string   `json:"gpus,omitempty"`
	// After lists runs this one starts after (when all succeeded, or
	// however they end with AfterAny); see host/campaign.go.
	After         []string `json:"after,omitempty"`
	AfterAny      bool     `json:"after_any,omitempty"`
	KeepContainer bool     `json:"keep_container,omitempty"`
	// Pull lets a container run pull its image when it is not present
	// locally; without it a missing image is refused at once.
	Pull   bool              `json:"pull,omitempty"`
	User   string            `json:"user,omitempty"`
	Slurm  *SlurmRequest     `json:"slurm,omitempty"` // --sandbox slurm only
	Name   string            `json:"name,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	// ParentRunID links the run to the one it retries (the lineage).
	ParentRunID     string   `json:"parent_run_id,omitempty"`
	PlanID          string   `json:"plan_id,omitempty"`
	Smoke           bool     `json:"smoke,omitempty"` // run the plan's smoke command first
	Attach          bool     `json:"attach,omitempty"`
	StallTimeout    Duration `json:"stall_timeout,omitempty"`
	ScriptPath      string   `json:"script_path,omitempty"`
	TaskDescription string   `json:"task_description,omitempty"`
	// IdempotencyKey names one submission: sent again with the same key
	// (after a lost answer), it returns the run it created instead of
	// starting a second one. api/client sets a fresh one per submission.
	IdempotencyKey string `json:"idempotency_key,omitempty"`

	// Isolate confines a process run: none, net, fs or full; empty lets
	// the plan decide (none without a plan). RW are further writable
	// paths (they must exist). AllowRisk runs a plan's critical risk with
	// less isolation than the plan wanted when this host cannot give it;
	// without it such a run is refused.
	Isolate   string   `json:"isolate,omitempty"`
	RW        []string `json:"rw,omitempty"`
	AllowRisk bool     `json:"allow_risk,omitempty"`

	// AllowNet (--allow-net) are the only hosts the run may reach, through
	// an egress proxy: HOST, *.SUFFIX, HOST:PORT (ports 80 and 443
	// otherwise). SetupAllowNet (--setup-allow-net) are the setup
	// commands' own; with only it, the command runs with no network.
	AllowNet      []string `json:"allow_net,omitempty"`
	SetupAllowNet []string `json:"setup_allow_net,omitempty"`

	// Snapshot runs a copy of the workspace's code taken at submission
	// (edits made while the run waits do not change what runs); it is on
	// by default for sweep members and runs with After, unless
	// NoSnapshot. NoRecord skips the record of what ran (api/record.go).
	Snapshot   bool `json:"snapshot,omitempty"`
	NoSnapshot bool `json:"no_snapshot,omitempty"`
	NoRecord   bool `json:"no_record,omitempty"`
}
