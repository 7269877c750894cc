package process

import (
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/runbox/runbox/sandbox/process/internal/protocol"
)

// A standby supervisor is the runbox binary started before it is needed
// (`runbox __supervise --standby`), blocked reading the state directory of
// its run from fd 4 (its control pipe). Start hands a run to it by writing
// the directory there, so the cost of starting the binary is paid while
// nobody waits. When the run has ended the supervisor says "idle" on its
// ready pipe and waits for the next directory: it goes back to being the
// standby (recycled), in place of one started while the run went on. A
// short run thus costs no process start at all. If the process holding
// the control pipe (the daemon) goes away, the supervisor reads EOF and
// exits once its run, if any, is over: it never outlives its daemon
// without a run.

// refillDelay bounds how long a run's start waits to start the next
// standby (see begin).
const refillDelay = 50 * time.Millisecond

type standby struct {
	kind    superKind
	proc    *superProc
	ready   *readyReader
	control *os.File // write end of its control pipe (fd 4 in the standby)
}

// begin starts a run's supervisor: the standby when one is waiting
// (sb is then that standby, to be recycled or released once the run has
// ended), otherwise a fresh one.
func (s *Sandbox) begin(exe, dir string, k superKind) (h *handle, ready *readyReader, sb *standby, err error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if !s.opts.Standby || closed {
		h, ready, err = s.launch(exe, dir, k)
		return h, ready, nil, err
	}
	// A standby is started once this run's supervisor has settled (it was
	// recycled, so usually none is needed, or it exited) or after
	// refillDelay, whichever is first: its start-up does not compete for
	// the CPU with a short run, and a long run does not keep other runs
	// from finding one.
	defer func() {
		var settled <-chan struct{}
		if h != nil {
			settled = h.settled
		}
		go func() {
			t := time.NewTimer(refillDelay)
			defer t.Stop()
			select {
			case <-settled:
			case <-t.C:
			}
			s.fillStandby(exe, k)
		}()
	}()
	if sb := s.takeStandby(k); sb != nil {
		if _, err := io.WriteString(sb.control, protocol.RunMsg(dir)); err == nil {
			return sb.proc.handle(dir), sb.ready, sb, nil
		}
		sb.release() // it died while waiting; start a fresh one
	}
	h, ready, err = s.launch(exe, dir, k)
	return h, ready, nil, err
}

// follow watches a started run's ready pipe after its "ok": "exited" ends
// the run's handle; then a standby's "idle" makes it the standby again
// (recycle). Anything else (EOF: the supervisor is exiting) lets it go.
// h.settled closes once that is decided.
func (s *Sandbox) follow(h *handle, ready *readyReader, sb *standby) {
	defer close(h.settled)
	if !h.takeExited(ready.next()) {
		ready.f.Close()
		if sb != nil {
			sb.control.Close()
		}
		return
	}
	// "exited RECORD" comes before the record's file is in place; what
	// follows it ("idle", or EOF as the supervisor exits) comes after.
	var next string
	if h.exit != nil {
		close(h.announced)
		next = ready.next()
	}
	close(h.recorded)
	if sb == nil {
		ready.f.Close()
		return
	}
	if h.exit == nil {
		next = ready.next()
	}
	if next == protocol.IdleMsg && s.recycle(sb) {
		return
	}
	sb.release()
}

// recycle makes sb, whose run has ended, the standby. One started
// meanwhile (the run outlasted refillDelay) is let go instead: sb has run
// a whole run, so its code is paged in and its caches are built, where a
// fresh standby has only warmed up.
func (s *Sandbox) recycle(sb *standby) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if old := s.standby[sb.kind]; old != nil {
		old.release()
	}
	sb.proc.serving("") // between runs: a late Stop signals nobody
	s.standby[sb.kind] = sb
	return true
}

// neverTookRun reports, once the supervisor h has exited, whether it died
// before reading the run's spec (so no part of the run happened).
func neverTookRun(h *handle, dir string) bool {
	<-h.exited()
	return protocol.HasSpec(dir) && !protocol.Exists(filepath.Join(dir, protocol.PidFile)) && !protocol.Exists(filepath.Join(dir, protocol.ExitFile))
}

func (s *Sandbox) takeStandby(k superKind) *standby {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.standby[k]
	s.standby[k] = nil
	return sb
}

// fillStandby starts a standby unless one is waiting or being started.
// The binary is exec'd outside the lock, so a concurrent Start never waits
// on it.
func (s *Sandbox) fillStandby(exe string, k superKind) {
	s.mu.Lock()
	if s.standby[k] != nil || s.filling[k] || s.closed {
		s.mu.Unlock()
		return
	}
	s.filling[k] = true
	s.mu.Unlock()
	sb := startStandby(exe, s.opts.Args, k)
	s.mu.Lock()
	s.filling[k] = false
	if (s.closed || s.standby[k] != nil) && sb != nil {
		sb.release() // closed, or recycled one, while it was starting
		sb = nil
	}
	if sb != nil {
		s.standby[k] = sb
	}
	s.mu.Unlock()
}

func startStandby(exe string, prefix []string, k superKind) *standby {
	cr, cw, err := os.Pipe()
	if err != nil {
		return nil
	}
	defer cr.Close()
	p, ready, err := startSupervisor(exe, append(append([]string{}, prefix...), protocol.StandbyArg), nil, cr, k)
	if err != nil {
		cw.Close()
		return nil
	}
	return &standby{kind: k, proc: p, ready: ready, control: cw}
}

// Close lets a waiting standby supervisor go (it exits) and starts no
// more; runs already started are not affected. The Sandbox may still start
// runs afterwards, each with a freshly started supervisor.
func (s *Sandbox) Close() error {
	s.mu.Lock()
	s.closed = true
	sbs := s.standby
	s.standby = [nKinds]*standby{}
	s.mu.Unlock()
	for _, sb := range sbs {
		if sb != nil {
			sb.release()
		}
	}
	return nil
}

// release lets a standby go: it reads EOF and exits (after its run, if
// it is serving one).
func (sb *standby) release() {
	sb.control.Close()
	sb.ready.f.Close()
}
