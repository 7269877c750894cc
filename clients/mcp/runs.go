package mcp

import (
	"context"
	"fmt"
	"math"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runbox/runbox/api"
)

func (s *server) status(ctx context.Context, _ *mcpsdk.CallToolRequest, in runIn) (*mcpsdk.CallToolResult, runOut, error) {
	r, err := s.c.Get(ctx, in.RunID)
	if err != nil {
		return nil, runOut{}, daemonError(err, "run", in.RunID)
	}
	out := runView(r)
	return textResult("%s", runSummary(&out)), out, nil
}

// wait blocks in the daemon until the run ends or the timeout passes. When
// the client sent a progress token it waits in slices of ProgressInterval
// and reports the run's state and progress after each.
func (s *server) wait(ctx context.Context, req *mcpsdk.CallToolRequest, in waitIn) (*mcpsdk.CallToolResult, runOut, error) {
	timeout := defaultWait
	if in.TimeoutSeconds != nil {
		t := *in.TimeoutSeconds
		if math.IsNaN(t) || t < 0 || t > maxWait.Seconds() {
			return nil, runOut{}, toolError("timeout_seconds is %v: give 0 to %v seconds (default %v); for longer runs call local_wait again", t, maxWait.Seconds(), defaultWait.Seconds())
		}
		timeout = time.Duration(t * float64(time.Second))
	}
	token := req.Params.GetProgressToken()
	start := time.Now()
	deadline := start.Add(timeout)
	var sent float64
	for {
		slice := time.Until(deadline)
		if token != nil && slice > s.o.ProgressInterval {
			slice = s.o.ProgressInterval
		}
		// The daemon takes 0 as "no timeout": never ask it for less
		// than a millisecond.
		r, err := s.c.Wait(ctx, in.RunID, max(slice, time.Millisecond))
		if err != nil {
			if ctx.Err() != nil {
				return nil, runOut{}, toolError("local_wait was cancelled; the run goes on: call local_status({run_id: %q})", in.RunID)
			}
			return nil, runOut{}, daemonError(err, "run", in.RunID)
		}
		if r.State.Terminal() {
			r = withWhatRan(ctx, s, r) // record.go
		}
		out := runView(r)
		if out.Done || !time.Now().Before(deadline) {
			if !out.Done {
				out.Note = fmt.Sprintf("still %s after waiting %s; it goes on", r.State, timeout.Round(time.Millisecond))
				out.Next = fmt.Sprintf("local_wait({run_id: %q}) again to keep waiting, local_logs to see its output, local_stop to cancel it", r.ID)
			}
			return textResult("%s", runSummary(&out)), out, nil
		}
		if token != nil {
			// Progress must grow with every notification: report the
			// seconds waited, and the run's own progress in the message.
			p := max(time.Since(start).Seconds(), sent+0.001)
			sent = p
			msg := fmt.Sprintf("run %s %s", r.ID, r.State)
			if out.Progress != nil {
				msg += ": " + progressText(out.Progress)
			}
			err := req.Session.NotifyProgress(ctx, &mcpsdk.ProgressNotificationParams{
				ProgressToken: token, Progress: p, Total: timeout.Seconds(), Message: msg,
			})
			if err != nil && ctx.Err() != nil {
				return nil, runOut{}, toolError("local_wait was cancelled; the run goes on: call local_status({run_id: %q})", in.RunID)
			}
		}
	}
}

// stop asks the run to stop and waits (up to StopWait) for it to end. A
// run that already ended, or that another agent stopped, is not an error:
// the answer says how it ended.
func (s *server) stop(ctx context.Context, _ *mcpsdk.CallToolRequest, in runIn) (*mcpsdk.CallToolResult, runOut, error) {
	before, err := s.c.Get(ctx, in.RunID)
	if err != nil {
		return nil, runOut{}, daemonError(err, "run", in.RunID)
	}
	if before.State.Terminal() {
		out := runView(before)
		out.Note = fmt.Sprintf("the run had already ended (%s); nothing to stop", before.State)
		return textResult("%s", runSummary(&out)), out, nil
	}
	r, err := s.c.Stop(ctx, before.ID, 0)
	if err != nil {
		return nil, runOut{}, daemonError(err, "run", in.RunID)
	}
	if !r.State.Terminal() {
		if r, err = s.c.Wait(ctx, before.ID, s.o.StopWait); err != nil {
			return nil, runOut{}, daemonError(err, "run", in.RunID)
		}
	}
	out := runView(r)
	switch {
	case !out.Done:
		out.Note = fmt.Sprintf("asked to stop; still %s after %s (its grace period may be longer)", r.State, s.o.StopWait)
		out.Next = fmt.Sprintf("local_wait({run_id: %q}) until it ends", r.ID)
	case r.State == api.Cancelled:
		out.Note = "stopped"
	default:
		out.Note = fmt.Sprintf("it ended on its own (%s) before the stop took effect", r.State)
	}
	return textResult("%s", runSummary(&out)), out, nil
}
