package host

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/runbox/runbox/internal/tail"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/runlog"
	"github.com/runbox/runbox/sdk"
	"github.com/runbox/runbox/store"
)

// tailText is a failure tail as valid UTF-8 for the classifiers.
func tailText(t *tail.Buffer) string {
	var d runlog.TextDecoder
	return string(d.Decode(t.Bytes())) + string(d.Flush())
}

// classify asks the classifier plugins why the run ended as it did. Without
// plugins it still names the obvious codes so a run never ends unexplained.
func (r *runner) classify(ctx context.Context, run *store.Run, exit sandbox.Exit, smoke, stalled bool) *sdk.Failure {
	r.mu.Lock()
	in := sdk.ClassifyInput{
		ExitCode:        exit.Code,
		Signal:          exit.Signal,
		OOMKilled:       exit.OOMKilled,
		OOMChecked:      exit.OOMChecked,
		TimedOut:        exit.TimedOut,
		Cancelled:       exit.Cancelled,
		Stalled:         stalled,
		Smoke:           smoke,
		Sandbox:         run.Sandbox,
		Command:         run.Spec.Command,
		Limits:          limitsOf(run.Spec, stallOf(run)),
		StdoutTail:      tailText(r.tails[runlog.Stdout]),
		StderrTail:      tailText(r.tails[runlog.Stderr]),
		SandboxError:    exit.Error,
		PeakRSSBytes:    exit.Usage.PeakRSSBytes,
		DurationSeconds: exit.Usage.WallSeconds,
	}
	if exit.SetupFailed {
		in.StdoutTail = tailText(r.tails[runlog.SetupStdout])
		in.StderrTail = tailText(r.tails[runlog.SetupStderr])
	}
	sess := r.sess
	r.mu.Unlock()
	_, f := sess.Finish(ctx, &in)
	if exit.Outside != "" && !smoke && !stalled {
		f = outsideFailure(exit)
	}
	if ex, ok := r.e.cfg.Sandboxes[run.Sandbox].(sandbox.Explainer); ok {
		f = ex.Advise(run.Spec, f) // what the run's confinement had to do with it
	}
	if f != nil {
		name := cmp.Or(run.Short, run.ID)
		for i, s := range f.Suggestions {
			f.Suggestions[i] = runPlaceholder.ReplaceAllString(s, "${1}"+name)
		}
	}
	return f
}

// runPlaceholder is RUN after a runbox command in a suggestion
// (`runbox logs RUN`): a live run's failure names the run there, so the
// command can be copied as it is. A saved log's (analyze) keeps RUN.
var runPlaceholder = regexp.MustCompile(`(\brunbox [a-z]+ )RUN\b`)

// outsideFailure is the failure of a run its sandbox saw ended by
// something other than runbox (exit.Outside: a Slurm job cancelled with
// scancel by its owner or an administrator). That fact beats whatever the
// signal and output suggest. TERMINATED, not CANCELLED: CANCELLED means
// the user stopped it through runbox, and that would be untrue (it would
// also read, to the user and to retry logic, as a run nobody needs any
// more); TERMINATED is DESIGN's "SIGTERM not sent by runbox", which is
// how scancel ends a job (SIGTERM to its steps, SIGKILL after KillWait).
// A job that only the SIGKILL ended is KILLED, with the same reason.
func outsideFailure(exit sandbox.Exit) *sdk.Failure {
	f := &sdk.Failure{Code: sdk.CodeTerminated, Message: exit.Outside, Confidence: 0.9, Plugin: "runbox",
		Evidence: []string{fmt.Sprintf("exit %d", exit.Code)},
		Suggestions: []string{
			"ask whoever cancelled it why (your own scancel, another session, an administrator, a reservation's end)",
			"retry it if it should have finished: runbox retry RUN",
		}}
	if exit.Signal != "" {
		f.Evidence = []string{"ended by " + exit.Signal}
	}
	if exit.Signal == "SIGKILL" {
		f.Code = sdk.CodeKilled
	}
	return f
}

// Classify runs the classifier plugins over in, with a built-in fallback
// for the facts that need no plugin (cancelled, timed out, lost, sandbox
// errors) when no plugin answers.
func Classify(ctx context.Context, j Judge, in sdk.ClassifyInput) *sdk.Failure {
	if j != nil {
		if f := j.Classify(ctx, in); f != nil {
			return f
		}
	}
	return fallbackFailure(in)
}

func fallbackFailure(in sdk.ClassifyInput) *sdk.Failure {
	f := &sdk.Failure{Confidence: 0.3, Plugin: "runbox"}
	switch {
	case in.Cancelled:
		f.Code, f.Message = sdk.CodeCancelled, "the run was stopped by the user"
	case in.TimedOut:
		f.Code, f.Message, f.Retryable = sdk.CodeTimeout, fmt.Sprintf("the run exceeded its %gs timeout", in.Limits.TimeoutSeconds), true
	case in.Stalled:
		f.Code, f.Message = sdk.CodeStalled, "the run printed nothing for its stall window and was stopped"
		if in.Limits.StallSeconds > 0 {
			f.Message = fmt.Sprintf("the run printed nothing for %gs (--stall-timeout) and was stopped", in.Limits.StallSeconds)
		}
	case in.SandboxError != "":
		f.Code, f.Message = sdk.CodeSandboxError, in.SandboxError
	case in.OOMKilled:
		f.Code, f.Message = sdk.CodeOOMKilled, "the run was killed for exceeding its memory limit"
	default:
		f.Code, f.Message = sdk.CodeNonzeroExit, fmt.Sprintf("the command exited with status %d", in.ExitCode)
	}
	if in.Smoke && f.Code != sdk.CodeCancelled {
		f.Details = map[string]string{"cause": f.Code}
		f.Code, f.Message = sdk.CodeSmokeFailed, "smoke run failed: "+f.Message
	}
	return f
}

// stallOf is the run's stall window (--stall-timeout), 0 when it has none.
func stallOf(run *store.Run) time.Duration {
	d, _ := time.ParseDuration(run.Labels[labelStall])
	return d
}

func limitsOf(s sandbox.Spec, stall time.Duration) sdk.Limits {
	return sdk.Limits{
		StallSeconds:   stall.Seconds(),
		MemoryBytes:    s.Limits.MemoryBytes,
		TimeoutSeconds: s.Timeout.Seconds(),
		CPUs:           s.Limits.CPUs,
		Pids:           s.Limits.Pids,
	}
}

// describeEnd is the one-line reason stored with a terminal state.
func describeEnd(state store.State, exit sandbox.Exit, f *sdk.Failure) string {
	switch {
	case state == store.Succeeded:
		return "exited 0"
	case f != nil:
		return f.Code + ": " + firstLine(f.Message)
	case exit.Error != "":
		return exit.Error
	}
	return fmt.Sprintf("exited %d", exit.Code)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// cancelledInput is the classifier input of a run stopped before it started.
var cancelledInput = sdk.ClassifyInput{Cancelled: true, ExitCode: 130}
