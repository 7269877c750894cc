package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/runbox/runbox/sandbox/process/internal/protocol"
	"github.com/runbox/runbox/sandbox/runlog"
)

// Bounds on ending a run. Leftovers (processes still alive after the main
// command exited) get a short grace: the run is over, nobody waits for them.
const (
	leftoverGrace = 2 * time.Second
	drainTimeout  = 2 * time.Second
	killTimeout   = 10 * time.Second
	treePoll      = 20 * time.Millisecond
)

// signalTree sends sig to the running step's process group and to every
// other process of the run (escaped into another group or session, or only
// visible through the cgroup). It returns how many processes it found.
func (s *supervisor) signalTree(sig syscall.Signal) int {
	if s.pgid > 0 {
		_ = syscall.Kill(-s.pgid, sig)
	}
	pids := s.runPids()
	for _, p := range pids {
		_ = syscall.Kill(p, sig)
	}
	return len(pids)
}

// waitTreeEmpty waits up to d for the run's last process to be gone.
func (s *supervisor) waitTreeEmpty(d time.Duration) bool {
	deadline := time.Now().Add(d)
	t := time.NewTimer(treePoll)
	defer t.Stop()
	for {
		if len(s.runPids()) == 0 {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		t.Reset(min(left, treePoll))
		select {
		case <-s.reaper.died:
		case <-t.C:
		}
	}
}

// killTree ends every process of the run: SIGTERM, up to grace for them to
// exit, then SIGKILL until none is left. It reports whether it had to
// escalate to SIGKILL.
func (s *supervisor) killTree(grace time.Duration) (killed bool) {
	if grace > 0 {
		if s.signalTree(syscall.SIGTERM) == 0 {
			return false
		}
		if s.waitTreeEmpty(grace) {
			return false
		}
	}
	deadline := time.Now().Add(killTimeout)
	for time.Now().Before(deadline) {
		if s.signalTree(syscall.SIGKILL) == 0 {
			return true
		}
		if s.waitTreeEmpty(treePoll * 5) {
			return true
		}
	}
	s.note("could not kill every process of the run within %s", killTimeout)
	return true
}

// end stops the run for cause ("timeout", "cancel", "oom") once: the first
// cause is the one the exit record reports.
func (s *supervisor) end(cause string, grace time.Duration, format string, args ...any) {
	if s.ending != "" {
		return
	}
	s.ending = cause
	s.note(format, args...)
	if s.killTree(grace) && grace > 0 {
		s.note("still running %s after SIGTERM: sent SIGKILL", grace)
	}
}

// stopGrace reads the grace a Stop asked for (stop.json), defaulting to
// the spec's. A plain kill -TERM of the supervisor cancels with the default.
func (s *supervisor) stopGrace() time.Duration {
	p := s.path(protocol.StopFile)
	var req protocol.StopRequest
	if err := protocol.ReadJSON(p, &req); err == nil && req.Grace > 0 {
		os.Remove(p)
		return req.Grace
	}
	os.Remove(p)
	return s.grace
}

// staleStop reports whether a SIGTERM is a Stop meant for the run this
// supervisor served before (sent as that run ended, delivered after this
// one began): Stop writes stop.json into the run's directory before it
// signals, so that directory, and not this run's, holds the request.
func (s *supervisor) staleStop() bool {
	if s.prevDir == "" || protocol.Exists(s.path(protocol.StopFile)) {
		return false
	}
	prev := filepath.Join(s.prevDir, protocol.StopFile)
	if !protocol.Exists(prev) {
		return false
	}
	os.Remove(prev) // it has been answered; a later SIGTERM is a real one
	return true
}

// stepIO pumps one step's stdout and stderr pipes into the log.
type stepIO struct {
	files []*os.File
	wg    sync.WaitGroup
}

func (s *supervisor) pump(io *stepIO, f *os.File, stream runlog.Stream) {
	io.files = append(io.files, f)
	io.wg.Add(1)
	go func() {
		defer io.wg.Done()
		buf := make([]byte, runlog.MaxPayload)
		for {
			// Raw bytes as they arrive: no line buffering, so an endless
			// line costs one buffer, and ordering across streams is kept.
			n, err := f.Read(buf)
			if n > 0 {
				if werr := s.log.Write(stream, buf[:n]); werr != nil {
					s.logFailed(werr, n)
				}
			}
			if err != nil {
				return
			}
		}
	}()
}

// drain waits for the pipes to reach EOF; after d it cuts them off (a
// process outside the run may still hold a write end).
func (io *stepIO) drain(d time.Duration) (cut bool) {
	done := make(chan struct{})
	go func() { io.wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		cut = true
		for _, f := range io.files {
			_ = f.SetReadDeadline(time.Now())
		}
		<-done
	}
	for _, f := range io.files {
		f.Close()
	}
	return cut
}

func (s *supervisor) logFailed(err error, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logErr == nil {
		s.logErr = err
	}
	s.dropped += int64(n)
}

// note writes one of runbox's own lines into the meta stream.
func (s *supervisor) note(format string, args ...any) {
	if s.log == nil {
		return
	}
	if err := s.log.Write(runlog.Meta, []byte(fmt.Sprintf(format, args...)+"\n")); err != nil {
		s.logFailed(err, 0)
	}
}
