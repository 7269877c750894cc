package slurm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/runlog"
)

// defaultGrace is used when neither Stop nor the spec gives one.
const defaultGrace = 10 * time.Second

// handle is one submitted job. Everything but Wait's result lives in
// Slurm, the submit record and the files in the state dir, so Recover
// can rebuild it.
type handle struct {
	sb    *Sandbox
	spec  sandbox.Spec
	jobID int64
	// task is the run's task in array jobID (-1: the job is the run's
	// own); name is the job's name (the array's, for a task).
	task int
	name string
	rec  *recordFile
	w    *runlog.Writer
	// outs are the job's output files, each followed into its stream from
	// the offset the log already holds.
	outs []*output

	started chan struct{} // closed once the job left PENDING (or ended)
	done    chan struct{}
	exit    sandbox.Exit

	mu         sync.Mutex
	report     func(string)
	reason     string // last reason reported
	lastSeen   job
	startOnce  sync.Once
	stopSignal chan struct{} // closed by Stop: look at the job now
	stopOnce   sync.Once
	// arrayStopped: stopArray cancelled the whole array (this task with
	// it); a Stop after it has nothing left to do.
	arrayStopped bool
}

type output struct {
	path   string
	stream runlog.Stream
	off    int64
}

func (s *Sandbox) newHandle(spec sandbox.Spec, id int64, rf *recordFile, w *runlog.Writer, sum runlog.Summary) *handle {
	r := rf.get()
	h := &handle{sb: s, spec: spec, jobID: id, task: -1, name: r.JobName, rec: rf, w: w,
		started: make(chan struct{}), done: make(chan struct{}), stopSignal: make(chan struct{})}
	if h.name == "" {
		h.name = jobName(spec.RunID)
	}
	if r.Task != nil {
		h.task = *r.Task
		s.trackTask(h)
	}
	for _, o := range []struct {
		name string
		s    runlog.Stream
	}{{setupOutFile, runlog.SetupStdout}, {setupErrFile, runlog.SetupStderr}, {stdoutFile, runlog.Stdout}, {stderrFile, runlog.Stderr}} {
		h.outs = append(h.outs, &output{path: filepath.Join(spec.StateDir, o.name), stream: o.s, off: sum.Bytes[o.s]})
	}
	return h
}

// doneHandle is a run that had ended before this process saw it.
func doneHandle(id int64, task *int, e sandbox.Exit) *handle {
	h := &handle{jobID: id, task: -1, exit: e, done: make(chan struct{}), started: make(chan struct{})}
	if task != nil {
		h.task = *task
	}
	close(h.done)
	close(h.started)
	return h
}

// StartedAt is when the job left Slurm's queue, zero while it has not
// (host's startTimer: a daemon that re-attaches keeps the true start).
func (h *handle) StartedAt() time.Time {
	if h.rec == nil {
		return h.exit.StartedAt
	}
	return h.rec.get().StartedAt
}

func (h *handle) Ref() string { return "slurm:" + h.ref() }

// ref is the job as Slurm's commands name it: "123", or "123_4" for a
// task of an array.
func (h *handle) ref() string {
	if h.task >= 0 {
		return taskKey(h.jobID, h.task)
	}
	return strconv.FormatInt(h.jobID, 10)
}

func (h *handle) Wait(ctx context.Context) (sandbox.Exit, error) {
	select {
	case <-h.done:
		return h.exit, nil
	case <-ctx.Done():
		return sandbox.Exit{}, ctx.Err()
	}
}

// Started implements sandbox.Queued.
func (h *handle) Started(ctx context.Context, report func(string)) error {
	h.mu.Lock()
	h.report = report
	reason := h.reason
	h.mu.Unlock()
	if reason != "" && report != nil {
		report(reason)
	}
	select {
	case <-h.started:
		return nil
	case <-h.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// say reports a changed reason to the engine and notes it in the log.
func (h *handle) say(reason string) {
	h.mu.Lock()
	if reason == h.reason {
		h.mu.Unlock()
		return
	}
	h.reason = reason
	report := h.report
	h.mu.Unlock()
	h.w.Write(runlog.Meta, []byte("slurm: "+reason+"\n"))
	if report != nil {
		report(reason)
	}
}

func (h *handle) Stats(ctx context.Context) (sandbox.Stats, error) {
	select {
	case <-h.done:
		return sandbox.Stats{}, errors.New("run has ended")
	default:
	}
	return sandbox.Stats{}, fmt.Errorf("slurm job %s: live resource samples are not collected (sstat needs accounting)", h.ref())
}

// Stop cancels the job: a pending one at once; a running one gets SIGTERM
// (batch script and steps), grace, then scancel's own TERM/KILL sequence.
func (h *handle) Stop(ctx context.Context, grace time.Duration) error {
	return h.stop(ctx, stopCancelled, grace)
}

func (h *handle) stop(ctx context.Context, reason string, grace time.Duration) error {
	select {
	case <-h.done:
		return nil
	default:
	}
	h.mu.Lock()
	whole := h.arrayStopped
	h.mu.Unlock()
	if whole {
		return nil // cancelled with its array (stopArray)
	}
	if grace <= 0 {
		grace = h.spec.Grace
	}
	if grace <= 0 {
		grace = defaultGrace
	}
	if err := h.rec.update(func(r *record) {
		if r.StopReason == "" {
			r.StopReason = reason
		}
	}); err != nil {
		return err
	}
	id := h.ref() // an array's task: only this one
	select {
	case <-h.started:
		if _, err := h.sb.command(ctx, "scancel", "--full", "--signal=TERM", id); err != nil {
			return h.hardCancel(ctx, id, err)
		}
		h.stopOnce.Do(func() { close(h.stopSignal) })
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-h.done:
			return nil
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	default:
	}
	return h.hardCancel(ctx, id, nil)
}

func (h *handle) hardCancel(ctx context.Context, id string, prev error) error {
	_, err := h.sb.command(ctx, "scancel", id)
	h.stopOnce.Do(func() { close(h.stopSignal) })
	if err != nil {
		return fmt.Errorf("scancel job %s: %w", id, errors.Join(prev, err))
	}
	return nil
}

// drain copies what the job's output files gained into the run log.
func (h *handle) drain() error {
	buf := make([]byte, runlog.MaxPayload)
	for _, o := range h.outs {
		f, err := os.Open(o.path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("open job output: %w", err)
		}
		for {
			n, rerr := f.ReadAt(buf, o.off)
			if n > 0 {
				if err := h.w.Write(o.stream, buf[:n]); err != nil {
					f.Close()
					return err
				}
				o.off += int64(n)
			}
			if rerr == io.EOF || n == 0 {
				break
			}
			if rerr != nil {
				f.Close()
				return fmt.Errorf("read job output: %w", rerr)
			}
		}
		f.Close()
	}
	return nil
}

func (h *handle) markStarted(j job) {
	h.startOnce.Do(func() {
		if j.Start.IsZero() {
			j.Start = time.Now()
		}
		// Recorded before started is closed: StartedAt, read once
		// Started returns, tells a started job from one that ended in
		// the queue.
		h.rec.update(func(r *record) {
			if r.StartedAt.IsZero() {
				r.StartedAt = j.Start
			}
		})
		close(h.started)
	})
}

// finish writes the exit record (synced, in the submit record) and ends
// the handle.
func (h *handle) finish(e sandbox.Exit) {
	h.drain()
	if e.EndedAt.IsZero() {
		e.EndedAt = time.Now()
	}
	if st := h.rec.get().StartedAt; e.StartedAt.IsZero() && !st.IsZero() {
		e.StartedAt = st
	}
	if !e.StartedAt.IsZero() {
		e.Usage.WallSeconds = e.EndedAt.Sub(e.StartedAt).Seconds()
	}
	if err := h.w.Close(); err != nil && e.Error == "" {
		e.Error = "write log: " + err.Error()
	}
	if err := h.rec.update(func(r *record) { ex := e; r.Exit = &ex }); err != nil && e.Error == "" {
		e.Error = err.Error()
	}
	removeEnvFile(h.spec.StateDir) // start.go: the env's secrets end with the run
	if h.task >= 0 {
		h.sb.untrackTask(h)
	}
	h.exit = e
	h.startOnce.Do(func() { close(h.started) })
	close(h.done)
}

// HoldIfQueued holds the job (or array task) in Slurm's queue if it has
// not started, and says whether it had not: --max-failures cancels only
// members not yet started. Asking squeue first and cancelling after left
// a window in which Slurm could start the task (a failed member frees
// its array's slot just then) and the cancel cut it short; a held task
// cannot start, so the caller's cancel finds it where the answer said.
// A hold reaches a running job too (it only zeroes its priority), so one
// found running is released again. A job the controller no longer
// holds, or an answer that cannot be read, is not queued.
func (h *handle) HoldIfQueued(ctx context.Context) bool {
	select {
	case <-h.started:
		return false
	case <-h.done:
		return false
	default:
	}
	id := h.ref()
	if _, err := h.sb.command(ctx, "scontrol", "uhold", id); err != nil {
		return false // ended, or no longer known
	}
	out, err := h.sb.command(ctx, "squeue", "-h", "-r", "-j", id, "-o", "%T")
	if err == nil && strings.TrimSpace(string(out)) == "PENDING" {
		return true
	}
	if _, err := h.sb.command(ctx, "scontrol", "release", id); err != nil {
		h.say("could not release Slurm's hold on job " + id + ": " + firstLine(err.Error()))
	}
	return false
}
