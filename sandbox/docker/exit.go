package docker

import (
	"context"
	"fmt"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/runlog"
)

// finish waits for the container to stop and its output to be copied,
// then records the exit, removes the container and releases Wait.
func (h *handle) finish(logsDone <-chan struct{}) {
	ctx := h.bg
	h.waitStopped(ctx)
	<-logsDone
	// The follow stream ends when the container stops; one more pass from
	// the cursor picks up anything it did not deliver before that.
	if err := copyLogs(ctx, h.cli, h.id, false, h.w, h.cur); err != nil && !cerrdefs.IsNotFound(err) {
		h.w.Write(runlog.Meta, fmt.Appendf(nil, "copying container output: %v\n", err))
	}
	if err := h.cur.finishTails(ctx, h.cli, h.id, h.w); err != nil {
		h.w.Write(runlog.Meta, fmt.Appendf(nil, "copying container output: %v\n", err))
	}
	h.mu.Lock()
	if h.timer != nil {
		h.timer.Stop()
	}
	peak, cpu := h.peak, h.cpu
	h.mu.Unlock()

	var e sandbox.Exit
	c, err := h.cli.ContainerInspect(ctx, h.id)
	if err != nil || c.State == nil {
		e = sandbox.Exit{Lost: true, Error: fmt.Sprintf("container %s disappeared before its exit was recorded: %v", short(h.id), err), EndedAt: time.Now()}
	} else {
		e = composeExit(c.State, h.st.get(), peak, cpu)
	}
	serr := h.st.update(func(r *runState) { r.Exit = &e })
	if serr != nil {
		h.w.Write(runlog.Meta, fmt.Appendf(nil, "%v\n", serr))
	}
	cerr := h.w.Close()
	if cerr != nil && e.Error == "" {
		e.Error = cerr.Error()
	}
	// Only once the output is on disk and the exit recorded is the
	// container (and the driver's copy of its output) expendable.
	if serr == nil && cerr == nil && !h.spec.KeepContainer && !h.sb.opts.KeepContainers {
		h.cli.ContainerRemove(ctx, h.id, container.RemoveOptions{Force: true})
	}
	h.exit = e
	h.cancel()
	close(h.done)
}

// waitStopped returns once the container is not running (or gone).
func (h *handle) waitStopped(ctx context.Context) {
	for {
		waitC, errC := h.cli.ContainerWait(ctx, h.id, container.WaitConditionNotRunning)
		select {
		case <-waitC:
			return
		case err := <-errC:
			if cerrdefs.IsNotFound(err) {
				return
			}
		}
		c, err := h.cli.ContainerInspect(ctx, h.id)
		if cerrdefs.IsNotFound(err) || err == nil && c.State != nil && !c.State.Running {
			return
		}
		time.Sleep(500 * time.Millisecond) // the daemon is restarting; try again
	}
}

// composeExit maps the container's final state and runbox's notes about
// the run to an exit record, as the process backend would write it.
func composeExit(cs *container.State, rs runState, peak uint64, cpu float64) sandbox.Exit {
	e := sandbox.Exit{Code: cs.ExitCode, OOMKilled: cs.OOMKilled}
	e.StartedAt, _ = time.Parse(time.RFC3339Nano, cs.StartedAt)
	e.EndedAt, _ = time.Parse(time.RFC3339Nano, cs.FinishedAt)
	if e.EndedAt.Before(e.StartedAt) {
		// Docker stamps StartedAt once start returns; a command that ends
		// at once can be seen finishing a moment "before" that.
		e.EndedAt = e.StartedAt
	}
	e.Usage.WallSeconds = e.EndedAt.Sub(e.StartedAt).Seconds()
	e.Usage.PeakRSSBytes, e.Usage.CPUSeconds = peak, cpu
	switch rs.Phase {
	case phaseSetupFailed:
		e.Code, e.SetupFailed = rs.SetupCode, true
	case phaseSetup:
		if rs.StopReason == "" {
			e.Lost = true
			e.Error = "runbox stopped while setup commands ran, so the command never started"
		}
		e.SetupFailed = true
	}
	e.Signal = signalName(e.Code)
	if cs.Error != "" && e.Error == "" {
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
