package process

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/runbox/runbox/sandbox"
)

// A standby supervisor is the runbox binary started before it is needed
// (`runbox __supervise --standby`), blocked reading the state directory of
// its run from fd 4. Start hands a run to it by writing the directory and
// closing the pipe, then starts the next standby in the background, so the
// cost of starting the binary is paid while nobody waits. If the process
// holding the write end (the daemon) goes away, the standby reads EOF and
// exits: it never outlives its daemon without a run.

const (
	standbyArg  = "--standby"
	controlFD   = 4
	refillDelay = 50 * time.Millisecond
)

type standby struct {
	h       *handle
	ready   *os.File // read end of its ready pipe (fd 3 in the standby)
	control *os.File // write end of its control pipe (fd 4 in the standby)
}

// begin starts a run's supervisor: the standby when one is waiting
// (standby reports that), otherwise a fresh one.
func (s *Sandbox) begin(exe, dir string) (h *handle, ready *os.File, standby bool, err error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if !s.opts.Standby || closed {
		h, ready, err = s.launch(exe, dir)
		return h, ready, false, err
	}
	// The next standby starts once this run has ended or after
	// refillDelay, whichever is first: its start-up does not compete for
	// the CPU with a short run, and back-to-back short runs still find
	// one (already exec'd, if not yet through its start-up: the run's
	// directory waits in its pipe).
	defer func() {
		var ended <-chan struct{}
		if h != nil {
			ended = h.done
		}
		go func() {
			t := time.NewTimer(refillDelay)
			defer t.Stop()
			select {
			case <-ended:
			case <-t.C:
			}
			s.fillStandby(exe)
		}()
	}()
	if sb := s.takeStandby(); sb != nil {
		_, err := fmt.Fprintf(sb.control, "%s\n", dir)
		sb.control.Close()
		if err == nil {
			sb.h.stateDir = dir
			return sb.h, sb.ready, true, nil
		}
		sb.ready.Close() // it died while waiting; start a fresh one
	}
	h, ready, err = s.launch(exe, dir)
	return h, ready, false, err
}

// neverTookRun reports, once the supervisor h has exited, whether it died
// before reading the run's spec (so no part of the run happened).
func neverTookRun(h *handle, dir string) bool {
	<-h.exited()
	return exists(filepath.Join(dir, specFile)) && !exists(filepath.Join(dir, pidFile)) && !exists(filepath.Join(dir, exitFile))
}

func (s *Sandbox) takeStandby() *standby {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.standby
	s.standby = nil
	return sb
}

// fillStandby starts a standby unless one is waiting or being started.
// The binary is exec'd outside the lock, so a concurrent Start never waits
// on it.
func (s *Sandbox) fillStandby(exe string) {
	s.mu.Lock()
	if s.standby != nil || s.filling || s.closed {
		s.mu.Unlock()
		return
	}
	s.filling = true
	s.mu.Unlock()
	sb := startStandby(exe, s.opts.Args)
	s.mu.Lock()
	s.filling = false
	if s.closed && sb != nil {
		sb.release() // closed while it was starting
		sb = nil
	}
	s.standby = sb
	s.mu.Unlock()
}

func startStandby(exe string, prefix []string) *standby {
	cr, cw, err := os.Pipe()
	if err != nil {
		return nil
	}
	defer cr.Close()
	h, ready, err := startSupervisor(exe, append(append([]string{}, prefix...), standbyArg), nil, cr)
	if err != nil {
		cw.Close()
		return nil
	}
	return &standby{h: h, ready: ready, control: cw}
}

// warmState is what a standby learns before its run arrives.
type warmState struct {
	selfStart uint64
}

// warmUp does, while the standby waits, the work of a run's first
// milliseconds that does not depend on the run: its own start time, and
// the first pass through the JSON codecs of the spec and the records
// (encoding/json builds its per-type codecs on first use). Everything
// else in a standby is still cold code the kernel pages in on first touch.
func warmUp() warmState {
	var w warmState
	w.selfStart, _ = procStart(os.Getpid())
	sample := boot{Spec: sandbox.Spec{
		RunID: "warm", Command: []string{"true"}, Env: []string{"A=1"}, Setup: []string{"true"},
		Assets: []sandbox.Asset{{Src: "/a", Dst: "a"}}, Timeout: time.Second,
	}}
	if b, err := json.Marshal(sample); err == nil {
		var back boot
		_ = json.Unmarshal(b, &back)
	}
	_, _ = json.Marshal(pidRecord{Pid: 1, Start: 1})
	_, _ = json.Marshal(sandbox.Exit{Code: 1, StartedAt: time.Now(), EndedAt: time.Now()})
	return w
}

// awaitRun is the standby's side: it blocks until its run's state
// directory arrives on fd 4 and moves its stderr to that run's
// supervisor.log. ok is false when the daemon went away first.
func awaitRun() (dir string, ok bool) {
	f := os.NewFile(controlFD, "control")
	if f == nil {
		return "", false
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	dir = strings.TrimSuffix(line, "\n")
	if err != nil || dir == "" {
		return "", false
	}
	logf, err := os.OpenFile(filepath.Join(dir, superLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, secretMode)
	if err == nil {
		_ = unix.Dup2(int(logf.Fd()), 2)
		logf.Close()
	}
	return dir, true
}

// Close lets a waiting standby supervisor go (it exits) and starts no
// more; runs already started are not affected. The Sandbox may still start
// runs afterwards, each with a freshly started supervisor.
func (s *Sandbox) Close() error {
	s.mu.Lock()
	s.closed = true
	sb := s.standby
	s.standby = nil
	s.mu.Unlock()
	if sb != nil {
		sb.release()
	}
	return nil
}

// release lets an unused standby go: it reads EOF and exits.
func (sb *standby) release() {
	sb.control.Close()
	sb.ready.Close()
}
