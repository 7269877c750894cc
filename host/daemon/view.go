package daemon

import (
	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/internal/printable"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sdk"
	"github.com/runbox/runbox/store"
)

// The daemon's edge: store records and plugin answers become the wire
// types of package api here, and nowhere else. Struct conversions between
// types with the same fields (api.Failure(f)) fail to compile when the two
// drift apart, so a field added on one side is a decision, not an accident.

func runView(r *store.Run) *api.Run {
	if r == nil {
		return nil
	}
	v := &api.Run{
		ID:            r.ID,
		ShortID:       r.Short,
		ParentRunID:   r.ParentID,
		PlanID:        r.PlanID,
		Attempt:       r.Attempt,
		State:         api.State(r.State),
		Sandbox:       r.Sandbox,
		SandboxReason: r.SandboxReason,
		Spec:          specView(r.Spec),
		Ref:           r.Ref,
		Name:          r.Name,
		Labels:        r.Labels,
		CreatedAt:     r.CreatedAt,
		StartedAt:     r.StartedAt,
		EndedAt:       r.EndedAt,
		Failure:       failureView(r.Failure),
		Progress:      progressView(r.Progress),
		Reason:        r.Reason,
		Egress:        egressView(r.Spec), // egress.go
	}
	// A lost run's exit is unknown: no exit status rather than a made-up
	// 0 (the reason says what was lost).
	if r.Exit != nil && !r.Exit.Lost {
		e := exitView(*r.Exit)
		v.Exit = &e
	}
	return v
}

func runViews(rs []*store.Run) []*api.Run {
	out := make([]*api.Run, 0, len(rs))
	for _, r := range rs {
		out = append(out, runView(r))
	}
	return out
}

func specView(s sandbox.Spec) api.Spec {
	v := api.Spec{
		Command:       s.Command,
		CommandLine:   printable.Run(s.Command, s.Shell),
		Shell:         s.Shell,
		Workdir:       s.Workdir,
		Env:           s.Env,
		CleanEnv:      s.CleanEnv,
		EnvAllow:      s.EnvAllow,
		StdinFile:     s.StdinFile,
		Setup:         s.Setup,
		Timeout:       api.Duration(s.Timeout),
		Grace:         api.Duration(s.Grace),
		Limits:        api.Limits(s.Limits),
		Image:         s.Image,
		Network:       s.Network,
		Isolate:       s.Isolate,
		RW:            s.RW,
		AllowNet:      s.AllowNet,
		SetupAllowNet: s.SetupAllowNet,
		ReadOnlyRoot:  s.ReadOnlyRoot,
		GPUs:          s.GPUs,
		KeepContainer: s.KeepContainer,
		User:          s.User,
	}
	for _, a := range s.Assets {
		v.Assets = append(v.Assets, api.Asset(a))
	}
	return v
}

func exitView(e sandbox.Exit) api.Exit {
	return api.Exit{
		Code: e.Code, Signal: e.Signal, OOMKilled: e.OOMKilled, TimedOut: e.TimedOut,
		Cancelled: e.Cancelled, SetupFailed: e.SetupFailed, Error: e.Error, Lost: e.Lost, LogDropped: e.LogDropped,
		StartedAt: e.StartedAt, EndedAt: e.EndedAt, Usage: api.Usage(e.Usage),
	}
}

func failureView(f *sdk.Failure) *api.Failure {
	if f == nil {
		return nil
	}
	v := api.Failure(*f)
	return &v
}

func progressView(p *sdk.Progress) *api.Progress {
	if p == nil {
		return nil
	}
	v := api.Progress(*p)
	return &v
}

// planView is a stored plan as clients see it; iso is how its backend
// will confine it here (Engine.IsolationView).
func planView(p *store.Plan, iso *api.Isolation) *api.Plan {
	v := &api.Plan{
		ID:              p.ID,
		PlanID:          p.ID,
		CreatedAt:       p.CreatedAt,
		Command:         p.Command,
		Workdir:         p.Workdir,
		ScriptPath:      p.ScriptPath,
		TaskDescription: p.TaskDescription,
		ParentRunID:     p.ParentID,
		Spec:            specView(p.Spec),
		Sandbox:         p.Sandbox,
		SandboxReason:   p.SandboxReason,
		Result: api.PlanResult{
			Frameworks: p.Result.Frameworks,
			Notes:      p.Result.Notes,
			AllowNet:   allowHostsView(p.Result.AllowNet), // egress.go
		},
		Host: api.HostFacts{
			OS: p.Host.OS, Arch: p.Host.Arch, CPUs: p.Host.CPUs, MemoryBytes: p.Host.MemoryBytes,
			DiskFreeBytes: p.Host.DiskFreeBytes, DockerAvailable: p.Host.DockerAvailable,
			DockerRuntimes: p.Host.DockerRuntimes,
		},
		Experience: experienceView(p.Experience),
		Isolation:  iso,
	}
	for _, r := range p.Result.Risks {
		v.Result.Risks = append(v.Result.Risks, api.Risk(r))
	}
	if rec := p.Result.Recommendation; rec != nil {
		r := api.Recommendation(*rec)
		v.Result.Recommendation = &r
	}
	if sm := p.Result.Smoke; sm != nil {
		s := api.SmokeTest(*sm)
		v.Result.Smoke = &s
	}
	for _, g := range p.Host.GPUs {
		v.Host.GPUs = append(v.Host.GPUs, api.GPU(g))
	}
	return v
}

// experienceView converts an experience summary.
func experienceView(e *sdk.Experience) *api.Experience {
	if e == nil {
		return nil
	}
	return &api.Experience{
		Runs: e.Runs, Succeeded: e.Succeeded, Failed: e.Failed, FailureCodes: e.FailureCodes,
		MedianDurationSeconds: e.MedianDurationSeconds, MaxPeakRSSBytes: e.MaxPeakRSSBytes,
		LastFailure: failureView(e.LastFailure),
	}
}

func eventViews(es []store.Event) []api.Event {
	out := make([]api.Event, 0, len(es))
	for _, e := range es {
		out = append(out, api.Event{
			RunID: e.RunID, Seq: e.Seq, Time: e.Time, Type: e.Type,
			State: api.State(e.State), Message: e.Message, Data: e.Data,
		})
	}
	return out
}

// AnalysisView converts what the plugins answered about a saved log.
func AnalysisView(f *sdk.Failure, p *sdk.Progress) api.Analysis {
	return api.Analysis{Failure: failureView(f), Progress: progressView(p)}
}
