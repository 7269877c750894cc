package process

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/runlog"
)

const defaultGrace = 10 * time.Second

// readyFD is the pipe Start waits on: the supervisor writes "ok" to it once
// the run is under way (or has already ended), then closes it.
const readyFD = 3

// SupervisorMain is the supervisor process: the runbox binary re-executed
// by Start as `runbox <Options.Args...> STATE_DIR` (by default
// `runbox __supervise STATE_DIR`); cmd/runbox passes it the arguments after
// "__supervise" and exits with its result. It runs one run to the end,
// detached from whoever started it, and leaves the exit record in STATE_DIR.
// Started as a standby (`__supervise --standby`) it takes its runs from
// fd 4 instead, one after another, for as long as its starter keeps it
// (see serveRuns).
func SupervisorMain(args []string) int {
	// First thing: a Stop that arrives while starting up must cancel the
	// run, not kill the supervisor by SIGTERM's default action.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
	if len(args) == 1 && args[0] == standbyArg {
		return serveRuns(sigs)
	}
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: __supervise STATE_DIR")
		return 2
	}
	se := &session{sigs: sigs, self: os.Getpid(), ready: readyPipe()}
	code, _ := se.serve(args[0])
	if se.ready != nil {
		se.ready.Close()
	}
	return code
}

// maxServed bounds how many runs one standby supervisor serves before it
// exits and a fresh one takes over, so nothing one run leaves in the
// process (a leak in a library, a fragmented heap) can grow without end.
const maxServed = 256

// serveRuns is a standby supervisor: it warms up, then serves the runs
// whose state directories arrive on fd 4, one at a time. After each run
// it says "idle" on the ready pipe if it can serve another (the run left
// nothing behind: no process, no open pipe, no failed log write), and
// waits for the next directory; its starter either sends one or closes
// the pipe, and then it exits. A starter that died (kill -9 of the daemon)
// closes the pipe too, so a supervisor never outlives its daemon by more
// than the run it was serving.
func serveRuns(sigs chan os.Signal) int {
	se := &session{sigs: sigs, self: os.Getpid(), selfStart: warmUp(), ready: readyPipe()}
	// A blocking read: the kernel wakes this thread itself when the run
	// arrives, one hand-off fewer than through the runtime's poller.
	_ = syscall.SetNonblock(controlFD, false)
	control := bufio.NewReader(os.NewFile(controlFD, "control"))
	defer func() {
		if se.ready != nil {
			se.ready.Close()
		}
	}()
	for served := 1; ; served++ {
		dir, ok := awaitRun(control)
		if !ok {
			return 0 // the starter let us go
		}
		// A signal still queued from the previous run is not for this one.
		for len(sigs) > 0 {
			<-sigs
		}
		code, reusable := se.serve(dir)
		if !reusable || served >= maxServed || se.ready == nil {
			return code
		}
		if _, err := se.ready.Write([]byte(idleMsg)); err != nil {
			return code
		}
		se.prevDir = dir
	}
}

// session is what a supervisor keeps from one run to the next.
type session struct {
	sigs      chan os.Signal
	self      int
	selfStart uint64   // the kernel's start time of self, if known yet
	ready     *os.File // the ready pipe (fd 3); nil when started without one
	reaper    *reaper  // started with the first run
	prevDir   string   // state directory of the run served before this one
}

// serve runs the run in dir to its end and reports it on the ready pipe.
// reusable says whether the process is fit to serve another run.
func (se *session) serve(dir string) (code int, reusable bool) {
	s := &supervisor{stateDir: dir, session: se, started: time.Now()}
	defer s.signalEnded()
	if err := s.run(); err != nil {
		fmt.Fprintf(os.Stderr, "runbox supervisor: %v\n", err)
		if !exists(s.path(exitFile)) {
			// Failed before the run began (unreadable spec, state dir not
			// writable): say so as a sandbox error rather than vanish.
			_ = s.writeExit(sandbox.Exit{Code: codeSandbox, Error: err.Error(), StartedAt: s.started})
		}
		return 1, false
	}
	return 0, s.unfit == "" && (childless() || len(descendants(se.self)) == 0)
}

func readyPipe() *os.File {
	var st syscall.Stat_t
	if err := syscall.Fstat(readyFD, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return nil
	}
	syscall.CloseOnExec(readyFD) // children must not hold Start's pipe open
	return os.NewFile(readyFD, "ready")
}

type supervisor struct {
	*session
	stateDir      string
	spec          sandbox.Spec
	forceWatchdog bool
	started       time.Time
	grace         time.Duration
	timeout       <-chan time.Time

	readyOnce sync.Once
	announced bool // "exited RECORD" was said

	log    *runlog.Writer
	cg     *memCgroup
	wd     *watchdog
	pgid   int    // process group of the running step
	ending string // first cause that ended the run early
	unfit  string // why this process should not serve another run

	mu      sync.Mutex
	logErr  error
	dropped int64
}

func (s *supervisor) path(name string) string { return filepath.Join(s.stateDir, name) }

// signalReady tells Start the run is under way ("ok"). The pipe stays
// open for signalEnded.
func (s *supervisor) signalReady() {
	s.readyOnce.Do(func() {
		if s.ready != nil {
			_, _ = s.ready.Write([]byte(readyMsg))
		}
	})
}

// announce tells the starter the run's exit record ("exited RECORD"),
// once its log is on disk, so it need not wait for this process to exit
// nor read the record back.
func (s *supervisor) announce(record []byte) {
	s.signalReady()
	if s.ready != nil && !s.announced && bytes.IndexByte(record, '\n') < 0 {
		_, _ = s.ready.Write([]byte(exitedWord + " " + string(record) + "\n"))
		s.announced = true
	}
}

// signalEnded tells the starter that the exit record is on disk
// ("exited"), unless announce already did. Without a record it says
// nothing more: the process then exits, the pipe closes, and the starter
// goes by the process's exit.
func (s *supervisor) signalEnded() {
	s.signalReady()
	if s.ready != nil && !s.announced && exists(s.path(exitFile)) {
		_, _ = s.ready.Write([]byte(exitedMsg))
	}
}

func (s *supervisor) run() error {
	var b boot
	if err := readJSON(s.path(specFile), &b); err != nil {
		return fmt.Errorf("read spec: %w", err)
	}
	s.spec, s.forceWatchdog = b.Spec, b.ForceWatchdog
	if s.selfStart == 0 {
		start, err := procStart(s.self)
		if err != nil {
			return fmt.Errorf("own start time: %w", err)
		}
		s.selfStart = start
	}
	if err := writeJSON(s.path(pidFile), pidRecord{Pid: s.self, Start: s.selfStart}, false); err != nil {
		return fmt.Errorf("write pid file: %w", err)
	}
	os.Remove(s.path(specFile)) // it may hold secrets (env, stdin)
	_ = becomeSubreaper()

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
	s.setupMemory()
	exit = s.execute(exit)
	return s.finish(exit)
}

func (s *supervisor) setupMemory() {
	limit := s.spec.Limits.MemoryBytes
	if limit > 0 && !s.forceWatchdog {
		name := fmt.Sprintf("runbox-%s-%d", safeName(s.spec.RunID), s.self)
		cg, err := newMemCgroup(name, limit)
		if err == nil {
			s.cg = cg
			s.note("memory limit %s enforced by %s", mib(uint64(limit)), cg)
		} else {
			s.note("memory limit %s enforced by rss watchdog (%v)", mib(uint64(limit)), err)
		}
	} else if limit > 0 {
		s.note("memory limit %s enforced by rss watchdog", mib(uint64(limit)))
	}
	wdLimit := limit
	if s.cg != nil {
		wdLimit = 0
	}
	s.wd = startWatchdog(s.self, s.cg, wdLimit)
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
	for i, script := range spec.Setup {
		s.note("setup %d/%d: %s", i+1, len(spec.Setup), script)
		st, err := s.runStep(shellCommand(script, env, spec.Workdir), nil, runlog.SetupStdout, runlog.SetupStderr)
		if err != nil {
			return fail(fmt.Errorf("setup %d: %w", i+1, err))
		}
		s.status(&exit, st)
		if exit.Code != 0 || s.ending != "" {
			exit.SetupFailed = s.ending == ""
			if exit.SetupFailed {
				s.note("setup %d/%d failed with exit code %d", i+1, len(spec.Setup), exit.Code)
			}
			return exit
		}
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
	// Like a shell: the run exists and fails with 126/127 and a message.
	_ = s.log.Write(runlog.Stderr, []byte(se.msg+"\n"))
	s.note("could not start the command: %s", se.msg)
	exit.Code = se.code
	return exit
}

// runStep runs one command to its end, enforcing timeout, stop and the
// memory limit meanwhile, then ends whatever it left behind.
func (s *supervisor) runStep(cmd *exec.Cmd, stdin *os.File, out, errs runlog.Stream) (exitStatus, error) {
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
	cmd.SysProcAttr = childAttr()
	if s.cg != nil {
		s.cg.attr(cmd.SysProcAttr)
	}
	ch, pid, err := s.reaper.start(cmd)
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
	if s.cg != nil {
		if err := s.cg.add(pid); err != nil {
			s.note("could not move pid %d into the memory cgroup: %v", pid, err)
		}
	}
	s.pgid = pid
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
		if n := s.cg.oomKills(); n > 0 {
			exit.OOMKilled = true
			s.note("kernel OOM killer killed %d process(es) at the memory limit %s", n, mib(uint64(s.spec.Limits.MemoryBytes)))
		}
		s.cg.remove()
	}
	cpu, peak := s.reaper.takeUsage()
	exit.EndedAt = time.Now()
	exit.Usage = sandbox.Usage{
		WallSeconds:  exit.EndedAt.Sub(exit.StartedAt).Seconds(),
		CPUSeconds:   cpu,
		PeakRSSBytes: max(peak, s.wd.peak.Load()),
	}
	if s.logErr != nil {
		s.note("writing the log failed, %d bytes lost: %v", s.dropped, s.logErr)
		s.unfit = "log write failed"
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
		commit, err = writeTemp(s.path(exitFile), b, true)
		recDone <- err
	}()
	if lerr := s.log.Close(); lerr != nil {
		fmt.Fprintf(os.Stderr, "runbox supervisor: close log: %v\n", lerr)
	}
	s.announce(b)
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
	if err := writeJSON(s.path(exitFile), exit, true); err != nil {
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
