package process

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/runbox/runbox/sandbox"
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
	// Standby keeps one supervisor started ahead of time, waiting for its
	// run, so starting the binary (~10-15 ms) is not on the path of Start.
	Standby bool
}

// Sandbox is the process backend.
type Sandbox struct {
	opts Options

	mu      sync.Mutex
	standby *standby // a started supervisor waiting for its run, if any
	filling bool     // a standby is being started
	closed  bool     // Close was called: no more standbys
}

var _ sandbox.Sandbox = (*Sandbox)(nil)

// New returns the process backend.
func New(opts Options) *Sandbox {
	if len(opts.Args) == 0 {
		opts.Args = []string{"__supervise"}
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
		h.Info = map[string]string{"memory_limit": memoryLimitMode()}
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
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return nil, fmt.Errorf("start run %s: %w", spec.RunID, err)
	}
	if exists(filepath.Join(dir, pidFile)) || exists(filepath.Join(dir, exitFile)) {
		return nil, fmt.Errorf("start run %s: state dir %s already holds a run", spec.RunID, dir)
	}
	if err := writeJSON(filepath.Join(dir, specFile), boot{Spec: spec, ForceWatchdog: s.opts.ForceWatchdog}, false); err != nil {
		return nil, fmt.Errorf("start run %s: write spec: %w", spec.RunID, err)
	}
	h, ready, standby, err := s.begin(exe, dir)
	if err != nil {
		os.Remove(filepath.Join(dir, specFile))
		return nil, fmt.Errorf("start run %s: %w", spec.RunID, err)
	}
	err = h.waitReady(ctx, ready)
	if err != nil && standby && ctx.Err() == nil && neverTookRun(h, dir) {
		// The standby died before it took the run (its spec is unread):
		// a fresh supervisor runs it instead.
		if h, ready, err = s.launch(exe, dir); err != nil {
			os.Remove(filepath.Join(dir, specFile))
			return nil, fmt.Errorf("start run %s: %w", spec.RunID, err)
		}
		err = h.waitReady(ctx, ready)
	}
	if err != nil {
		if ctx.Err() != nil {
			// The caller gave up: do not leave a run it believes never started.
			_ = h.signal(syscall.SIGTERM)
			return nil, fmt.Errorf("start run %s: %w", spec.RunID, ctx.Err())
		}
		<-h.exited()
		if _, rerr := readExit(dir); rerr == nil {
			return h, nil // it ended before it could report; Wait tells why
		}
		os.Remove(filepath.Join(dir, specFile))
		return nil, fmt.Errorf("start run %s: supervisor exited (%s): %s", spec.RunID, h.waitErr, tail(filepath.Join(dir, superLog)))
	}
	return h, nil
}

// launch starts the supervisor, detached in its own session; its stderr
// goes to supervisor.log, and fd 3 is the ready pipe.
func (s *Sandbox) launch(exe, dir string) (*handle, *os.File, error) {
	logf, err := os.OpenFile(filepath.Join(dir, superLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, secretMode)
	if err != nil {
		return nil, nil, err
	}
	defer logf.Close()
	h, ready, err := startSupervisor(exe, append(append([]string{}, s.opts.Args...), dir), logf, nil)
	if err != nil {
		return nil, nil, err
	}
	h.stateDir = dir
	return h, ready, nil
}

// startSupervisor execs exe with args, in a session of its own, with
// stderr to errf (nil: /dev/null), the ready pipe's write end as fd 3 and
// extra as fd 4 (if set). It returns the handle (reaped in the background)
// and the ready pipe's read end.
func startSupervisor(exe string, args []string, errf, extra *os.File) (*handle, *os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	defer w.Close()
	files := []*os.File{w}
	if extra != nil {
		files = append(files, extra)
	}
	cmd := &exec.Cmd{
		Path:        exe,
		Args:        append([]string{exe}, args...),
		ExtraFiles:  files,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if errf != nil {
		cmd.Stderr = errf
	}
	if err := cmd.Start(); err != nil {
		r.Close()
		return nil, nil, fmt.Errorf("start supervisor: %w", err)
	}
	reaped := make(chan struct{})
	h := &handle{pid: cmd.Process.Pid, reaped: reaped}
	h.done = h.endedChan()
	h.signal = func(sig syscall.Signal) error {
		// pidfd-backed in os: never signals a recycled pid.
		if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return err
		}
		return nil
	}
	go func() {
		// Reaps the supervisor (no zombie) whether or not anyone calls Wait.
		err := cmd.Wait()
		if err != nil {
			h.waitErr = err.Error()
		} else {
			h.waitErr = "exit status 0"
		}
		close(reaped)
	}()
	return h, r, nil
}

// The supervisor's messages on its ready pipe: the run is under way; its
// exit record is on disk.
const (
	readyMsg  = "ok\n"
	exitedMsg = "exited\n"
)

// waitReady waits for the supervisor's "ok" on r. Once it came, r is
// watched in the background for "exited", which ends h at once rather
// than when the supervisor process has gone.
func (h *handle) waitReady(ctx context.Context, r *os.File) error {
	stop := context.AfterFunc(ctx, func() { _ = r.SetReadDeadline(time.Now()) })
	br := bufio.NewReader(r)
	line, err := br.ReadString('\n')
	if !stop() {
		r.Close()
		return ctx.Err()
	}
	if line != readyMsg {
		r.Close()
		if err == nil {
			err = fmt.Errorf("unexpected ready message %q", line)
		}
		return err
	}
	go func() {
		defer r.Close()
		if line, _ := br.ReadString('\n'); line == exitedMsg {
			close(h.recorded)
		}
	}()
	return nil
}

// tail returns the last lines of a small diagnostic file.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return "no diagnostics"
	}
	if len(b) > 2048 {
		b = b[len(b)-2048:]
	}
	return strings.TrimSpace(string(b))
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
	var rec pidRecord
	if err := readJSON(filepath.Join(dir, pidFile), &rec); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("recover run %s: %w", spec.RunID, err)
		}
		if exists(filepath.Join(dir, exitFile)) || exists(filepath.Join(dir, specFile)) {
			// Ended early, or the supervisor never got as far as its pid file.
			return &handle{stateDir: dir, done: ended, signal: noSignal}, nil
		}
		return nil, fmt.Errorf("recover run %s: %w", spec.RunID, sandbox.ErrNotFound)
	}
	h := &handle{pid: rec.Pid, stateDir: dir, done: ended, signal: noSignal}
	if exists(filepath.Join(dir, exitFile)) {
		return h, nil
	}
	done, err := watchExit(rec.Pid, rec.Start)
	if err != nil {
		return h, nil // gone: Wait reads the record or reports the run lost
	}
	h.done = done
	h.signal = func(sig syscall.Signal) error {
		if st, err := procStart(rec.Pid); err != nil || st != rec.Start {
			return nil // it has ended; a recycled pid is not ours to signal
		}
		return syscall.Kill(rec.Pid, sig)
	}
	return h, nil
}

func noSignal(syscall.Signal) error { return nil }
