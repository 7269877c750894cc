// Package record keeps what ran: the code (git commit, branch, remote,
// the uncommitted diff, untracked names), the script's content hash, the
// interpreter and its packages, the container image, the host, the limits,
// the sandbox and the environment's names. A record is taken in two parts:
// Fast, on the submit path (files read directly, no process spawned), and
// Complete, after the run has started (git diff, the package list, the
// host's GPUs), with the slow parts cached.
//
// The package is a leaf: it knows neither the store nor the engine, so the
// daemon, the CLI and tests can all read records.
package record

import "time"

// Version is the record format; a reader of a newer one shows what it knows.
const Version = 1

// Bounds of what a record keeps.
const (
	// MaxDiff bounds the uncommitted diff kept (what was cut is said).
	MaxDiff = 1 << 20
	// MaxUntracked bounds the untracked names kept.
	MaxUntracked = 200
	// MaxScriptHash bounds the bytes of a script that are hashed: a
	// "script" of gigabytes is data, not code.
	MaxScriptHash = 16 << 20
)

// Record is what ran, as far as runbox can tell.
type Record struct {
	Version int       `json:"version"`
	TakenAt time.Time `json:"taken_at"`
	// Complete is set once the parts taken after the start are in.
	Complete bool `json:"complete"`

	Command []string `json:"command"`
	// Params are the command's --name value / name=value arguments.
	Params  map[string]string `json:"params,omitempty"`
	Workdir string            `json:"workdir"`
	Sandbox string            `json:"sandbox"`
	Isolate string            `json:"isolate,omitempty"`
	Limits  Limits            `json:"limits"`
	// Env are the variables the run was given explicitly (KEY=VALUE,
	// secret values redacted); EnvNames the names it inherited.
	Env      []string `json:"env,omitempty"`
	EnvNames []string `json:"env_names,omitempty"`

	Code        *Code        `json:"code,omitempty"`
	Script      *Script      `json:"script,omitempty"`
	Interpreter *Interpreter `json:"interpreter,omitempty"`
	Image       *Image       `json:"image,omitempty"`
	Host        *Host        `json:"host,omitempty"`
	Snapshot    *Snapshot    `json:"snapshot,omitempty"`
	// Notes say what could not be recorded and why.
	Notes []string `json:"notes,omitempty"`
}

// Limits are the run's resource limits (0: none).
type Limits struct {
	MemoryBytes    int64   `json:"memory_bytes,omitempty"`
	CPUs           float64 `json:"cpus,omitempty"`
	Pids           int64   `json:"pids,omitempty"`
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`
	GPUs           string  `json:"gpus,omitempty"`
	Network        string  `json:"network,omitempty"`
}

// Code is the workspace's git state.
type Code struct {
	Root   string `json:"root"`
	Commit string `json:"commit,omitempty"`
	Branch string `json:"branch,omitempty"`
	// Remote is origin's URL with any credentials taken out.
	Remote string `json:"remote,omitempty"`
	Dirty  bool   `json:"dirty"`
	// Diff is `git diff HEAD` (binary files named, not carried), cut at
	// MaxDiff; DiffBytes is its whole size and DiffCut says what was cut.
	Diff      string `json:"diff,omitempty"`
	DiffBytes int64  `json:"diff_bytes,omitempty"`
	DiffCut   string `json:"diff_cut,omitempty"`
	// DiffFiles lists the files the uncommitted diff touches.
	DiffFiles []string `json:"diff_files,omitempty"`
	Untracked []string `json:"untracked,omitempty"`
	// UntrackedMore counts untracked names over MaxUntracked.
	UntrackedMore int `json:"untracked_more,omitempty"`
	// AtSnapshot: the uncommitted state was read as the run's --snapshot
	// copy was taken, so it is what ran; else it was read once the run had
	// started, from the workspace.
	AtSnapshot bool `json:"at_snapshot,omitempty"`
	// ChangedAfterStart lists the tracked files changed after the run
	// started, when the state was read from the workspace later: their
	// recorded changes may hold edits made after the run read them.
	ChangedAfterStart []string `json:"changed_after_start,omitempty"`
}

// Script is the file the command runs (python train.py: train.py).
type Script struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256,omitempty"`
	Size   int64  `json:"size"`
	Note   string `json:"note,omitempty"`
}

// Interpreter is the program that reads the script and what it can import.
type Interpreter struct {
	Kind    string `json:"kind"` // python
	Path    string `json:"path"`
	Version string `json:"version,omitempty"`
	Conda   string `json:"conda,omitempty"` // conda env name
	Venv    string `json:"venv,omitempty"`
	// Packages maps a distribution's normalised name to its version.
	Packages map[string]string `json:"packages,omitempty"`
	// Note says why packages are missing (a broken interpreter, ...).
	Note string `json:"note,omitempty"`
}

// Image is a container run's image.
type Image struct {
	Name   string `json:"name"`
	ID     string `json:"id,omitempty"`
	Digest string `json:"digest,omitempty"`
	Note   string `json:"note,omitempty"`
}

// Host is the machine the run ran on.
type Host struct {
	Hostname    string `json:"hostname,omitempty"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	Kernel      string `json:"kernel,omitempty"`
	CPUModel    string `json:"cpu_model,omitempty"`
	CPUs        int    `json:"cpus"`
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	GPUs        []GPU  `json:"gpus,omitempty"`
	Driver      string `json:"driver,omitempty"`
	CUDA        string `json:"cuda,omitempty"`
}

// GPU is one accelerator.
type GPU struct {
	Name        string `json:"name"`
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
}

// Snapshot is the copy of the workspace the run executed (--snapshot).
type Snapshot struct {
	Dir   string `json:"dir"`
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
	// Left are paths left in place (ignored, too large) and linked in.
	Left []string `json:"left,omitempty"`
	Note string   `json:"note,omitempty"`
	// From is, for a sweep's member, the sweep's one copy of the
	// workspace (taken at the sweep's submission), from which Dir is made
	// as the member starts.
	From string `json:"from,omitempty"`
	// What the run's end did with the copy (WriteBack): files copied back
	// into the workspace, those that were not and why, and the copy's
	// path when it was kept for them.
	Returned []string `json:"returned,omitempty"`
	Skipped  []string `json:"skipped,omitempty"`
	Kept     string   `json:"kept,omitempty"`
	// Code is the workspace's git state read as the copy was taken, what
	// the copy holds; the run's record takes it as its Code.
	Code *Code `json:"code,omitempty"`
}
