package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/internal/proc"
	"github.com/runbox/runbox/sandbox/process/internal/protocol"
)

// Arg is the argv word that makes the runbox binary (and a test binary
// run through supervisortest) the supervisor: `EXE Arg STATE_DIR`.
const Arg = "__supervise"

// Main is the supervisor process: the runbox binary re-executed by
// process.Sandbox.Start as `runbox <Options.Args...> STATE_DIR` (by
// default `runbox __supervise STATE_DIR`); cmd/runbox passes it the
// arguments after Arg and exits with its result. It runs one run to the
// end, detached from whoever started it, and leaves the exit record in
// STATE_DIR. Started as a standby (`__supervise --standby`) it takes its
// runs from the control pipe instead, one after another, for as long as
// its starter keeps it (see serveRuns).
func Main(args []string) int {
	// First thing: a Stop that arrives while starting up must cancel the
	// run, not kill the supervisor by SIGTERM's default action.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
	if os.Getpid() == 1 {
		spareThreads(initSpareThreads)
	}
	if len(args) == 1 && args[0] == protocol.StandbyArg {
		return serveRuns(sigs)
	}
	if (len(args) == 2 || len(args) == 3) && args[0] == AwaitArg {
		return awaitBox(sigs, args[1:]) // a pooled container's init (container.go)
	}
	if len(args) != 1 {
		fmt.Fprintf(os.Stderr, "usage: %s STATE_DIR\n", Arg)
		return 2
	}
	se := &session{sigs: sigs, self: os.Getpid(), ready: readyPipe()}
	code, _ := se.serve(args[0])
	if se.ready != nil {
		se.ready.Close()
	}
	return code
}

// session is what a supervisor keeps from one run to the next.
type session struct {
	sigs      chan os.Signal
	self      int
	selfStart uint64   // the kernel's start time of self, if known yet
	ready     *os.File // the ready pipe; nil when started without one
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
		if !protocol.Exists(s.path(protocol.ExitFile)) && !errors.Is(err, protocol.ErrTakenBack) {
			// Failed before the run began (unreadable spec, state dir not
			// writable): say so as a sandbox error rather than vanish.
			_ = s.writeExit(sandbox.Exit{Code: codeSandbox, Error: err.Error(), StartedAt: s.started})
		}
		return 1, false
	}
	return 0, s.unfit == "" && (childless() || len(proc.Descendants(se.self)) == 0)
}

// readyPipe is the ready pipe Start waits on, if this process was given
// one.
func readyPipe() *os.File {
	var st syscall.Stat_t
	if err := syscall.Fstat(protocol.ReadyFD, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return nil
	}
	syscall.CloseOnExec(protocol.ReadyFD) // children must not hold Start's pipe open
	return os.NewFile(protocol.ReadyFD, "ready")
}

// signalReady tells Start the run is under way ("ok"). The pipe stays
// open for signalEnded.
func (s *supervisor) signalReady() {
	s.readyOnce.Do(func() {
		if s.ready != nil {
			_, _ = s.ready.Write([]byte(protocol.ReadyMsg))
		}
	})
}

// announce tells the starter the run's exit record ("exited RECORD"),
// once its log is on disk, so it need not wait for this process to exit
// nor read the record back.
func (s *supervisor) announce(record []byte) {
	s.signalReady()
	if msg, ok := protocol.Exited(record); ok && s.ready != nil && !s.announced {
		_, _ = s.ready.Write(msg)
		s.announced = true
	}
}

// signalEnded tells the starter that the exit record is on disk
// ("exited"), unless announce already did. Without a record it says
// nothing more: the process then exits, the pipe closes, and the starter
// goes by the process's exit.
func (s *supervisor) signalEnded() {
	s.signalReady()
	if s.ready != nil && !s.announced && protocol.Exists(s.path(protocol.ExitFile)) {
		_, _ = s.ready.Write([]byte(protocol.ExitedMsg))
	}
}

// initSpareThreads is how many OS threads a container's init makes before
// its run starts.
const initSpareThreads = 12

// spareThreads makes the Go runtime start n OS threads now and keep them
// idle. A container's init shares the container's pids limit with its
// run, and the runtime cannot survive a thread it fails to create: once a
// fork bomb had filled the limit, the init died (exit 2) the next time the
// scheduler wanted one more thread, and the run's end went unrecorded.
// With idle threads at hand the runtime takes one of them instead.
func spareThreads(n int) {
	var locked, release sync.WaitGroup
	locked.Add(n)
	release.Add(1)
	for range n {
		go func() {
			runtime.LockOSThread() // each goroutine holds a thread of its own
			locked.Done()
			release.Wait()
			runtime.UnlockOSThread() // the thread goes idle, and stays
		}()
	}
	locked.Wait()
	release.Done()
}
