package sandbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/runbox/runbox/sdk"
)

// Isolation levels (contract: --isolate values). Only the process backend
// enforces them level by level (package sandbox/process/confine); a
// container gives them all by itself, a Slurm job none.
const (
	IsolateNone = "none"
	IsolateNet  = "net"
	IsolateFS   = "fs"
	IsolateFull = "full"
)

// Capabilities is what a backend says it can do, so that the engine asks
// instead of knowing each backend (as Nomad's task drivers report theirs).
// A capability a request needs and the backend lacks is refused before the
// run is created, with the backend named.
type Capabilities struct {
	// Isolation lists the --isolate levels this backend enforces here.
	// Empty: it confines nothing itself, and Admit refuses a level.
	Isolation []string
	// Networks lists the --network modes it offers ("none", "bridge", "host").
	Networks []string
	// Limits says how each limit it enforces is enforced ("memory" →
	// "cgroup v2 memory.max"); a limit not named is not enforced here.
	Limits map[string]string
	// Images: it runs a named image (--image, --pull).
	Images bool
	// CleanEnv: a run never inherits the client's environment, only what
	// was asked for (a container's PATH and HOME are its own).
	CleanEnv bool
	// SchedulerOptions: it takes batch-scheduler settings (partition,
	// account, QoS, sbatch options, queue timeout); others refuse them.
	SchedulerOptions bool
	// GPUs says whose GPUs a run gets with --gpus: GPUsHost, GPUsCluster,
	// or "" (none: Admit refuses --gpus).
	GPUs string
	// AllowNet: it can keep a run to an allow-list of hosts (--allow-net,
	// --setup-allow-net) through an egress proxy; others refuse a list.
	AllowNet bool
	// Cluster names the kind of cluster it submits runs to ("Slurm"):
	// they run on other machines, and a plan with no sandbox named sends
	// a run there when it outgrows this one. Empty: runs run here.
	Cluster string
}

// Whose GPUs a run gets (Capabilities.GPUs).
const (
	// GPUsHost: this host's (the daemon's known set, package
	// internal/gpu), which the daemon's queue reserves for the run while
	// it runs (Verdict.GPUs says how many).
	GPUsHost = "host"
	// GPUsCluster: the cluster's, which its own scheduler hands out.
	GPUsCluster = "cluster"
)

// Request is what a backend admits: the settings of a request the engine
// has validated and filled with its defaults (from a plan, or the run it
// retries) that a backend may take or refuse; the common part of the spec
// is already built. Backends never see the wire types (package api).
type Request struct {
	// Isolate is the --isolate level asked for ("" when not asked), RW
	// the --rw paths, Network the --network mode, AllowRisk --allow-risk.
	Isolate   string
	RW        []string
	Network   string
	AllowRisk bool
	// Env is the KEY=VALUE overrides the request gave itself (--env), not
	// the environment it inherits: what was passed on purpose.
	Env []string
	// GPUs is --gpus as asked ("" none, N, all, device=LIST).
	GPUs string
	// AllowNet and SetupAllowNet are --allow-net and --setup-allow-net,
	// each entry already checked and in its canonical form (package
	// sandbox/egress); a backend keeps the run to them or refuses.
	AllowNet, SetupAllowNet []string
	// ProposedAllowNet, while planning, is the hosts the planner found
	// the command needs, checked like --allow-net: set when the request
	// names no list and the plan found no critical risk. The backend
	// makes it the run's allow-list, or says in its Note why not.
	ProposedAllowNet []string
	// Image, Pull, ReadOnlyRoot, KeepContainer, User: a container's.
	Image         string
	Pull          bool
	ReadOnlyRoot  bool
	KeepContainer bool
	User          string
	// Slurm is the scheduler settings asked for, if any.
	Slurm *SlurmSpec
	// Planning is set while a plan is made: the backend settles what it
	// will give on this host, it does not refuse what it cannot give.
	Planning bool
	// Plan is what the plan the run comes from said, if any (while
	// planning: the planner's output, which Admit may annotate).
	Plan *PlanPromise
	// Retried is the stored spec of the run this one retries, if any:
	// a retry keeps what its parent was given unless the request says
	// otherwise.
	Retried *Spec
}

// PlanPromise is a plan as admission sees it.
type PlanPromise struct {
	ID string
	// Spec is the plan's stored spec: what it promised (Isolate, RW).
	Spec Spec
	// Output is what the planner said: its risks and recommendation.
	Output *sdk.PlanOutput
}

// Verdict is what admission decided beyond the spec it filled.
type Verdict struct {
	// Refusal, when set, refuses the run on the record (a policy the
	// user may override, such as --allow-risk): the engine keeps the run,
	// failed, with this reason.
	Refusal string
	// Note, when set, goes into the run's events once it is created:
	// something about what the backend will do that the user should see.
	Note string
	// GPUs is how many of this host's GPUs the daemon's queue must
	// reserve for the run before it starts (-1: all of them; 0: none).
	GPUs int
}

// Admitter turns a validated request into the backend's own options in
// spec, or refuses it. Every backend implements it (it is part of
// Sandbox); the engine calls it once per submission and once per plan.
type Admitter interface {
	Capabilities(ctx context.Context) Capabilities
	// Admit writes the backend's options into spec. An error wrapping
	// ErrRefused is the request's fault (the caller reports it as a bad
	// request, with its message as written); any other error is the
	// backend's.
	Admit(ctx context.Context, req Request, spec *Spec) (Verdict, error)
}

// GPUGiver is a backend whose runs get this host's GPUs (GPUsHost): as a
// run starts, the daemon's queue has reserved devs for it (indexes in the
// daemon's known set, package internal/gpu), and GiveGPUs puts them in
// spec in the backend's own form.
type GPUGiver interface {
	GiveGPUs(spec *Spec, devs []string)
}

// Chainer is a backend whose own scheduler can hold a run until runs it
// already has end (Slurm: sbatch --dependency). A queued run that comes
// after such runs is then handed to it at once, not kept in the daemon,
// which may be down by the time they end; if one of them fails where the
// run needed it to succeed, the daemon stops the held run itself.
type Chainer interface {
	// ChainAfter returns what makes a spec start after the runs whose
	// handles' Ref are refs end: once each has succeeded, or with anyEnd
	// once each has ended whatever its state. It returns nil when a ref
	// is not one this backend can wait on: the run waits in the daemon.
	ChainAfter(refs []string, anyEnd bool) func(*Spec)
}

// Grouper is a backend that takes a sweep's members as one submission
// (Slurm: one job array) and holds them to the sweep's --parallel itself:
// the daemon starts them together once every member is created, and
// gates them neither by the sweep's limit nor by its own slots.
type Grouper interface {
	// Group puts spec in group g.
	Group(spec *Spec, g Group)
	// StopGroups cancels at once the groups that the runs with refs are
	// in, each group once. A run not yet in its group is not reached:
	// the caller stops it on its own.
	StopGroups(ctx context.Context, refs []string) error
	// GroupName is what a group is in the backend's words ("Slurm job
	// array"), for the reason a member waits.
	GroupName() string
}

// Group is a member's place among a sweep's members started together.
type Group struct {
	// Key names the group (its first member's run id): the runs that
	// share it are submitted together.
	Key string `json:"key"`
	// Dir is where the backend may keep the group's own files (Slurm:
	// its batch script, the per-task output links).
	Dir string `json:"dir"`
	// Index orders the members (their sweep index).
	Index int `json:"index"`
	// Size is how many members the group waits for before it is
	// submitted.
	Size int `json:"size"`
	// Parallel caps the members running at once, the sweep's --parallel
	// (0: no limit).
	Parallel int `json:"parallel,omitempty"`
	// Sweep is the sweep's id, which the groups of one sweep share: a
	// group started later (a retried member) is held until the sweep's
	// groups started before it have ended, so the sweep never runs more
	// than Parallel at once. Empty: the group is on its own.
	Sweep string `json:"group,omitempty"`
}

// ErrRefused marks a request a backend cannot admit as given.
var ErrRefused = errors.New("refused by the sandbox")

type refusedError struct{ msg string }

func (e *refusedError) Error() string        { return e.msg }
func (e *refusedError) Is(target error) bool { return target == ErrRefused }

// Refuse is an admission error whose message is shown as written.
func Refuse(format string, a ...any) error {
	return &refusedError{msg: fmt.Sprintf(format, a...)}
}

// IsolationView is how a plan's run will be confined on this host (the
// daemon shows it as api.Isolation).
type IsolationView struct {
	Level      string // none | net | fs | full: what will be enforced
	Network    string
	Filesystem string
	Processes  string
	// Wanted is the level the plan's findings call for, when more than
	// Level; Unavailable says why this host cannot give it.
	Wanted       string
	WantedReason string
	Unavailable  string
	// Refused: exec refuses this plan without allow_risk.
	Refused bool
}

// Explainer is a backend that can say what its options mean for a run
// (optional; found with a type assertion).
type Explainer interface {
	// IsolationView describes how a plan's spec will be confined on this
	// host, or nil when the backend has nothing to say.
	IsolationView(spec Spec, out sdk.PlanOutput) *IsolationView
	// Advise adds to a run's failure what its confinement had to do with
	// it, or returns f unchanged.
	Advise(spec Spec, f *sdk.Failure) *sdk.Failure
}
