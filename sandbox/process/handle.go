package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/internal/proc"
	"github.com/runbox/runbox/sandbox/process/internal/protocol"
)

// handle is a run seen from outside its supervisor: started here (done
// closes when the supervisor reports the exit record written, or exits) or
// recovered (done closes when the supervisor exits or the record appears).
type handle struct {
	pid      int // supervisor; 0 when it never wrote its pid file
	stateDir string
	done     <-chan struct{} // the run has ended: see endedChan
	signal   func(syscall.Signal) error

	// Started here only: the supervisor process; recorded closes once it
	// said the exit record is on disk, settled once Start's follow-up has
	// recycled or let go of the supervisor.
	proc      *superProc
	announced chan struct{} // closes once exit is set, before the record is on disk
	recorded  chan struct{}
	settled   chan struct{}
	exit      *sandbox.Exit // as the supervisor told it

	lostOnce sync.Once
	lost     sandbox.Exit // the lost run's record, once Wait has made it
}

var _ sandbox.EarlyExiter = (*handle)(nil)

// WaitEarly returns the exit record as soon as the supervisor has told it
// (the run's log is on disk; the record's own file is still being synced),
// or what Wait returns.
func (h *handle) WaitEarly(ctx context.Context) (sandbox.Exit, error) {
	if h.announced == nil {
		return h.Wait(ctx)
	}
	select {
	case <-h.announced:
		return *h.exit, nil
	case <-h.done:
		return h.Wait(ctx)
	case <-ctx.Done():
		return sandbox.Exit{}, ctx.Err()
	}
}

// takeExited reads the supervisor's end-of-run message (see
// protocol.ParseExited) and keeps the record it carried. It reports
// whether msg was one.
func (h *handle) takeExited(msg string) bool {
	e, ok := protocol.ParseExited(msg)
	h.exit = e
	return ok
}

// exited returns a channel closed once the supervisor process is gone:
// for a started handle, once it is reaped (waitErr is set then).
func (h *handle) exited() <-chan struct{} {
	if h.proc != nil {
		return h.proc.reaped
	}
	return h.done
}

// waitErr says how a started supervisor exited, once it has.
func (h *handle) waitErr() string {
	if h.proc == nil {
		return ""
	}
	select {
	case <-h.proc.reaped:
		return h.proc.waitErr
	default:
		return ""
	}
}

// endedChan returns a channel closed when the supervisor has been reaped
// or has reported its exit record written, whichever comes first.
func (h *handle) endedChan() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		select {
		case <-h.proc.reaped:
		case <-h.recorded:
		}
		close(done)
	}()
	return done
}

// Ref is the supervisor's pid.
func (h *handle) Ref() string { return strconv.Itoa(h.pid) }

// Wait returns the exit record once the supervisor has written it (or
// exited). A supervisor gone without a record (kill -9, machine crash) is
// a lost run.
func (h *handle) Wait(ctx context.Context) (sandbox.Exit, error) {
	select {
	case <-h.done:
	case <-ctx.Done():
		return sandbox.Exit{}, ctx.Err()
	}
	if h.recorded != nil {
		select {
		case <-h.recorded: // h.exit is set, if it is, before this closes
			if h.exit != nil {
				return *h.exit, nil
			}
		default: // the supervisor exited first: its record is on disk
		}
	}
	e, err := protocol.ReadExit(h.stateDir)
	if err == nil {
		return e, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return sandbox.Exit{}, fmt.Errorf("read exit record: %w", err)
	}
	h.lostOnce.Do(func() { h.lost = h.lostExit() })
	return h.lost, nil
}

// lostExit is the record of a run whose supervisor is gone without one:
// what is left of the run is killed first (sweepLost), and the reason
// says how many processes that ended.
func (h *handle) lostExit() sandbox.Exit {
	msg := fmt.Sprintf("supervisor pid %d vanished without an exit record", h.pid)
	if we := h.waitErr(); we != "" {
		msg += " (" + we + ")"
	}
	if h.pid != 0 {
		var rec protocol.PidRecord
		err := protocol.ReadJSON(filepath.Join(h.stateDir, protocol.PidFile), &rec)
		n := 0
		if err == nil && rec.Pid == h.pid {
			n, err = sweepLost(h.stateDir, rec)
		}
		switch {
		case err != nil && n > 0:
			msg += fmt.Sprintf("; ended %d leftover process(es), some may remain: %v", n, err)
		case err != nil:
			msg += fmt.Sprintf("; could not look for leftover processes: %v", err)
		default:
			msg += fmt.Sprintf("; ended %d leftover process(es)", n)
		}
	}
	spec := filepath.Join(h.stateDir, protocol.SpecFile)
	if h.pid == 0 {
		msg = "supervisor never started: no pid file and no exit record"
		// A spec this fresh may belong to a Start still in progress.
		if st, err := os.Stat(spec); err == nil && time.Since(st.ModTime()) < 10*time.Second {
			spec = ""
		}
	}
	if spec != "" {
		os.Remove(spec) // it may hold secrets and nobody will read it now
	}
	return sandbox.Exit{Lost: true, Error: msg, EndedAt: time.Now()}
}

// Stop asks the supervisor to end the run (SIGTERM to the tree, grace,
// SIGKILL) and waits until it has, or ctx ends. grace 0 means the spec's.
func (h *handle) Stop(ctx context.Context, grace time.Duration) error {
	if h.ended() || protocol.Exists(filepath.Join(h.stateDir, protocol.ExitFile)) {
		return nil
	}
	if err := protocol.WriteJSON(filepath.Join(h.stateDir, protocol.StopFile), protocol.StopRequest{Grace: grace}, false); err != nil {
		return fmt.Errorf("stop run: %w", err)
	}
	if err := h.signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("stop run: signal supervisor %d: %w", h.pid, err)
	}
	select {
	case <-h.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stats samples the run's live process tree (the supervisor excluded).
func (h *handle) Stats(ctx context.Context) (sandbox.Stats, error) {
	if h.ended() || h.pid == 0 {
		return sandbox.Stats{}, errEnded
	}
	return proc.Sample(ctx, proc.Descendants(h.pid)), nil
}

var errEnded = errors.New("run has ended")

func (h *handle) ended() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}
