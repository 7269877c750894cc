package process

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/runbox/runbox/sandbox/process/confine"
	"github.com/runbox/runbox/sandbox/process/internal/protocol"
)

// superProc is a supervisor process started here. A standby serves one
// run after another; current is the state directory of the run it serves
// now, so a Stop for a run that has ended never signals the next one.
type superProc struct {
	pid     int
	reaped  chan struct{} // closed once this process has reaped it
	waitErr string        // how it exited; set before reaped closes
	sig     func(syscall.Signal) error

	mu      sync.Mutex
	current string
}

// serving records the run the supervisor serves from now on ("" none).
func (p *superProc) serving(dir string) {
	p.mu.Lock()
	p.current = dir
	p.mu.Unlock()
}

// handle is the handle of the run in dir, which p serves from now on.
func (p *superProc) handle(dir string) *handle {
	p.serving(dir)
	h := &handle{pid: p.pid, stateDir: dir, proc: p, announced: make(chan struct{}), recorded: make(chan struct{}), settled: make(chan struct{})}
	h.done = h.endedChan()
	h.signal = func(sig syscall.Signal) error {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.current != dir {
			return nil // that run has ended; p serves another or none
		}
		return p.sig(sig)
	}
	return h
}

// startSupervisor execs exe with args, in a session of its own, with
// stderr to errf (nil: /dev/null), the ready pipe's write end as
// protocol.ReadyFD and control as protocol.ControlFD (if set). It returns the process (reaped in the
// background) and the ready pipe's read end.
func startSupervisor(exe string, args []string, errf, control *os.File, k superKind) (*superProc, *readyReader, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	defer w.Close()
	// ExtraFiles[i] is fd 3+i in the child.
	files := make([]*os.File, protocol.ReadyFD-2, protocol.ControlFD-2)
	files[protocol.ReadyFD-3] = w
	if control != nil {
		files = files[:protocol.ControlFD-2]
		files[protocol.ControlFD-3] = control
	}
	cmd := &exec.Cmd{
		Path:        exe,
		Args:        append([]string{exe}, args...),
		ExtraFiles:  files,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if k == ownUserNS {
		confine.SupervisorUserNS(cmd.SysProcAttr)
	}
	if errf != nil {
		cmd.Stderr = errf
	}
	if err := cmd.Start(); err != nil {
		r.Close()
		return nil, nil, fmt.Errorf("start supervisor: %w", err)
	}
	p := &superProc{pid: cmd.Process.Pid, reaped: make(chan struct{})}
	p.sig = func(sig syscall.Signal) error {
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
			p.waitErr = err.Error()
		} else {
			p.waitErr = "exit status 0"
		}
		close(p.reaped)
	}()
	return p, &readyReader{f: r, br: bufio.NewReader(r)}, nil
}

// readyReader reads a supervisor's ready pipe, over all the runs it serves.
type readyReader struct {
	f  *os.File
	br *bufio.Reader
}

// next returns the next message, or "" at EOF or on an error.
func (r *readyReader) next() string {
	line, err := r.br.ReadString('\n')
	if err != nil {
		return ""
	}
	return line
}

// waitOK waits for the supervisor's "ok": the run is under way.
func (r *readyReader) waitOK(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { _ = r.f.SetReadDeadline(time.Now()) })
	line, err := r.br.ReadString('\n')
	if !stop() {
		return ctx.Err()
	}
	if line != protocol.ReadyMsg {
		if err == nil {
			err = fmt.Errorf("unexpected ready message %q", line)
		}
		return err
	}
	return nil
}
