package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/runbox/runbox/sandbox"
)

// watch follows the job until it ends: its output files every outPoll,
// its state every Poll. A controller that does not answer is waited out
// (the job keeps running on its node and its files keep growing); only
// Slurm's own end state ends the run.
func (h *handle) watch() {
	outPoll := min(h.sb.opts.Poll, outputPoll)
	t := time.NewTicker(outPoll)
	defer t.Stop()
	ctx := context.Background()
	var last time.Time
	var downSince time.Time
	for {
		if err := h.drain(); err != nil {
			h.say("following the job's output: " + err.Error())
		}
		if time.Since(last) >= h.sb.opts.Poll {
			last = time.Now()
			j, err := h.sb.q.lookup(ctx, h.ref())
			switch {
			case errors.Is(err, errGone):
				h.finish(h.gone(ctx))
				return
			case err != nil:
				if downSince.IsZero() {
					downSince = time.Now()
				}
				h.say(fmt.Sprintf("controller unreachable since %s, waiting (the job keeps its place): %v",
					downSince.Format(time.TimeOnly), firstLine(err.Error())))
			default:
				downSince = time.Time{}
				if j.Name != h.name {
					h.finish(sandbox.Exit{Lost: true, Error: fmt.Sprintf(
						"Slurm job id %s now belongs to another job (%q): ours is gone", h.ref(), j.Name)})
					return
				}
				h.mu.Lock()
				h.lastSeen = j
				h.mu.Unlock()
				if j.ended() {
					h.finish(h.exitOf(j))
					return
				}
				h.state(ctx, j)
			}
		}
		select {
		case <-t.C:
		case <-h.stopSignal:
			last = time.Time{} // look at the job now
		}
	}
}

// state reports a live job's state and gives up on one queued too long.
func (h *handle) state(ctx context.Context, j job) {
	switch j.State {
	case "PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD":
		what := "queued in Slurm as job " + j.key() + ": " + j.State
		if j.Reason != "" && j.Reason != "None" {
			what += " (" + j.Reason + ")"
		}
		if j.Restarts > 0 {
			what += fmt.Sprintf(", requeued %d time(s)", j.Restarts)
		}
		h.say(what)
		sl := h.spec.Slurm
		r := h.rec.get()
		if sl != nil && sl.QueueTimeout > 0 && r.StartedAt.IsZero() && r.StopReason == "" &&
			time.Since(r.Submitting) > sl.QueueTimeout {
			h.say(fmt.Sprintf("still %s after %s: giving up (--queue-timeout)", j.State+" ("+j.Reason+")", sl.QueueTimeout))
			go h.stop(ctx, stopQueueTimeout, time.Second)
		}
	default: // RUNNING, COMPLETING, SUSPENDED, STAGE_OUT, ...
		h.markStarted(j)
		what := "job " + j.key() + " " + j.State
		if j.Nodes != "" {
			what += " on " + j.Nodes
		}
		h.say(what)
	}
}

// gone is the end of a job the controller no longer holds (MinJobAge
// passed while no daemon watched): accounting tells how it ended, else
// the run says what is known rather than guessing.
func (h *handle) gone(ctx context.Context) sandbox.Exit {
	if r := h.rec.get(); r.StopReason != "" && r.StartedAt.IsZero() && h.task >= 0 {
		// runbox cancelled this array task while it was pending, and
		// Slurm keeps no record of a pending task it cancelled alone.
		return h.exitOf(job{ID: h.jobID, ArrayID: h.jobID, Task: h.task, Name: h.name, State: "CANCELLED"})
	}
	j, ok, err := accounting(ctx, h.sb.command, h.ref())
	if ok && j.ended() && (j.Name == "" || j.Name == h.name) {
		return h.exitOf(j)
	}
	h.mu.Lock()
	seen := h.lastSeen
	h.mu.Unlock()
	what := "never seen by this daemon"
	if seen.State != "" {
		what = "last seen " + seen.State
	}
	why := "no accounting record"
	if err != nil {
		why = "no accounting: " + firstLine(err.Error())
	}
	return sandbox.Exit{Lost: true, Error: fmt.Sprintf(
		"Slurm job %s is no longer known to the controller (%s; %s): how it ended is unknown", h.ref(), why, what)}
}

// exitOf maps Slurm's end state onto runbox's exit record.
func (h *handle) exitOf(j job) sandbox.Exit {
	e := sandbox.Exit{StartedAt: j.Start, EndedAt: j.End, Code: j.Code}
	if j.Signal != 0 {
		e.Code = 128 + j.Signal
		e.Signal = sigName(j.Signal)
	}
	r := h.rec.get()
	where := ""
	if j.Nodes != "" {
		where = " on node " + j.Nodes
	}
	switch j.State {
	case "COMPLETED":
	case "FAILED":
		if e.Code == 0 {
			// Ended badly with no code: launch failure, killed node-side.
			e.Error = fmt.Sprintf("Slurm job %s FAILED%s (%s)", j.key(), where, j.Reason)
		}
	case "OUT_OF_MEMORY":
		e.OOMKilled, e.Code, e.Signal = true, 137, "SIGKILL"
	case "TIMEOUT", "DEADLINE":
		e.TimedOut = true
		if j.Signal == 0 {
			e.Code, e.Signal = 143, "SIGTERM"
		}
	case "CANCELLED":
		// A job cancelled while PENDING has no signal and Slurm gives it
		// a start time equal to its end: it never ran.
		neverRan := r.StartedAt.IsZero() && j.Signal == 0 && (j.Start.IsZero() || !j.End.After(j.Start))
		if neverRan {
			e.StartedAt = time.Time{}
		}
		// Only runbox's own Stop (StopReason, below) makes this a run its
		// user stopped. Otherwise the job was cancelled behind runbox's
		// back: scancel by its owner or an administrator, or Slurm itself
		// (a reservation ending, a dependency that can never be met).
		// Slurm does not say who without accounting, so the reason says
		// what is known.
		if r.StopReason != "" {
			e.Cancelled = true
			if e.Code == 0 {
				e.Code = 130
			}
			break
		}
		when := "while it ran" + where
		if neverRan {
			when = "in Slurm's queue, before it started"
		}
		if e.Code == 0 {
			e.Code = 143 // it did not succeed; scancel's SIGTERM, if it ran
			if j.Signal == 0 && !r.StartedAt.IsZero() {
				e.Signal = "SIGTERM"
			}
		}
		e.Outside = fmt.Sprintf("Slurm job %s was cancelled outside runbox %s (scancel by its owner or an administrator, or Slurm itself); runbox did not stop it", j.key(), when)
	case "NODE_FAIL", "BOOT_FAIL":
		e.Error = fmt.Sprintf("Slurm %s%s", j.State, where)
	case "PREEMPTED":
		e.Error = fmt.Sprintf("Slurm preempted job %s%s and did not requeue it", j.key(), where)
	default:
		e.Error = fmt.Sprintf("Slurm ended job %s as %s (%s)", j.key(), j.State, j.Reason)
	}
	// The job's state is where Slurm records an OOM kill, when it
	// confines memory by cgroup; a SIGKILL under any other state came
	// from elsewhere.
	if !e.OOMKilled && e.Signal == "SIGKILL" && h.sb != nil {
		e.OOMChecked = h.sb.memByCgroup(context.Background())
	}
	if b, err := os.ReadFile(h.spec.StateDir + "/" + setupFailed); err == nil {
		e.SetupFailed = true
		e.Code, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	switch r.StopReason {
	case stopCancelled:
		e.Cancelled, e.TimedOut, e.OOMKilled, e.Error, e.Outside = true, false, false, "", ""
	case stopQueueTimeout:
		e.Cancelled, e.Outside = false, ""
		e.Error = fmt.Sprintf("Slurm job %s was still %s (%s) after --queue-timeout %s; cancelled", j.key(), "PENDING", h.lastReason(), h.spec.Slurm.QueueTimeout)
	}
	return e
}

func (h *handle) lastReason() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lastSeen.Reason != "" {
		return h.lastSeen.Reason
	}
	return "reason unknown"
}

func sigName(n int) string {
	s := syscall.Signal(n)
	names := map[syscall.Signal]string{syscall.SIGKILL: "SIGKILL", syscall.SIGTERM: "SIGTERM",
		syscall.SIGINT: "SIGINT", syscall.SIGSEGV: "SIGSEGV", syscall.SIGABRT: "SIGABRT",
		syscall.SIGBUS: "SIGBUS", syscall.SIGHUP: "SIGHUP", syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2"}
	if v, ok := names[s]; ok {
		return v
	}
	return "SIG" + strconv.Itoa(n)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// outputPoll is how often the job's output files are read: a stat-sized
// cost per file, and the floor of the latency from the job's first line
// to `runbox run`'s (the client's own stream polls every 25ms too).
const outputPoll = 25 * time.Millisecond
