// Package slurm runs a run as a Slurm batch job: Slurm schedules it,
// runbox submits, watches and explains.
//
// It drives Slurm's own commands on PATH (sbatch --parsable, squeue --json,
// scontrol show job, sacct --json, scancel), whose interface changes far
// less across versions (22.05 to 25.x) than slurmrestd's versioned API.
// The workspace and runbox's home must be on a filesystem the compute
// nodes share: the batch script, and the job's stdout/stderr files that
// are followed into the run's framed log, live in the run's state dir.
package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/runbox/runbox/sandbox"
)

// Options configure the backend.
type Options struct {
	// Poll is how often the queue and the job's output files are looked
	// at (default 250ms).
	Poll time.Duration
	// Env is added to the environment of every Slurm command (SLURM_CONF).
	Env []string
	// MaxArray caps the tasks of one job array (default: the cluster's
	// MaxArraySize, or $RUNBOX_SLURM_MAX_ARRAY): tests split a small
	// sweep into arrays with it.
	MaxArray int
}

// Sandbox submits runs to the Slurm cluster reachable from this host.
type Sandbox struct {
	opts Options
	q    *queue

	cgMu    sync.Mutex
	cgKnown bool // cgMem was read from the controller
	cgMem   bool // the cluster enforces jobs' memory by cgroup

	arrMu   sync.Mutex
	batches map[string]*arrayBatch         // arrays gathering members (array.go)
	tasks   map[int64]map[*handle]struct{} // live array tasks by array id
	stopped map[int64]bool                 // arrays stopArray cancelled
	arrays  map[int64]*liveArray           // arrays not yet ended (arraylife.go)
	reaped  map[int64]bool                 // arrays whose dir was looked at

	subMu    sync.Mutex // one array submission at a time (array.go)
	maxKnown bool       // maxArr was read from the controller
	maxArr   int        // the cluster's MaxArraySize
}

// memByCgroup reports whether the cluster confines each job's memory in
// a cgroup (TaskPlugin task/cgroup with ConstrainRAMSpace=yes): then the
// OOM killer's kills are recorded in the job's state (OUT_OF_MEMORY), and
// a job ended otherwise was not killed for memory. Read once from
// `scontrol show config`; an unanswered query is asked again next time.
func (s *Sandbox) memByCgroup(ctx context.Context) bool {
	s.cgMu.Lock()
	defer s.cgMu.Unlock()
	if s.cgKnown {
		return s.cgMem
	}
	out, err := s.command(ctx, "scontrol", "show", "config")
	if err != nil {
		return false
	}
	s.cgKnown, s.cgMem = true, parseMemByCgroup(string(out))
	return s.cgMem
}

// parseMemByCgroup reads `scontrol show config`: its main section's
// TaskPlugin and the cgroup section's ConstrainRAMSpace.
func parseMemByCgroup(conf string) bool {
	task, ram := false, false
	for _, line := range strings.Split(conf, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case strings.EqualFold(k, "TaskPlugin"):
			task = strings.Contains(v, "task/cgroup")
		case strings.EqualFold(k, "ConstrainRAMSpace"):
			ram = strings.EqualFold(v, "yes")
		}
	}
	return task && ram
}

// New returns the Slurm backend.
func New(opts Options) *Sandbox {
	if opts.Poll <= 0 {
		opts.Poll = 250 * time.Millisecond
	}
	s := &Sandbox{opts: opts}
	s.q = &queue{run: s.command, maxAge: opts.Poll / 2}
	return s
}

// NotConfigured says why a host has no Slurm backend and what to do.
const NotConfigured = "no sbatch on PATH and SLURM_RESTD_URL unset (install slurm-client and point it at the cluster)"

// Configured reports whether this host can reach a Slurm cluster at all:
// sbatch on PATH, or a slurmrestd URL in the environment.
func Configured() bool {
	if _, err := exec.LookPath("sbatch"); err == nil {
		return true
	}
	return os.Getenv("SLURM_RESTD_URL") != ""
}

// Name implements sandbox.Sandbox.
func (s *Sandbox) Name() string { return sandbox.Slurm }

// cmdTimeout bounds one Slurm command: a controller that does not answer
// makes the commands retry for a long time on their own.
const cmdTimeout = 20 * time.Second

// command runs a Slurm command and returns its stdout; the error carries
// its stderr (the message the user needs: "invalid partition specified").
func (s *Sandbox) command(ctx context.Context, name string, args ...string) ([]byte, error) {
	return s.commandEnv(ctx, nil, nil, name, args...)
}

func (s *Sandbox) commandEnv(ctx context.Context, env []string, stdin []byte, name string, args ...string) ([]byte, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not on PATH (is slurm-client installed?)", sandbox.ErrUnavailable, name)
	}
	ctx, cancel := context.WithTimeout(ctx, cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	if env != nil {
		cmd.Env = append(env, s.opts.Env...)
	} else if len(s.opts.Env) > 0 {
		cmd.Env = append(os.Environ(), s.opts.Env...)
	}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: no answer in %s: %w", name, cmdTimeout, ctx.Err())
		}
		if !strings.HasPrefix(msg, name+": ") { // Slurm's commands name themselves
			msg = name + ": " + msg
		}
		return nil, fmt.Errorf("%s: %w", msg, err)
	}
	return out.Bytes(), nil
}

// Health reports whether the controller answers, its partitions and how
// many nodes are idle.
func (s *Sandbox) Health(ctx context.Context) sandbox.Health {
	h := sandbox.Health{Name: sandbox.Slurm, Info: map[string]string{}}
	if _, err := exec.LookPath("sbatch"); err != nil {
		h.Detail = "sbatch is not on PATH"
		if os.Getenv("SLURM_RESTD_URL") != "" {
			h.Detail += " (SLURM_RESTD_URL is set, but this runbox drives Slurm through its commands only; install slurm-client)"
		}
		return h
	}
	if v, err := s.command(ctx, "sinfo", "--version"); err == nil {
		h.Version = strings.TrimSpace(string(v))
	}
	ping, err := s.command(ctx, "scontrol", "ping")
	if err != nil || !strings.Contains(string(ping), "UP") {
		h.Detail = "controller unreachable: " + strings.TrimSpace(string(ping))
		if err != nil {
			h.Detail = "controller unreachable: " + err.Error()
		}
		return h
	}
	h.Info["controller"] = strings.TrimSpace(string(ping))
	out, err := s.command(ctx, "sinfo", "-h", "-o", "%R|%a|%D|%t")
	if err != nil {
		h.Detail = err.Error()
		return h
	}
	parts, idle := partitions(string(out))
	h.Info["partitions"] = strings.Join(parts, ", ")
	h.Info["idle_nodes"] = strconv.Itoa(idle)
	h.Available = true
	h.Detail = fmt.Sprintf("controller up; partitions %s; %d idle node(s)", h.Info["partitions"], idle)
	return h
}

// partitions reads `sinfo -h -o '%R|%a|%D|%t'` (one line per partition
// and node state): the partitions with their availability, and the count
// of idle nodes.
func partitions(out string) ([]string, int) {
	var names []string
	seen := map[string]bool{}
	idle := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 4 {
			continue
		}
		if !seen[f[0]] {
			seen[f[0]] = true
			names = append(names, f[0]+"("+f[1]+")")
		}
		if strings.TrimRight(f[3], "*~#!%$@^-") == "idle" {
			n, _ := strconv.Atoi(f[2])
			idle += n
		}
	}
	return names, idle
}

// errNoSlurm is Start's answer on a host without Slurm's commands.
var errNoSlurm = errors.New("no Slurm here: sbatch is not on PATH")
