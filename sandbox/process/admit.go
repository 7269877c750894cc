package process

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/confine"
	"github.com/runbox/runbox/sandbox/process/supervisor"
	"github.com/runbox/runbox/sdk"
)

// Capabilities: the levels of confinement this host enforces (what
// confine.Probe finds), and how memory and pids limits are enforced. A
// process run takes no --network mode of its own: it has the host's
// network unless a level cuts it.
func (s *Sandbox) Capabilities(ctx context.Context) sandbox.Capabilities {
	host := confine.Probe()
	c := sandbox.Capabilities{Limits: map[string]string{}}
	for _, l := range confine.Levels {
		if host.Can(l) == nil {
			c.Isolation = append(c.Isolation, string(l))
		}
	}
	if m := supervisor.MemoryLimitMode(); m != "" {
		c.Limits["memory"] = m
	}
	if p := s.pidsLine(); p != "" {
		c.Limits["pids"] = p
	}
	return c
}

// Admit settles a process run's confinement: --isolate as asked (refused
// if this host cannot enforce it), else what the plan promised or the
// retried run had. While planning, what the plan wants as far as this
// host can enforce it.
func (s *Sandbox) Admit(ctx context.Context, req sandbox.Request, spec *sandbox.Spec) (sandbox.Verdict, error) {
	if req.Planning {
		var out sdk.PlanOutput
		if req.Plan != nil && req.Plan.Output != nil {
			out = *req.Plan.Output
		}
		return sandbox.Verdict{}, planIsolation(spec, req, out)
	}
	refusal, err := submitIsolation(spec, req)
	if err != nil || refusal != "" {
		return sandbox.Verdict{Refusal: refusal}, err
	}
	return sandbox.Verdict{Note: confineEnv(spec, req.Env)}, nil
}

// confineEnv drops from a confined process run's environment what points
// at the user's session (confine.HostEnv: agents, buses, displays,
// multiplexers), unless it was passed on purpose with --env; it returns
// the note for the run's events ("" when nothing was kept on purpose).
// The supervisor points XDG_RUNTIME_DIR at the run's private one.
func confineEnv(spec *sandbox.Spec, env []string) string {
	if spec.Isolate == "" || spec.Isolate == string(confine.None) {
		return ""
	}
	given := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		given[k] = true
	}
	var kept []string
	spec.Env, _, kept = confine.DropHostEnv(spec.Env, given)
	if len(kept) == 0 {
		return ""
	}
	return fmt.Sprintf("--isolate %s: %s passed on purpose with --env; what it names stays hidden unless it is in the workspace or a --rw path", spec.Isolate, strings.Join(kept, ", "))
}

// wantedIsolation is the isolation a plan asks for a process run, and
// why: a critical risk needs it all; a planner that keeps the network off
// (its recommendation "none") needs the network cut. Nothing otherwise.
func wantedIsolation(out sdk.PlanOutput) (confine.Level, string) {
	for _, r := range out.Risks {
		if r.Severity == sdk.SeverityCritical {
			return confine.Full, fmt.Sprintf("critical risk (%s): %s", r.Code, r.Message)
		}
	}
	if rec := out.Recommendation; rec != nil && rec.Network == "none" {
		return confine.Net, rec.NetworkReason
	}
	return confine.None, ""
}

// planIsolation settles the level a plan promises for a process run: the
// one asked for with --isolate (refused here if this host cannot enforce
// it), else what the plan wants, as far as this host can enforce it — the
// plan says what will be enforced, and IsolationView (the plan's view)
// says what is missing and that exec will refuse it for a critical risk.
func planIsolation(spec *sandbox.Spec, req sandbox.Request, out sdk.PlanOutput) error {
	if req.Isolate != "" {
		return checkIsolation(spec, req)
	}
	want, _ := wantedIsolation(out)
	if req.Network == "host" {
		want = want.WithHostNetwork()
	}
	host := confine.Probe()
	got := host.Best(want)
	spec.Isolate, spec.RW = string(got), req.RW
	if got == confine.None {
		spec.Isolate = ""
	}
	// The plan's network line says what a process run here will get.
	if rec := out.Recommendation; rec != nil && rec.Network == "none" {
		if got.Network() {
			rec.NetworkReason += " — enforced by its own network namespace"
		} else {
			why := "--network host"
			if err := host.Can(confine.Net); err != nil && req.Network != "host" {
				why = err.Error()
			}
			rec.Network, rec.NetworkReason = "host", "the planner wants none ("+rec.NetworkReason+"), but a process run here gets the host network: "+why
		}
	}
	return nil
}

// checkIsolation validates an explicit --isolate (with --rw and --network
// host) and puts it in spec. A level this host cannot enforce, a --rw path
// that does not exist, a workspace in a secrets directory: each is a clear
// error, never a weaker run.
func checkIsolation(spec *sandbox.Spec, req sandbox.Request) error {
	level, err := confine.ParseLevel(req.Isolate)
	if err != nil {
		return sandbox.Refuse("%v", err)
	}
	if req.Network == "host" {
		level = level.WithHostNetwork()
	}
	if err := confine.Probe().Can(level); err != nil {
		return sandbox.Refuse("--isolate %s cannot be enforced on this host: %v (see runbox backends; --isolate none runs it unconfined)", level, err)
	}
	home, _ := os.UserHomeDir()
	return setIsolation(spec, level, req.RW, home)
}

// setIsolation checks the policy's paths and puts it in spec.
func setIsolation(spec *sandbox.Spec, level confine.Level, rw []string, home string) error {
	p := confine.Policy{Level: level, Workdir: spec.Workdir, RW: rw}
	if err := p.Check(confine.Denied(home, runboxHome(spec))); err != nil {
		return sandbox.Refuse("%v", err)
	}
	spec.Isolate, spec.RW = string(level), rw
	if level == confine.None {
		spec.Isolate = ""
	}
	return nil
}

// runboxHome is runbox's own home, from where the run's files go.
func runboxHome(spec *sandbox.Spec) string {
	if spec.StateDir == "" {
		return ""
	}
	// STATE_DIR is HOME/runs/ID/sandbox.
	return filepath.Dir(filepath.Dir(filepath.Dir(spec.StateDir)))
}

// submitIsolation settles a submitted process run's isolation: --isolate
// as given, else the plan's promise (or the retried run's level). It
// returns a refusal when the run would get less than the plan promised —
// its critical risk needs full isolation, or this host can no longer give
// what the plan said — and allow_risk was not given; the engine records
// the refusal on the run.
func submitIsolation(spec *sandbox.Spec, r sandbox.Request) (refusal string, err error) {
	req, plan := r, r.Plan
	home, _ := os.UserHomeDir()
	if req.Isolate == "" && plan == nil && r.Retried != nil {
		req.Isolate, req.RW = r.Retried.Isolate, r.Retried.RW
	}
	if plan == nil {
		if req.Isolate == "" {
			return "", nil
		}
		return "", checkIsolation(spec, req)
	}
	// A planned run: the plan's promise, unless --isolate says otherwise.
	promised, _ := confine.ParseLevel(plan.Spec.Isolate)
	var out sdk.PlanOutput
	if plan.Output != nil {
		out = *plan.Output
	}
	want, why := wantedIsolation(out)
	level := promised
	if req.Isolate != "" {
		if level, err = confine.ParseLevel(req.Isolate); err != nil {
			return "", sandbox.Refuse("%v", err)
		}
	}
	if req.Network == "host" {
		level = level.WithHostNetwork()
	}
	if req.RW == nil {
		req.RW = plan.Spec.RW
	}
	host := confine.Probe()
	if req.Isolate != "" {
		// Asked for by name: enforced as asked, or a clear error.
		if err := host.Can(level); err != nil {
			return "", sandbox.Refuse("--isolate %s cannot be enforced on this host: %v (see runbox backends)", level, err)
		}
	}
	got := host.Best(level)
	var short string
	switch {
	case want == confine.Full && !got.Covers(confine.Full):
		short = fmt.Sprintf("plan %s found a %s; it must run with --isolate full, but it would run with --isolate %s", plan.ID, why, got)
	case !got.Covers(promised):
		short = fmt.Sprintf("plan %s promised --isolate %s, but the run would get --isolate %s", plan.ID, promised, got)
	}
	if short != "" {
		if err := host.Can(level); err != nil && got != level {
			short += " (" + err.Error() + ")"
		}
		if !req.AllowRisk {
			return short + ": refused. Review the command, then pass --allow-risk (agents: allow_risk) to run it anyway, or run it with --sandbox docker", nil
		}
	}
	if err := setIsolation(spec, got, req.RW, home); err != nil {
		return "", err
	}
	return "", nil
}

// IsolationView describes a plan's isolation as this host will enforce
// it (api.Plan.Isolation).
func (s *Sandbox) IsolationView(spec sandbox.Spec, out sdk.PlanOutput) *sandbox.IsolationView {
	host := confine.Probe()
	level, _ := confine.ParseLevel(spec.Isolate)
	want, why := wantedIsolation(out)
	v := &sandbox.IsolationView{
		Level:      string(level),
		Network:    host.NetworkLine(level),
		Filesystem: host.FilesystemLine(level),
		Processes:  host.ProcessLine(level),
	}
	if !level.Covers(want) {
		v.Wanted = string(want)
		v.WantedReason = why
		if err := host.Can(want); err != nil {
			v.Unavailable = err.Error()
		}
		v.Refused = want == confine.Full
	}
	if spec.Network == "host" {
		v.Network = "host network (--network host)"
	}
	return v
}

// Advise adds to a failure what the run's confinement has to do with it:
// a permission denied in a run that may write only in its workspace names
// --rw; a network error in a run without a network names --network host.
// (The classifier plugins do not know how the run was confined.)
func (s *Sandbox) Advise(spec sandbox.Spec, f *sdk.Failure) *sdk.Failure {
	if f == nil {
		return f
	}
	level, _ := confine.ParseLevel(spec.Isolate)
	var tip string
	switch {
	case f.Code == sdk.CodePermissionDenied && level.Filesystem():
		tip = fmt.Sprintf("The run was confined with --isolate %s: it may write only in its workspace, its temp dir ($TMPDIR) and --rw paths, and cannot read home secrets. If it must write elsewhere, pass --rw PATH (or --isolate net to leave the filesystem unconfined).", level)
	case f.Code == sdk.CodeNetworkError && level.Network():
		tip = fmt.Sprintf("The run had no network (--isolate %s). If it needs one, pass --network host (or --isolate fs to keep only the filesystem confined).", level)
	default:
		return f
	}
	out := *f
	out.Suggestions = append([]string{tip}, f.Suggestions...)
	return &out
}
