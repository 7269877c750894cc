// Package sandbox defines how runbox starts, watches and ends a run,
// whatever isolates it. Backends live in sub-packages: process/ (a
// supervised host process) and docker/ (a container).
//
// A backend writes everything the run prints into the framed log at
// Spec.LogPath (see package runlog); that file, not an in-memory channel,
// is the run's output stream, so output survives a restart of the daemon.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// Backend names (contract: --sandbox values).
const (
	Process = "process"
	Docker  = "docker"
	Slurm   = "slurm"
	Auto    = "auto"
)

// Names are the backends, in the order runbox backends lists them.
var Names = []string{Process, Docker, Slurm}

// AutoOrder is --sandbox auto's preference (contract): the first backend
// that is configured here and takes the run (AutoCandidate) runs it; the
// last is the fallback, taken as it is.
var AutoOrder = []string{Docker, Process}

// AutoCandidate is a backend --sandbox auto may prefer over the fallback
// (optional; found with a type assertion).
type AutoCandidate interface {
	// TakesAuto says whether it takes a run of image (its default when
	// "") now, and why either way: the run's sandbox reason when it does,
	// the start of the fallback's when it does not.
	TakesAuto(ctx context.Context, image string) (bool, string)
}

// ErrUnavailable means the backend cannot run anything on this host now
// (Docker daemon down, unsupported OS). Runs that hit it fail as SANDBOX_ERROR.
var ErrUnavailable = errors.New("sandbox unavailable")

// ErrNotFound means Recover found no trace of the run in this backend.
var ErrNotFound = errors.New("run not found in sandbox")

// Asset is a file or directory copied (process, Slurm) or mounted
// read-only (docker) into the workspace before the run starts.
type Asset struct {
	Src string `json:"src"` // path on the host
	Dst string `json:"dst"` // path relative to the workspace
}

// Target is where a lands in the workspace workdir, or an error when its
// destination is not a relative path inside the workspace ("." is the
// workspace itself).
func (a Asset) Target(workdir string) (string, error) {
	if !filepath.IsLocal(a.Dst) {
		return "", fmt.Errorf("asset %q: destination must be a relative path inside the workspace", a.Dst)
	}
	return filepath.Join(workdir, filepath.Clean(a.Dst)), nil
}

// Limits bound a run. Zero means unlimited.
type Limits struct {
	MemoryBytes int64   `json:"memory_bytes,omitempty"`
	CPUs        float64 `json:"cpus,omitempty"`
	Pids        int64   `json:"pids,omitempty"`
}

// Spec is everything a backend needs to start a run.
type Spec struct {
	RunID string `json:"run_id"`
	// Command is an argv. With Shell set, Command is joined with spaces and
	// given to "sh -c" (a shell only when asked).
	Command []string `json:"command"`
	Shell   bool     `json:"shell,omitempty"`
	// Workdir is the workspace on the host: the process's working directory,
	// or the directory bind-mounted at WorkspaceMount in a container.
	Workdir string `json:"workdir"`
	// Env holds KEY=VALUE overrides. With CleanEnv the child gets only these
	// plus the host variables named in EnvAllow; otherwise it inherits the
	// environment runbox was started with, then these override it.
	Env      []string `json:"env,omitempty"`
	CleanEnv bool     `json:"clean_env,omitempty"`
	EnvAllow []string `json:"env_allow,omitempty"`
	// Stdin: at most one of StdinFile (a host path) or Stdin (bytes). With
	// neither the child reads end-of-file.
	Stdin     []byte `json:"stdin,omitempty"`
	StdinFile string `json:"stdin_file,omitempty"`
	// Setup commands run, in order, before the main command in the same
	// workspace (each through "sh -c"); their output goes to the setup
	// streams of the log. A failing setup command ends the run with its code.
	Setup  []string `json:"setup,omitempty"`
	Assets []Asset  `json:"assets,omitempty"`
	// Timeout ends the run (grace, then kill) and marks it timed out.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Grace is how long SIGTERM is given before SIGKILL (default 10s).
	Grace  time.Duration `json:"grace,omitempty"`
	Limits Limits        `json:"limits"`
	// LogPath is the framed log the backend appends every output record to.
	LogPath string `json:"log_path"`
	// StateDir is a private directory for this run's backend files
	// (supervisor spec, pid, exit record). The backend owns its contents.
	StateDir string `json:"state_dir"`

	// Network is the network the request asked for (none, bridge, host):
	// a container's mode; for a process run "host" only widens its
	// isolation. GPUs ("" | "all" | "N" | "device=0,1") are the GPUs it
	// asked for.
	Network string `json:"network,omitempty"`
	GPUs    string `json:"gpus,omitempty"`

	// AllowNet (--allow-net) are the hosts a run may reach, through an
	// egress proxy (package sandbox/egress) and nothing else;
	// SetupAllowNet (--setup-allow-net) are the setup commands' own, when
	// set (else they get AllowNet). A process run with either has its
	// network cut (Isolate covers net); a container has no network.
	AllowNet      []string `json:"allow_net,omitempty"`
	SetupAllowNet []string `json:"setup_allow_net,omitempty"`
	// EgressBridge is set by the container backend for its init: the
	// directory (in the container) with the unix sockets of the proxy
	// outside (egress.Bridge); the init listens on 127.0.0.1 and carries
	// connections there.
	EgressBridge string `json:"egress_bridge,omitempty"`

	// Each backend's own options, typed and apart: only that backend
	// reads them, and only its Admit (admit.go) fills them. Embedded so
	// that the stored spec keeps its flat JSON (runs and plans on disk).
	ProcessOptions
	ContainerOptions
	// Slurm holds batch-scheduler settings; other backends ignore it.
	Slurm *SlurmSpec `json:"slurm,omitempty"`
}

// ProcessOptions are the process backend's (package sandbox/process).
type ProcessOptions struct {
	// Isolate is how the run is confined (package
	// sandbox/process/confine): "" or none, net, fs, full; RW the paths it
	// may write besides its workspace and temp dir. Admission sets Isolate
	// to what it verified this machine enforces; the supervisor refuses
	// to run with less.
	Isolate string   `json:"isolate,omitempty"`
	RW      []string `json:"rw,omitempty"`
}

// ContainerOptions are the Docker backend's (package sandbox/docker).
type ContainerOptions struct {
	Image         string `json:"image,omitempty"`
	ReadOnlyRoot  bool   `json:"read_only_root,omitempty"`
	KeepContainer bool   `json:"keep_container,omitempty"`
	// User is "uid:gid" to run as; empty means the invoking user's.
	User string `json:"user,omitempty"`
}

// SlurmSpec is the Slurm backend's options (package sandbox/slurm).
type SlurmSpec struct {
	Partition string `json:"partition,omitempty"`
	Account   string `json:"account,omitempty"`
	QOS       string `json:"qos,omitempty"`
	// Options are extra sbatch options, KEY=VALUE → --KEY=VALUE (a KEY
	// with an empty value → --KEY).
	Options map[string]string `json:"options,omitempty"`
	// QueueTimeout gives up on a job still PENDING after this long.
	QueueTimeout time.Duration `json:"queue_timeout,omitempty"`
	// Array, when set, makes the run one task of a job array: the runs
	// with the same Key are submitted together by one sbatch --array
	// (a sweep's members on Slurm), its Dir on the filesystem the nodes
	// share, its task ids 0..n-1 in Index order, in arrays of at most the
	// cluster's MaxArraySize tasks, --array=...%Parallel. Set by its
	// Group (Grouper) when the engine starts the run; not part of the
	// stored spec.
	Array *Group `json:"array,omitempty"`
}

// Usage is what a run consumed.
type Usage struct {
	WallSeconds  float64 `json:"wall_seconds"`
	CPUSeconds   float64 `json:"cpu_seconds"`
	PeakRSSBytes uint64  `json:"peak_rss_bytes"`
}

// Exit is how a run ended. It is written once, atomically, by the owner of
// the run (the supervisor or the backend).
type Exit struct {
	Code      int    `json:"code"`             // exit status; 128+n when killed by signal n
	Signal    string `json:"signal,omitempty"` // "SIGKILL", ... when a signal ended it
	OOMKilled bool   `json:"oom_killed,omitempty"`
	// OOMChecked: the sandbox looked for an OOM kill where one would be
	// recorded (the run's memory cgroup's counters, Docker's
	// State.OOMKilled, a Slurm job state under cgroup memory enforcement)
	// and found none, so a SIGKILL came from something else.
	OOMChecked bool `json:"oom_checked,omitempty"`
	TimedOut   bool `json:"timed_out,omitempty"`
	Cancelled  bool `json:"cancelled,omitempty"` // ended by Stop
	// SetupFailed is set when a setup command failed and the main command
	// never started; Code is the setup command's.
	SetupFailed bool `json:"setup_failed,omitempty"`
	// Error is set when the sandbox could not start the run or lost it; the
	// run then fails as SANDBOX_ERROR (or becomes lost) with this reason.
	Error     string    `json:"error,omitempty"`
	Lost      bool      `json:"lost,omitempty"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	Usage     Usage     `json:"usage"`
	// LogDropped is how many bytes of output the run's log could not
	// take (disk full): the run went on, that output is missing.
	LogDropped int64 `json:"log_dropped,omitempty"`
	// Outside says, when the backend knows, that something other than
	// runbox ended the run, and what (a Slurm job cancelled with scancel
	// by its owner or an administrator). Such a run was not stopped by
	// its user through runbox: it fails (TERMINATED) with this reason.
	Outside string `json:"outside,omitempty"`
}

// Stats is a point-in-time resource sample of a live run.
type Stats struct {
	RSSBytes   uint64  `json:"rss_bytes"`
	CPUSeconds float64 `json:"cpu_seconds"`
	Pids       int     `json:"pids"`
	// Storage I/O so far, where the backend can tell (sys/ metrics).
	ReadBytes  uint64 `json:"read_bytes,omitempty"`
	WriteBytes uint64 `json:"write_bytes,omitempty"`
}

// Health is what a backend reports about itself.
type Health struct {
	Name      string            `json:"name"`
	Available bool              `json:"available"`
	Version   string            `json:"version,omitempty"`
	Detail    string            `json:"detail,omitempty"` // why not available, or notes
	Runtimes  []string          `json:"runtimes,omitempty"`
	Info      map[string]string `json:"info,omitempty"`
}

// Sandbox is one backend.
type Sandbox interface {
	Name() string
	Health(ctx context.Context) Health
	// Capabilities and Admit (admit.go): what the backend can do, and
	// the request turned into its own options, or refused.
	Admitter
	// Start begins a run and returns once it is started (or failed to start).
	// The run must outlive ctx and the calling process.
	Start(ctx context.Context, spec Spec) (Handle, error)
	// Recover re-attaches to a run started by an earlier daemon, resuming
	// its log where the file ends without losing or repeating output.
	// It returns ErrNotFound when the run left no trace.
	Recover(ctx context.Context, spec Spec) (Handle, error)
}

// EarlyExiter is a Handle that can tell the exit record before Wait
// returns: as soon as the run has ended and its output is safely in the
// log, while the backend still writes its own copy of the record. A caller
// that stores the record durably itself (the daemon) can do so meanwhile,
// then Wait for the backend to be done with the run.
type EarlyExiter interface {
	Handle
	// WaitEarly returns the exit record as soon as it is known, or what
	// Wait returns when the backend cannot tell it sooner.
	WaitEarly(ctx context.Context) (Exit, error)
}

// Queued is a Handle whose run may wait in the backend's own queue (a
// batch scheduler) after Start returned. The engine keeps such a run out
// of "running" (no stall clock, no run time) until Started returns.
type Queued interface {
	Handle
	// Started blocks until the run has left the backend's queue (started,
	// or ended without starting) or ctx ends. report is called with each
	// new one-line reason the run waits or is held up ("PENDING
	// (Resources)", "controller unreachable"), before and after the start.
	Started(ctx context.Context, report func(reason string)) error
	// HoldIfQueued keeps the run in the backend's queue if it has not
	// left it, and says whether it had not. A caller that stops only runs
	// not yet started (--max-failures) stops a held one then, with no
	// moment in which the backend could start it between the look and
	// the stop. A run already started is left as it was.
	HoldIfQueued(ctx context.Context) bool
}

// Handle is a started run.
type Handle interface {
	// Ref identifies the run inside the backend (supervisor pid, container id).
	Ref() string
	// Wait blocks until the run has ended and its output is safely in the
	// log, then returns the exit record. It may be called more than once.
	Wait(ctx context.Context) (Exit, error)
	// Stop ends the whole run: SIGTERM (or docker stop), grace, then kill.
	// The exit record says Cancelled. Stopping an ended run is not an error.
	Stop(ctx context.Context, grace time.Duration) error
	// Stats samples resource use; it fails once the run has ended.
	Stats(ctx context.Context) (Stats, error)
}

// Sweeper is implemented by backends that can clean up leftovers of runs
// no longer known to the store (orphaned containers).
type Sweeper interface {
	Sweep(ctx context.Context, known func(runID string) bool) (int, error)
}
