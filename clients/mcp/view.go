package mcp

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sdk"
)

var severityRank = map[string]int{
	api.SeverityCritical: 0, api.SeverityHigh: 1, api.SeverityMedium: 2, api.SeverityLow: 3, api.SeverityInfo: 4,
}

func planView(p *api.Plan) planOut {
	out := planOut{
		PlanID: p.ID, Backend: "local", Command: p.Command, Shell: p.Spec.Shell, Workdir: p.Workdir,
		ScriptPath: p.ScriptPath, ParentRunID: p.ParentRunID,
		Sandbox: p.Sandbox, SandboxReason: mcpText(p.SandboxReason), Image: p.Spec.Image,
		Risks: []risk{}, Frameworks: p.Result.Frameworks, Notes: mcpTexts(p.Result.Notes),
		TimeoutMinutes: time.Duration(p.Spec.Timeout).Minutes(), MemoryBytes: p.Spec.Limits.MemoryBytes,
	}
	for _, r := range p.Result.Risks {
		r.Message = mcpText(r.Message)
		out.Risks = append(out.Risks, risk(r))
	}
	slices.SortStableFunc(out.Risks, func(a, b risk) int { return severityRank[a.Severity] - severityRank[b.Severity] })
	if rec := p.Result.Recommendation; rec != nil {
		out.ImageReason, out.TimeoutReason, out.MemoryReason = mcpText(rec.ImageReason), mcpText(rec.TimeoutReason), mcpText(rec.MemoryReason)
	}
	if p.Spec.Image == "" {
		out.ImageReason = ""
	}
	if sm := p.Result.Smoke; sm != nil {
		out.SmokeSupported, out.SmokeCommand = true, sm.Command
		out.SmokeReason = fmt.Sprintf("%s found: %s", sm.Flag, mcpText(sm.Reason))
	}
	if e := p.Experience; e != nil && e.Runs > 0 {
		out.Experience = &experience{
			Runs: e.Runs, Succeeded: e.Succeeded, Failed: e.Failed, FailureCodes: e.FailureCodes,
			MedianDurationSeconds: e.MedianDurationSeconds, MaxPeakRSSBytes: e.MaxPeakRSSBytes,
			LastFailure: failureView(e.LastFailure), Changes: mcpTexts(e.Changes),
		}
	}
	out.AllowNet = allowNetView(p) // allownet.go
	out.Next = fmt.Sprintf("local_execute({plan_id: %q})", p.ID)
	return out
}

func planSummary(p *planOut) string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan %s: %s in the %s sandbox (%s).", p.PlanID, commandLine(p.Command), p.Sandbox, p.SandboxReason)
	if p.ParentRunID != "" {
		fmt.Fprintf(&b, " Retry of run %s.", p.ParentRunID)
	}
	if len(p.Risks) == 0 {
		b.WriteString(" Risks: none found.")
	}
	for _, r := range p.Risks {
		fmt.Fprintf(&b, " Risk [%s] %s.", r.Severity, strings.TrimSuffix(r.Message, "."))
	}
	if p.SmokeSupported {
		fmt.Fprintf(&b, " smokeSupported: true — local_execute runs `%s` first.", commandLine(p.SmokeCommand))
	} else {
		b.WriteString(" smokeSupported: false.")
	}
	if p.TimeoutMinutes > 0 {
		fmt.Fprintf(&b, " Timeout %s (%s).", time.Duration(p.TimeoutMinutes*float64(time.Minute)).Round(time.Second), p.TimeoutReason)
	}
	if p.MemoryBytes > 0 {
		fmt.Fprintf(&b, " Memory %s (%s).", sizeText(uint64(p.MemoryBytes)), p.MemoryReason)
	}
	if len(p.Frameworks) > 0 {
		fmt.Fprintf(&b, " Frameworks: %s.", strings.Join(p.Frameworks, ", "))
	}
	if e := p.Experience; e != nil {
		b.WriteString(" Experience: " + (&api.Experience{Runs: e.Runs, Succeeded: e.Succeeded, Failed: e.Failed}).Counts())
		if e.LastFailure != nil {
			fmt.Fprintf(&b, " (last failure %s: %s)", e.LastFailure.Code, e.LastFailure.Message)
		}
		b.WriteString(".")
	}
	if len(p.Overridden) > 0 {
		fmt.Fprintf(&b, " Overridden by you: %s.", strings.Join(p.Overridden, ", "))
	}
	if len(p.AllowNet) > 0 {
		var hs []string
		for _, h := range p.AllowNet {
			hs = append(hs, h.Host)
		}
		fmt.Fprintf(&b, " Network: only %s, through an egress proxy.", strings.Join(hs, ", "))
	}
	fmt.Fprintf(&b, " Next: %s.", p.Next)
	return b.String()
}

func failureView(f *api.Failure) *failure {
	if f == nil {
		return nil
	}
	return &failure{
		Code: f.Code, Message: mcpText(f.Message), Suggestions: mcpTexts(f.Suggestions), Retryable: f.Retryable,
		Evidence: f.Evidence, Confidence: f.Confidence, Details: f.Details,
	}
}

func runView(r *api.Run) runOut {
	out := runOut{
		RunID: r.ID, State: string(r.State), Done: r.State.Terminal(), Reason: mcpText(r.Reason),
		Command: r.Spec.Command, Sandbox: r.Sandbox, PlanID: r.PlanID, ParentRunID: r.ParentRunID,
		Attempt: r.Attempt, CreatedAt: r.CreatedAt.UTC().Format(time.RFC3339Nano),
		Failure: failureView(r.Failure),
		Egress:  egressView(r), // allownet.go
	}
	if out.Reason == string(r.State) {
		out.Reason = ""
	}
	if r.StartedAt != nil {
		out.StartedAt = r.StartedAt.UTC().Format(time.RFC3339Nano)
		end := time.Now()
		if r.EndedAt != nil {
			end = *r.EndedAt
		}
		out.ElapsedSeconds = end.Sub(*r.StartedAt).Round(time.Millisecond).Seconds()
	}
	if r.EndedAt != nil {
		out.EndedAt = r.EndedAt.UTC().Format(time.RFC3339Nano)
	}
	if p := r.Progress; p != nil {
		out.Progress = &progress{
			Step: p.Step, Total: p.Total, Percentage: p.Percentage, Phase: p.Phase, Epoch: p.Epoch,
			EpochTotal: p.EpochTotal, ETASeconds: p.ETASeconds, Rate: p.Rate, RateUnit: p.RateUnit,
			Metrics: p.Metrics, Message: p.Message,
		}
	}
	if e := r.Exit; e != nil {
		out.Exit = &exit{Code: e.Code, Signal: e.Signal, OOMKilled: e.OOMKilled, TimedOut: e.TimedOut, Cancelled: e.Cancelled, Error: e.Error}
		out.Usage = &usage{WallSeconds: e.Usage.WallSeconds, CPUSeconds: e.Usage.CPUSeconds, PeakRSSBytes: e.Usage.PeakRSSBytes}
	}
	switch {
	case !out.Done:
		out.Next = fmt.Sprintf("local_wait({run_id: %q}) to block until it ends, local_logs to read its output, local_stop to cancel it", r.ID)
	case r.State == api.Failed || r.State == api.TimedOut || r.State == api.Lost:
		out.Next = fmt.Sprintf("read failure.suggestions (and local_logs({run_id: %q, tail_lines: 50})), fix the cause, then retry: compute_plan({backend: \"local\", command, parent_run_id: %q}) and local_execute({plan_id, parent_run_id: %q})", r.ID, r.ID, r.ID)
	}
	addRecord(&out, r) // record.go
	return out
}

// runSummary is the text a model reads of a run.
func runSummary(r *runOut) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s: %s", r.RunID, r.State)
	if r.Reason != "" {
		fmt.Fprintf(&b, " (%s)", r.Reason)
	}
	if r.Attempt > 1 || r.ParentRunID != "" {
		fmt.Fprintf(&b, "; attempt %d, retry of %s", r.Attempt, r.ParentRunID)
	}
	if r.Egress != nil && r.Egress.Summary != "" {
		fmt.Fprintf(&b, "; egress %s", r.Egress.Summary)
	}
	if r.Exit != nil {
		fmt.Fprintf(&b, "; exit %d", r.Exit.Code)
		if r.Exit.Signal != "" {
			fmt.Fprintf(&b, " (%s)", r.Exit.Signal)
		}
	}
	if p := r.Progress; p != nil {
		b.WriteString("; progress: " + progressText(p))
	}
	if u := r.Usage; u != nil {
		fmt.Fprintf(&b, "; wall %.1fs, cpu %.1fs, peak RSS %s", u.WallSeconds, u.CPUSeconds, sizeText(u.PeakRSSBytes))
	} else if r.ElapsedSeconds > 0 {
		fmt.Fprintf(&b, "; running for %.1fs", r.ElapsedSeconds)
	}
	b.WriteString(".")
	if f := r.Failure; f != nil {
		fmt.Fprintf(&b, "\nfailure %s (retryable: %v): %s", f.Code, f.Retryable, f.Message)
		for _, s := range f.Suggestions {
			b.WriteString("\n- " + s)
		}
		for _, e := range f.Evidence {
			b.WriteString("\n> " + e)
		}
	}
	b.WriteString(sinceWorkedText(r.SinceWorked)) // record.go
	if r.Note != "" {
		b.WriteString("\n" + r.Note)
	}
	if r.Next != "" {
		b.WriteString("\nNext: " + r.Next + ".")
	}
	return b.String()
}

func progressText(p *progress) string {
	var parts []string
	if p.Phase != "" {
		parts = append(parts, p.Phase)
	}
	if p.Total > 0 {
		parts = append(parts, fmt.Sprintf("step %d/%d", p.Step, p.Total))
	} else if p.Step > 0 {
		parts = append(parts, fmt.Sprintf("step %d", p.Step))
	}
	if p.EpochTotal > 0 {
		parts = append(parts, fmt.Sprintf("epoch %d/%d", p.Epoch, p.EpochTotal))
	}
	if p.Percentage > 0 {
		parts = append(parts, fmt.Sprintf("%.0f%%", p.Percentage))
	}
	keys := make([]string, 0, len(p.Metrics))
	for k := range p.Metrics {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := p.Metrics[k]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			parts = append(parts, k+"="+sdk.FormatMetric(v)) // as the JSON result spells it
		} else {
			parts = append(parts, fmt.Sprintf("%s=%.4g", k, v))
		}
	}
	if p.ETASeconds > 0 {
		parts = append(parts, "ETA "+(time.Duration(p.ETASeconds)*time.Second).String())
	}
	if len(parts) == 0 && p.Message != "" {
		parts = append(parts, p.Message)
	}
	return strings.Join(parts, ", ")
}

func commandLine(argv []string) string { return strings.Join(argv, " ") }

func sizeText(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
