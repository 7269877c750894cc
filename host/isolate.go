package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/confine"
	"github.com/runbox/runbox/sdk"
	"github.com/runbox/runbox/store"
)

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
// plan says what will be enforced, and Isolation (the plan's view) says
// what is missing and that exec will refuse it for a critical risk.
func planIsolation(spec *sandbox.Spec, backend string, req api.RunRequest, out sdk.PlanOutput) error {
	if backend != sandbox.Process {
		return isolationElsewhere(backend, req)
	}
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

// isolationElsewhere checks an explicit --isolate for a run that is not a
// process run. A container gives at least any level by itself (its own
// root filesystem with the workspace mounted, no network unless asked
// for), so the level holds unless --network lets the run out, which
// contradicts it. A Slurm job runs on the cluster's nodes, which runbox
// does not confine: a level there would be a promise nobody keeps.
func isolationElsewhere(backend string, req api.RunRequest) error {
	if req.Isolate == "" || backend == sandbox.Process {
		return nil
	}
	level, err := confine.ParseLevel(req.Isolate)
	if err != nil {
		return badRequest("%v", err)
	}
	switch {
	case level == confine.None:
		return nil
	case backend == sandbox.Docker && level.Network() && req.Network != "" && req.Network != "none":
		return badRequest("--isolate %s cuts the network, --network %s lets the container out: choose one (a container has no network unless --network says so)", level, req.Network)
	case backend == sandbox.Docker:
		return nil
	}
	return badRequest("--isolate %s confines process runs; a %s job runs on the cluster's nodes, which runbox does not confine: drop --isolate, or run it with --sandbox process or docker", level, backend)
}

// checkIsolation validates an explicit --isolate (with --rw and --network
// host) and puts it in spec. A level this host cannot enforce, a --rw path
// that does not exist, a workspace in a secrets directory: each is a clear
// error, never a weaker run.
func checkIsolation(spec *sandbox.Spec, req api.RunRequest) error {
	level, err := confine.ParseLevel(req.Isolate)
	if err != nil {
		return badRequest("%v", err)
	}
	if req.Network == "host" {
		level = level.WithHostNetwork()
	}
	if err := confine.Probe().Can(level); err != nil {
		return badRequest("--isolate %s cannot be enforced on this host: %v (see runbox backends; --isolate none runs it unconfined)", level, err)
	}
	home, _ := os.UserHomeDir()
	return setIsolation(spec, level, req.RW, home)
}

// setIsolation checks the policy's paths and puts it in spec.
func setIsolation(spec *sandbox.Spec, level confine.Level, rw []string, home string) error {
	p := confine.Policy{Level: level, Workdir: spec.Workdir, RW: rw}
	if err := p.Check(confine.Denied(home, runboxHome(spec))); err != nil {
		return badRequest("%v", err)
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
// what the plan said — and allow_risk was not given; the caller records
// the refusal on the run.
func (e *Engine) submitIsolation(ctx context.Context, spec *sandbox.Spec, backend string, req api.RunRequest, plan *store.Plan) (refusal string, err error) {
	if backend != sandbox.Process {
		return "", nil // isolationElsewhere, checked before the image
	}
	home, _ := os.UserHomeDir()
	if req.Isolate == "" && plan == nil && req.ParentRunID != "" {
		if parent, err := e.cfg.Store.GetRun(ctx, req.ParentRunID); err == nil {
			req.Isolate, req.RW = parent.Spec.Isolate, parent.Spec.RW
		}
	}
	if plan == nil {
		if req.Isolate == "" {
			return "", nil
		}
		return "", checkIsolation(spec, req)
	}
	// A planned run: the plan's promise, unless --isolate says otherwise.
	promised, _ := confine.ParseLevel(plan.Spec.Isolate)
	want, why := wantedIsolation(plan.Result)
	level := promised
	if req.Isolate != "" {
		if level, err = confine.ParseLevel(req.Isolate); err != nil {
			return "", badRequest("%v", err)
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
			return "", badRequest("--isolate %s cannot be enforced on this host: %v (see runbox backends)", level, err)
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

// confineEnv drops from a confined process run's environment what points
// at the user's session (confine.HostEnv: agents, buses, displays,
// multiplexers), unless it was passed on purpose with --env; it returns
// the note for the run's events ("" when nothing was kept on purpose).
// The supervisor points XDG_RUNTIME_DIR at the run's private one.
func confineEnv(spec *sandbox.Spec, req api.RunRequest) string {
	if spec.Isolate == "" || spec.Isolate == string(confine.None) {
		return ""
	}
	given := map[string]bool{}
	for _, kv := range req.Env {
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

// refuse records a run that was refused before it started: a failed run
// whose history says why, so the refusal is on record, and an error for
// the caller that names it.
func (e *Engine) refuse(ctx context.Context, run *store.Run, why string) error {
	run.State, run.Reason = store.Failed, "refused: "+why
	now := e.cfg.Now()
	run.EndedAt = &now
	if err := e.cfg.Store.CreateRun(ctx, run); err != nil {
		return err
	}
	return badRequest("%s (run %s, refused)", why, run.ID)
}

// withIsolationInfo adds what confinement this host gives process runs
// to the process backend's info (`runbox backends`).
func withIsolationInfo(info map[string]string) map[string]string {
	if info == nil {
		info = map[string]string{}
	}
	for k, v := range confine.Probe().Info() {
		info[k] = v
	}
	return info
}

// PlanIsolationView describes a stored plan's isolation as this host will
// enforce it (api.Plan.Isolation).
func PlanIsolationView(p *store.Plan) *api.Isolation {
	if p.Sandbox != sandbox.Process {
		return nil
	}
	host := confine.Probe()
	level, _ := confine.ParseLevel(p.Spec.Isolate)
	want, why := wantedIsolation(p.Result)
	v := &api.Isolation{
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
	if p.Spec.Network == "host" {
		v.Network = "host network (--network host)"
	}
	return v
}

// isolationAdvice adds to a failure what the run's confinement has to do
// with it: a permission denied in a run that may write only in its
// workspace names --rw; a network error in a run without a network names
// --network host. (The classifier plugins do not know how the run was
// confined.)
func isolationAdvice(spec sandbox.Spec, f *sdk.Failure) *sdk.Failure {
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
