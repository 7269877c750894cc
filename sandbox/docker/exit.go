package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/supervisor"
	"github.com/runbox/runbox/sandbox/runlog"
)

// run waits for the container to stop, then records the exit, removes
// the container and releases Wait.
func (h *handle) run() {
	code, ok := h.waitStopped(h.bg)
	h.finish(code, ok)
}

// finish takes the exit record the container's init wrote (adding the
// OOM kill, which only Docker sees: the limit is on the whole container),
// or, when the init died without one, makes it from Docker's view.
func (h *handle) finish(code int64, codeOK bool) {
	ctx := h.bg
	rs := h.st.get()
	var state *container.State
	ierr := errors.New("removed by docker as it exited")
	if !h.auto {
		var c container.InspectResponse
		if c, ierr = h.cli.ContainerInspect(ctx, h.id); ierr == nil {
			state = c.State
		}
	} else if codeOK {
		state = &container.State{ExitCode: int(code), FinishedAt: time.Now().Format(time.RFC3339Nano)}
	}
	e, err := supervisor.ReadExit(h.box)
	switch {
	case err == nil:
		if state != nil && state.OOMKilled {
			e.OOMKilled = true
		}
		// Docker watches the container's cgroup for OOM kills; an
		// inspected state that says none is evidence (an auto-removed
		// container's state is made up here, so it says nothing).
		e.OOMChecked = !h.auto && state != nil && !e.OOMKilled
	case state == nil:
		e = sandbox.Exit{Lost: true, Error: fmt.Sprintf("container %s disappeared before its exit was recorded: %v", short(h.id), ierr), EndedAt: time.Now()}
	default:
		e = composeExit(state, rs)
		if !e.OOMKilled && rs.StopReason == "" {
			e.Error = fmt.Sprintf("the container's init ended without an exit record (container exit code %d)", state.ExitCode)
		}
		note(h.spec.LogPath, e)
	}
	serr := h.st.update(func(r *runState) { r.Exit = &e })
	// Only once the exit is recorded is the container expendable (an
	// auto-removed one is gone already).
	if serr == nil && !h.auto && !h.spec.KeepContainer && !h.sb.opts.KeepContainers {
		h.cli.ContainerRemove(ctx, h.id, container.RemoveOptions{Force: true})
	}
	if rs.Pooled && serr == nil {
		os.RemoveAll(h.box) // the log is the run's own file; the link goes
	}
	if serr != nil && e.Error == "" {
		e.Error = serr.Error()
	}
	h.exit = e
	h.cancel()
	close(h.done)
}

// note says in the run log why its end was made up, after whatever the
// dead init wrote (a torn last record is cut).
func note(logPath string, e sandbox.Exit) {
	w, err := runlog.Create(logPath)
	if err != nil {
		return
	}
	msg := e.Error
	if msg == "" {
		msg = fmt.Sprintf("the container was killed (exit code %d)", e.Code)
	}
	w.Write(runlog.Meta, []byte(msg+"\n"))
	w.Close()
}

// waitStopped returns once the container is not running (or gone).
// An auto-removed container is waited for until it is gone, so that a
// finished run leaves nothing; code is its exit status when Docker said.
func (h *handle) waitStopped(ctx context.Context) (code int64, ok bool) {
	cond := container.WaitConditionNotRunning
	if h.auto {
		cond = container.WaitConditionRemoved
	}
	for {
		// Docker's wait is the notification; a look every waitCheck is
		// the safety net for a wake-up it loses (CI saw a wait on a
		// container that was gone block for 19 minutes).
		wctx, cancel := context.WithTimeout(ctx, waitCheck)
		waitC, errC := h.cli.ContainerWait(wctx, h.id, cond)
		select {
		case r := <-waitC:
			cancel()
			return r.StatusCode, r.Error == nil
		case err := <-errC:
			cancel()
			if cerrdefs.IsNotFound(err) {
				return 0, false
			}
		}
		c, err := h.cli.ContainerInspect(ctx, h.id)
		if cerrdefs.IsNotFound(err) {
			return 0, false
		}
		if err == nil && c.State != nil && !c.State.Running && !h.auto {
			return int64(c.State.ExitCode), true
		}
		if err != nil {
			time.Sleep(500 * time.Millisecond) // the daemon is restarting; try again
		}
	}
}

// waitCheck bounds one Docker wait before the container is looked at.
const waitCheck = 10 * time.Second

// composeExit maps the container's final state and runbox's notes about
// the run to an exit record, for a run whose init left none.
func composeExit(cs *container.State, rs runState) sandbox.Exit {
	e := sandbox.Exit{Code: cs.ExitCode, OOMKilled: cs.OOMKilled}
	e.StartedAt, _ = time.Parse(time.RFC3339Nano, cs.StartedAt)
	e.EndedAt, _ = time.Parse(time.RFC3339Nano, cs.FinishedAt)
	if e.EndedAt.Before(e.StartedAt) {
		e.EndedAt = e.StartedAt
	}
	e.Usage.WallSeconds = e.EndedAt.Sub(e.StartedAt).Seconds()
	e.Signal = signalName(e.Code)
	if cs.Error != "" {
		e.Error = cs.Error
	}
	switch rs.StopReason {
	case reasonTimedOut:
		e.TimedOut = true
	case reasonCancelled:
		e.Cancelled = true
	}
	return e
}

// linuxSignals names the signals of a Linux container (numbers differ on
// the host when it is not Linux, so the host's tables cannot be used).
var linuxSignals = [...]string{1: "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS",
	"SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM", "SIGSTKFLT",
	"SIGCHLD", "SIGCONT", "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGXCPU", "SIGXFSZ",
	"SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO", "SIGPWR", "SIGSYS"}

// signalName maps an exit status of 128+n to signal n's name: the init
// process and shells report a child killed by signal n that way.
func signalName(code int) string {
	if n := code - 128; n > 0 && n < len(linuxSignals) {
		return linuxSignals[n]
	}
	return ""
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
