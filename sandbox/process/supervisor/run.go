package supervisor

import (
	"encoding/json"
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

	"golang.org/x/sys/unix"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/internal/proc"
	"github.com/runbox/runbox/sandbox/process/internal/protocol"
	"github.com/runbox/runbox/sandbox/runlog"
)

const defaultGrace = 10 * time.Second

// supervisor is one run as its supervisor serves it.
type supervisor struct {
	*session
	stateDir      string
	spec          sandbox.Spec
	forceWatchdog bool
	pidsDefault   bool
	noCgroup      bool
	started       time.Time
	grace         time.Duration
	timeout       <-chan time.Time

	readyOnce sync.Once
	announced bool // "exited RECORD" was said

	log    *runlog.Writer
	cg     *runCgroup
	tree   protocol.TreeRecord // where the run's processes are (TreeFile)
	wd     *watchdog
	pgid   int    // process group of the running step
	ending string // first cause that ended the run early
	unfit  string // why this process should not serve another run

	// startedInside says the last spawn forked inside the run's v1
	// cgroups; startOutside makes spawn fork outside them (a retry).
	startedInside bool
	startOutside  bool
	threadStuck   bool // a thread could not leave a run's cgroup

	mu      sync.Mutex
	logErr  error
	dropped int64
}

func (s *supervisor) path(name string) string { return filepath.Join(s.stateDir, name) }

func (s *supervisor) run() error {
	// The claim says to a restarted daemon that this run is being taken
	// (protocol.Claim); it is held until the run is over.
	release, err := protocol.Claim(s.stateDir)
	if err != nil {
		return err
	}
	defer release()
	var b protocol.Boot
	if err := protocol.ReadSpec(s.stateDir, &b); err != nil {
		if errors.Is(err, os.ErrNotExist) && protocol.Exists(s.path(protocol.TakenFile)) {
			return protocol.ErrTakenBack
		}
		return fmt.Errorf("read spec: %w", err)
	}
	s.spec, s.forceWatchdog, s.pidsDefault, s.noCgroup = b.Spec, b.ForceWatchdog, b.PidsDefault, b.NoCgroup
	if s.selfStart == 0 {
		start, err := proc.StartTime(s.self)
		if err != nil {
			return fmt.Errorf("own start time: %w", err)
		}
		s.selfStart = start
	}
	if err := protocol.WriteJSON(s.path(protocol.PidFile), protocol.PidRecord{Pid: s.self, Start: s.selfStart}, false); err != nil {
		return fmt.Errorf("write pid file: %w", err)
	}
	protocol.DropSpec(s.stateDir) // it may hold secrets (env, stdin)
	_ = becomeSubreaper()
	// The exit record's space, held in its temporary twin (ReserveFile):
	// writeRecord opens that truncated, so the space comes back just as
	// the record is written into it, and no file is removed.
	reserved := reserveSpace(s.path(protocol.ReserveFile)) == nil

	exit := sandbox.Exit{StartedAt: s.started}
	log, err := runlog.Create(s.spec.LogPath)
	if err != nil {
		exit.Code, exit.Error = codeSandbox, fmt.Sprintf("open run log: %v", err)
		return s.writeExit(exit)
	}
	s.log = log
	if s.reaper == nil {
		s.reaper = newReaper()
	}
	s.grace = s.spec.Grace
	if s.grace <= 0 {
		s.grace = defaultGrace
	}
	if s.spec.Timeout > 0 {
		s.timeout = time.After(s.spec.Timeout - time.Since(s.started))
	}
	if !reserved {
		s.note("could not reserve disk space for the exit record: a full disk may lose the run's end")
	}
	s.setupCgroup()
	s.recordTree(0)
	exit = s.execute(exit)
	return s.finish(exit)
}

// execute places assets, runs setup, then the main command.
func (s *supervisor) execute(exit sandbox.Exit) sandbox.Exit {
	spec := &s.spec
	fail := func(err error) sandbox.Exit {
		exit.Code, exit.Error = codeSandbox, err.Error()
		s.note("%v", err)
		return exit
	}
	if st, err := os.Stat(spec.Workdir); err != nil {
		return fail(fmt.Errorf("workdir: %w", err))
	} else if !st.IsDir() {
		return fail(fmt.Errorf("workdir %s is not a directory", spec.Workdir))
	}
	if err := placeAssets(spec.Workdir, spec.Assets); err != nil {
		return fail(err)
	}
	env := childEnv(spec, os.Environ())
	if len(spec.Setup) > 0 {
		setupEnv, stopEgress, err := s.egressFor(env, true) // --allow-net: egress.go
		if err != nil {
			return s.startFailed(exit, err)
		}
		exit, done := s.setup(exit, setupEnv)
		stopEgress()
		if done {
			return exit
		}
	}
	cmdEnv, stopEgress, err := s.egressFor(env, false)
	if err != nil {
		return s.startFailed(exit, err)
	}
	defer stopEgress()
	return s.command(exit, cmdEnv)
}

// startFailed ends the run before its command ran, as a sandbox error
// that says why.
func (s *supervisor) startFailed(exit sandbox.Exit, err error) sandbox.Exit {
	exit.Code, exit.Error = codeSandbox, err.Error()
	var se *startError
	if errors.As(err, &se) {
		exit.Code, exit.Error = se.code, se.msg
	}
	s.note("%s", exit.Error)
	return exit
}

// setup runs the setup commands; done is true when the run ends there.
func (s *supervisor) setup(exit sandbox.Exit, env []string) (_ sandbox.Exit, done bool) {
	spec := &s.spec
	fail := func(err error) sandbox.Exit {
		exit.Code, exit.Error = codeSandbox, err.Error()
		s.note("%v", err)
		return exit
	}
	for i, script := range spec.Setup {
		s.note("setup %d/%d: %s", i+1, len(spec.Setup), script)
		st, err := s.runStep(shellCommand(script, env, spec.Workdir), nil, runlog.SetupStdout, runlog.SetupStderr)
		if err != nil {
			return fail(fmt.Errorf("setup %d: %w", i+1, err)), true
		}
		s.status(&exit, st)
		if exit.Code != 0 || s.ending != "" {
			exit.SetupFailed = s.ending == ""
			if exit.SetupFailed {
				s.note("setup %d/%d failed with exit code %d", i+1, len(spec.Setup), exit.Code)
			}
			return exit, true
		}
	}
	return exit, false
}

// command runs the main command.
func (s *supervisor) command(exit sandbox.Exit, env []string) sandbox.Exit {
	spec := &s.spec
	fail := func(err error) sandbox.Exit {
		exit.Code, exit.Error = codeSandbox, err.Error()
		s.note("%v", err)
		return exit
	}
	cmd, err := mainCommand(spec, env)
	if err == nil {
		var stdin *os.File
		if stdin, err = openStdin(spec); err != nil {
			return fail(err)
		}
		var st exitStatus
		if st, err = s.runStep(cmd, stdin, runlog.Stdout, runlog.Stderr); err == nil {
			s.status(&exit, st)
			return exit
		}
		err = execError(cmd.Args[0], err)
	}
	var se *startError
	if !errors.As(err, &se) {
		return fail(err)
	}
	// Like a shell: the run exists and fails with 126/127 and a message,
	// its one line (marked "runbox:" as runbox's own; a meta note saying
	// it again showed twice on an attached terminal).
	_ = s.log.Write(runlog.Stderr, []byte(se.msg+"\n"))
	exit.Code = se.code
	return exit
}

// runStep runs one command to its end, enforcing timeout, stop and the
// memory limit meanwhile, then ends whatever it left behind.
func (s *supervisor) runStep(cmd *exec.Cmd, stdin *os.File, out, errs runlog.Stream) (exitStatus, error) {
	cmd.SysProcAttr = childAttr()
	undo, start, err := s.confine(cmd) // --isolate: confine.go
	if err != nil {
		if stdin != nil {
			stdin.Close()
		}
		return exitStatus{}, err
	}
	defer func() { undo() }() // the last one: a retried start confines anew
	outR, outW, err := os.Pipe()
	if err != nil {
		return exitStatus{}, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return exitStatus{}, err
	}
	setPipeSize(outW, 1<<20)
	cmd.Stdout, cmd.Stderr = outW, errW
	if stdin != nil {
		cmd.Stdin = stdin
	}
	if s.cg != nil {
		s.cg.attr(cmd.SysProcAttr)
	}
	s.startedInside = false
	ch, pid, err := start() // s.spawn, on whichever thread forks
	inside := s.startedInside
	if inside && errors.Is(err, syscall.EAGAIN) {
		// The forking thread counts while it is inside: a pids limit
		// below it refuses the fork. Start it outside, then move it,
		// confined the same way.
		inside = false
		cmd = &exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir,
			Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr, SysProcAttr: cmd.SysProcAttr}
		undo()
		s.startOutside = true
		if undo, start, err = s.confine(cmd); err == nil {
			ch, pid, err = start()
		}
		s.startOutside = false
	}
	outW.Close()
	errW.Close()
	if stdin != nil {
		stdin.Close()
	}
	if err != nil {
		outR.Close()
		errR.Close()
		s.signalReady()
		return exitStatus{}, err
	}
	if s.cg != nil && !inside {
		if err := s.cg.add(pid); err != nil {
			s.note("could not move pid %d into the run's cgroup: %v", pid, err)
		}
	}
	s.pgid = pid
	s.recordTree(pid)
	var io stepIO
	s.pump(&io, outR, out)
	s.pump(&io, errR, errs)
	s.signalReady()
	st := s.await(ch)
	if n := len(s.runPids()); n > 0 {
		s.note("command exited, ending %d leftover process(es)", n)
		s.killTree(min(s.grace, leftoverGrace))
	}
	s.pgid = 0
	if io.drain(drainTimeout) {
		s.note("output pipes still open %s after the command exited: stopped reading", drainTimeout)
		s.unfit = "a stray process holds the run's pipes"
	}
	return st, nil
}

// spawn starts cmd from the calling thread, inside the run's v1 cgroups
// where it can, and says in startedInside whether it did. A step's
// process is forked here, or, for --isolate confined in a thread, from
// that thread (confine.go), which enters the cgroups the same way.
func (s *supervisor) spawn(cmd *exec.Cmd) (<-chan exitStatus, int, error) {
	runtime.LockOSThread()
	leave := s.enterCgroup()
	ch, pid, err := s.reaper.start(cmd)
	leave()
	if !s.threadStuck {
		runtime.UnlockOSThread()
	}
	return ch, pid, err
}

// enterCgroup moves the calling thread, which the caller holds
// (runtime.LockOSThread) and forks the command from, into the run's v1
// cgroups (runCgroup.enter); the function it returns moves it back. If
// the thread cannot leave, it stays held (threadStuck: no other goroutine
// runs on it, nothing else is born there) and this supervisor serves no
// further run.
func (s *supervisor) enterCgroup() (leave func()) {
	s.startedInside = false
	if s.cg == nil || s.startOutside {
		return func() {}
	}
	l, err := s.cg.enter()
	s.startedInside = err == nil
	return func() {
		if lerr := l(); lerr != nil {
			s.note("could not leave the run's cgroup: %v", lerr)
			s.unfit = "its thread could not leave a run's cgroup"
			s.threadStuck = true
		}
	}
}

// await waits for the step's exit while enforcing timeout, stop and memory.
func (s *supervisor) await(ch <-chan exitStatus) exitStatus {
	for {
		select {
		case st := <-ch:
			return st
		case <-s.timeout:
			s.timeout = nil
			s.end("timeout", s.grace, "timed out after %s: sent SIGTERM to process group", s.spec.Timeout)
		case <-s.sigs:
			if s.staleStop() {
				s.note("ignored a stop request meant for the previous run")
				continue
			}
			g := s.stopGrace()
			s.end("cancel", g, "stop requested: sent SIGTERM to process group (grace %s)", g)
		case rss := <-s.wd.exceeded:
			s.end("oom", 0, "memory limit %s exceeded (rss %s): killed",
				mib(uint64(s.spec.Limits.MemoryBytes)), mib(rss))
		}
	}
}

// status fills code and signal from a wait status.
func (s *supervisor) status(e *sandbox.Exit, st exitStatus) {
	ws := st.ws
	switch {
	case ws.Exited():
		e.Code, e.Signal = ws.ExitStatus(), ""
	case ws.Signaled():
		e.Code, e.Signal = 128+int(ws.Signal()), unix.SignalName(ws.Signal())
	}
}

// finish settles the exit record: flags, usage, then the log is synced
// and only then the record written (so a reader of the record can trust
// the log is complete).
func (s *supervisor) finish(exit sandbox.Exit) error {
	s.wd.close()
	switch s.ending {
	case "timeout":
		exit.TimedOut = true
	case "cancel":
		exit.Cancelled = true
	case "oom":
		exit.OOMKilled = true
	}
	if s.cg != nil {
		n, checked := s.cg.oomKills()
		if n > 0 {
			exit.OOMKilled = true
			s.note("kernel OOM killer killed %d process(es) at the memory limit %s", n, mib(uint64(s.spec.Limits.MemoryBytes)))
		}
		exit.OOMChecked = checked && !exit.OOMKilled
	}
	cpu, peak := s.reaper.takeUsage()
	exit.EndedAt = time.Now()
	exit.Usage = sandbox.Usage{
		WallSeconds:  exit.EndedAt.Sub(exit.StartedAt).Seconds(),
		CPUSeconds:   cpu,
		PeakRSSBytes: max(peak, s.wd.peak.Load()),
	}
	s.mu.Lock()
	logErr, dropped := s.logErr, s.dropped
	s.mu.Unlock()
	if logErr != nil {
		exit.LogDropped = dropped
		s.unfit = "log write failed"
		// Only reaches the log if space came back; the record says it anyway.
		s.note("writing the log failed, %d bytes of output dropped: %v", dropped, logErr)
	}
	// The record must not become visible before the log is on disk, but
	// the two fsyncs may overlap: only the rename waits for both. The
	// starter is told the record as soon as the log is on disk, so that
	// storing it (the daemon syncs its own store) overlaps the record's
	// fsync here: what it stores is then durable, and if it does not
	// store it (killed), this file is what the next one reads.
	b, err := json.Marshal(exit)
	if err != nil {
		return err
	}
	recDone := make(chan error, 1)
	var commit func() error
	go func() {
		var err error
		commit, err = writeRecord(s.path(protocol.ExitFile), b)
		recDone <- err
	}()
	if lerr := s.log.Close(); lerr != nil {
		fmt.Fprintf(os.Stderr, "runbox supervisor: close log: %v\n", lerr)
	}
	s.announce(b)
	if s.cg != nil {
		// Emptied, its directories go after the notice, while the record
		// syncs: the daemon stores the end meanwhile, and the record's
		// file (what Wait and a restarted daemon read) still comes after.
		s.cg.remove()
	}
	err = <-recDone
	if err == nil {
		err = commit()
	}
	if err != nil {
		return fmt.Errorf("write exit record: %w", err)
	}
	return nil
}

// writeExit records a run that ended before it had a log.
func (s *supervisor) writeExit(exit sandbox.Exit) error {
	exit.EndedAt = time.Now()
	exit.Usage.WallSeconds = exit.EndedAt.Sub(exit.StartedAt).Seconds()
	b, err := json.Marshal(exit)
	if err != nil {
		return err
	}
	commit, err := writeRecord(s.path(protocol.ExitFile), b)
	if err == nil {
		err = commit()
	}
	if err != nil {
		return fmt.Errorf("write exit record: %w", err)
	}
	return nil
}

func tvSeconds(tv syscall.Timeval) float64 {
	return float64(tv.Sec) + float64(tv.Usec)/1e6
}

func mib(b uint64) string { return fmt.Sprintf("%d MiB", b>>20) }

// safeName keeps a run id usable as a cgroup directory name.
func safeName(id string) string {
	id = strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '_'
	}, id)
	return strings.TrimLeft(id, ".")
}
