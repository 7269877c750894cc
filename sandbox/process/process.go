package process

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/runbox/runbox/internal/gpu"
	"github.com/runbox/runbox/internal/tail"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/confine"
	"github.com/runbox/runbox/sandbox/process/internal/proc"
	"github.com/runbox/runbox/sandbox/process/internal/protocol"
	"github.com/runbox/runbox/sandbox/process/supervisor"
)

// Options configure the backend.
type Options struct {
	// Exe is the binary re-executed as the supervisor; default os.Executable().
	Exe string
	// Args is the argv prefix that makes Exe act as the supervisor (it is
	// followed by the state directory); default {"__supervise"}.
	Args []string
	// ForceWatchdog enforces Limits.MemoryBytes with the RSS watchdog even
	// where a memory cgroup could be created (tests, debugging).
	ForceWatchdog bool
	// NoCgroup makes no cgroup for runs (tests, debugging): their
	// processes are then found by session and process group alone, and
	// limits other than memory (watchdog) are not enforced.
	NoCgroup bool
	// Standby keeps one supervisor started ahead of time, waiting for its
	// run, so starting the binary (~10-15 ms) is not on the path of Start.
	Standby bool
	// DefaultPids is the pids limit of a run that sets none, enforced by
	// the run's cgroup where one can be made: 0 takes $RUNBOX_DEFAULT_PIDS
	// or else DefaultPidsLimit; negative sets none.
	DefaultPids int64
	// GPUs are this host's GPUs the daemon hands out (internal/gpu): what
	// --gpus may ask for. The daemon's queue reserves them; a started run
	// gets its own in CUDA_VISIBLE_DEVICES.
	GPUs gpu.Inventory
}

// DefaultPidsLimit bounds a fork bomb well below the host's limits while
// leaving room for a parallel build.
const DefaultPidsLimit = 4096

// PidsEnv is the environment variable that sets Options.DefaultPids when
// it is 0 (the daemon's setting): a number, 0 for none.
const PidsEnv = protocol.PidsEnv

// defaultPids resolves Options.DefaultPids (see there); 0 means none.
func (s *Sandbox) defaultPids() (int64, error) {
	switch n := s.opts.DefaultPids; {
	case n < 0:
		return 0, nil
	case n > 0:
		return n, nil
	}
	v, ok := os.LookupEnv(PidsEnv)
	if !ok || v == "" {
		return DefaultPidsLimit, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a number of processes (0 for no default)", PidsEnv, v)
	}
	return n, nil
}

// Sandbox is the process backend.
type Sandbox struct {
	opts Options

	mu      sync.Mutex
	standby [nKinds]*standby // a started supervisor of each kind waiting for its run, if any
	filling [nKinds]bool     // a standby of the kind is being started
	closed  bool             // Close was called: no more standbys
}

var (
	_ sandbox.Sandbox  = (*Sandbox)(nil)
	_ sandbox.GPUGiver = (*Sandbox)(nil)
)

// New returns the process backend.
func New(opts Options) *Sandbox {
	if len(opts.Args) == 0 {
		opts.Args = []string{supervisor.Arg}
	}
	return &Sandbox{opts: opts}
}

// Name is sandbox.Process.
func (s *Sandbox) Name() string { return sandbox.Process }

// Health reports the backend available on Linux and macOS.
func (s *Sandbox) Health(ctx context.Context) sandbox.Health {
	h := sandbox.Health{Name: sandbox.Process, Version: runtime.GOOS + "/" + runtime.GOARCH}
	switch runtime.GOOS {
	case "linux", "darwin":
		h.Available = true
		h.Info = map[string]string{"memory_limit": supervisor.MemoryLimitMode(),
			"cpu_limit": cmp.Or(supervisor.CPULimitMode(), "not enforced (no writable cpu cgroup)")}
		if p := s.pidsLine(); p != "" {
			h.Info["pids_limit"] = p
		}
		// What confinement this host gives process runs (runbox backends).
		for k, v := range confine.Probe().Info() {
			h.Info[k] = v
		}
		if runtime.GOOS == "linux" {
			h.Info["orphans"] = "subreaper"
		} else {
			h.Detail = "processes that leave the run's process group are not tracked on macOS"
		}
	default:
		h.Detail = "the process backend supports Linux and macOS"
	}
	return h
}

// pidsLine says how many processes a run may have by default and how
// that is enforced, or "" when there is no default limit.
func (s *Sandbox) pidsLine() string {
	n, err := s.defaultPids()
	switch {
	case err != nil:
		return err.Error()
	case n > 0:
		return fmt.Sprintf("%d by default (%s), enforced by %s", n, PidsEnv, supervisor.PidsLimitMode())
	}
	return ""
}

func (s *Sandbox) exe() (string, error) {
	if s.opts.Exe != "" {
		return s.opts.Exe, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find runbox binary: %w", err)
	}
	return exe, nil
}

// normalize makes every path absolute: the supervisor resolves nothing
// against the caller's working directory.
func normalize(spec *sandbox.Spec) error {
	if len(spec.Command) == 0 {
		return errors.New("empty command")
	}
	if spec.StateDir == "" || spec.LogPath == "" {
		return errors.New("spec needs a state dir and a log path")
	}
	if spec.StdinFile != "" && len(spec.Stdin) > 0 {
		return errors.New("give stdin as bytes or as a file, not both")
	}
	if spec.Workdir == "" {
		spec.Workdir = "."
	}
	var err error
	abs := func(p *string) {
		if *p != "" && err == nil {
			*p, err = filepath.Abs(*p)
		}
	}
	abs(&spec.Workdir)
	abs(&spec.StateDir)
	abs(&spec.LogPath)
	abs(&spec.StdinFile)
	assets := make([]sandbox.Asset, len(spec.Assets))
	copy(assets, spec.Assets)
	for i := range assets {
		abs(&assets[i].Src)
	}
	spec.Assets = assets
	return err
}

// Start launches the supervisor and returns once it reports the run under
// way. A command that cannot be found is not an error here: the run exits
// 127 with the reason in its log, as a shell would.
func (s *Sandbox) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Handle, error) {
	if err := normalize(&spec); err != nil {
		return nil, fmt.Errorf("start run %s: %w", spec.RunID, err)
	}
	exe, err := s.exe()
	if err != nil {
		return nil, err
	}
	dir := spec.StateDir
	if err := os.MkdirAll(dir, protocol.DirMode); err != nil {
		return nil, fmt.Errorf("start run %s: %w", spec.RunID, err)
	}
	if protocol.Exists(filepath.Join(dir, protocol.PidFile)) || protocol.Exists(filepath.Join(dir, protocol.ExitFile)) {
		return nil, fmt.Errorf("start run %s: state dir %s already holds a run", spec.RunID, dir)
	}
	boot := protocol.Boot{Spec: spec, ForceWatchdog: s.opts.ForceWatchdog, NoCgroup: s.opts.NoCgroup}
	if spec.Limits.Pids == 0 {
		n, err := s.defaultPids()
		if err != nil {
			return nil, fmt.Errorf("start run %s: %w", spec.RunID, err)
		}
		boot.Spec.Limits.Pids, boot.PidsDefault = n, n > 0
	}
	os.Remove(filepath.Join(dir, protocol.TakenFile)) // this start is the run's own again
	if err := protocol.WriteJSON(filepath.Join(dir, protocol.SpecFile), boot, false); err != nil {
		return nil, fmt.Errorf("start run %s: write spec: %w", spec.RunID, err)
	}
	k := kindFor(&spec)
	h, ready, sb, err := s.begin(exe, dir, k)
	if err != nil {
		os.Remove(filepath.Join(dir, protocol.SpecFile))
		return nil, fmt.Errorf("start run %s: %w", spec.RunID, err)
	}
	err = ready.waitOK(ctx)
	if err != nil && sb != nil && ctx.Err() == nil {
		sb.release()
		sb = nil
		if neverTookRun(h, dir) {
			// The standby died before it took the run (its spec is unread):
			// a fresh supervisor runs it instead.
			close(h.settled)
			if h, ready, err = s.launch(exe, dir, k); err != nil {
				os.Remove(filepath.Join(dir, protocol.SpecFile))
				return nil, fmt.Errorf("start run %s: %w", spec.RunID, err)
			}
			err = ready.waitOK(ctx)
		}
	}
	if err != nil {
		defer close(h.settled)
		ready.f.Close()
		if sb != nil {
			sb.control.Close()
		}
		if ctx.Err() != nil {
			// The caller gave up: do not leave a run it believes never started.
			_ = h.signal(syscall.SIGTERM)
			return nil, fmt.Errorf("start run %s: %w", spec.RunID, ctx.Err())
		}
		<-h.exited()
		if _, rerr := protocol.ReadExit(dir); rerr == nil {
			return h, nil // it ended before it could report; Wait tells why
		}
		os.Remove(filepath.Join(dir, protocol.SpecFile))
		return nil, fmt.Errorf("start run %s: supervisor exited (%s): %s", spec.RunID, h.waitErr(), diagnostics(filepath.Join(dir, protocol.SuperLog)))
	}
	go s.follow(h, ready, sb)
	return h, nil
}

// launch starts the supervisor, detached in its own session; its stderr
// goes to supervisor.log, and fd 3 is the ready pipe.
func (s *Sandbox) launch(exe, dir string, k superKind) (*handle, *readyReader, error) {
	logf, err := os.OpenFile(filepath.Join(dir, protocol.SuperLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, protocol.SecretMode)
	if err != nil {
		return nil, nil, err
	}
	defer logf.Close()
	args := append(append([]string{}, s.opts.Args...), dir)
	p, ready, err := startSupervisor(exe, args, logf, nil, k)
	if err != nil && k == ownUserNS {
		// User namespaces refused at clone (a sysctl, a seccomp policy):
		// a plain supervisor confines through the entry, or refuses.
		p, ready, err = startSupervisor(exe, args, logf, nil, plain)
	}
	if err != nil {
		return nil, nil, err
	}
	return p.handle(dir), ready, nil
}

// diagnostics returns the end (2 KiB) of the supervisor's own stderr,
// for the error of a Start whose supervisor died.
func diagnostics(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "no diagnostics"
	}
	defer f.Close()
	// Head and tail: a Go runtime crash says why in its first line
	// ("fatal error: ...") and where in its last ones.
	end := tail.NewHeadTail(4096)
	_, _ = io.Copy(end, f)
	if s := strings.TrimSpace(end.String()); s != "" {
		return s
	}
	return "no diagnostics"
}

// Recover re-attaches to a run from its state directory: an exit record
// means it has ended; a live supervisor (pid and start time match) is
// watched until it exits; a supervisor that vanished without a record
// makes a lost run; no trace at all is sandbox.ErrNotFound.
func (s *Sandbox) Recover(ctx context.Context, spec sandbox.Spec) (sandbox.Handle, error) {
	dir, err := filepath.Abs(spec.StateDir)
	if err != nil || spec.StateDir == "" {
		return nil, fmt.Errorf("recover run %s: %w", spec.RunID, sandbox.ErrNotFound)
	}
	ended := make(chan struct{})
	close(ended)
	var rec protocol.PidRecord
	if err := protocol.ReadJSON(filepath.Join(dir, protocol.PidFile), &rec); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("recover run %s: %w", spec.RunID, err)
		}
		if protocol.HasSpec(dir) && !protocol.Exists(filepath.Join(dir, protocol.ExitFile)) {
			if h, err := s.recoverUnclaimed(ctx, spec, dir); h != nil || err != nil {
				return h, err
			}
		}
		if protocol.Exists(filepath.Join(dir, protocol.ExitFile)) || protocol.HasSpec(dir) {
			// Ended early, or the supervisor never got as far as its pid file.
			return &handle{stateDir: dir, done: ended, signal: noSignal}, nil
		}
		return nil, fmt.Errorf("recover run %s: %w", spec.RunID, sandbox.ErrNotFound)
	}
	h := &handle{pid: rec.Pid, stateDir: dir, done: ended, signal: noSignal}
	if protocol.Exists(filepath.Join(dir, protocol.ExitFile)) {
		return h, nil
	}
	gone, err := proc.WatchExit(rec.Pid, rec.Start)
	if err != nil {
		return h, nil // gone: Wait reads the record or reports the run lost
	}
	h.done = endedOrGone(gone, filepath.Join(dir, protocol.ExitFile))
	h.signal = func(sig syscall.Signal) error {
		if st, err := proc.StartTime(rec.Pid); err != nil || st != rec.Start {
			return nil // it has ended; a recycled pid is not ours to signal
		}
		if protocol.Exists(filepath.Join(dir, protocol.ExitFile)) {
			return nil // the run has ended; the supervisor may serve another
		}
		return syscall.Kill(rec.Pid, sig)
	}
	return h, nil
}

// recoverUnclaimed handles a spec with no pid file: a run the daemon was
// handing to a supervisor when it died. Unclaimed, no supervisor has it or
// ever will: the spec is removed under the claim and the run reported not
// found, so the engine starts it again from its queued spec rather than
// calling it lost. Claimed, a supervisor is taking it this moment: its pid
// file is waited for (bounded), and the run recovered as usual. (nil, nil):
// neither applies any more; the caller looks again.
func (s *Sandbox) recoverUnclaimed(ctx context.Context, spec sandbox.Spec, dir string) (sandbox.Handle, error) {
	release, free, err := protocol.TryClaim(dir)
	if err != nil {
		return nil, nil
	}
	if free {
		defer release()
		if protocol.Exists(filepath.Join(dir, protocol.PidFile)) || protocol.Exists(filepath.Join(dir, protocol.ExitFile)) {
			return nil, nil
		}
		if err := os.WriteFile(filepath.Join(dir, protocol.TakenFile), nil, 0o600); err != nil {
			return nil, fmt.Errorf("recover run %s: take back its unclaimed spec: %w", spec.RunID, err)
		}
		if err := os.Remove(filepath.Join(dir, protocol.SpecFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("recover run %s: take back its unclaimed spec: %w", spec.RunID, err)
		}
		return nil, fmt.Errorf("recover run %s: no supervisor ever took it: %w", spec.RunID, sandbox.ErrNotFound)
	}
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end) && ctx.Err() == nil; time.Sleep(10 * time.Millisecond) {
		if protocol.Exists(filepath.Join(dir, protocol.PidFile)) {
			return s.Recover(ctx, spec)
		}
	}
	return nil, nil
}

// endedOrGone closes once gone does or the exit record appears. A standby
// supervisor outlives its run when the Sandbox that started it is still
// there to hand it the next one, so a run recovered in that process must
// not wait for the supervisor's exit. (After a daemon restart the
// supervisor exits with its run, and gone comes first.)
func endedOrGone(gone <-chan struct{}, record string) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-gone:
				return
			case <-t.C:
				if protocol.Exists(record) {
					return
				}
			}
		}
	}()
	return done
}

func noSignal(syscall.Signal) error { return nil }
