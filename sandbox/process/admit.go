package process

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/confine"
	"github.com/runbox/runbox/sandbox/process/supervisor"
	"github.com/runbox/runbox/sdk"
)

// Capabilities: the levels of confinement this host enforces (what
// confine.Probe finds), and how memory, pids and CPU limits are
// enforced. A process run takes no --network mode of its own: it has the
// host's network unless a level cuts it, and an allow-list where the host
// can cut it (the egress proxy is then its only way out). It gets this
// host's GPUs in CUDA_VISIBLE_DEVICES.
func (s *Sandbox) Capabilities(ctx context.Context) sandbox.Capabilities {
	host := confine.Probe()
	c := sandbox.Capabilities{Limits: map[string]string{}, GPUs: sandbox.GPUsHost}
	for _, l := range confine.Levels {
		if host.Can(l) == nil {
			c.Isolation = append(c.Isolation, string(l))
		}
	}
	c.AllowNet = host.Can(confine.Net) == nil
	if m := supervisor.MemoryLimitMode(); m != "" {
		c.Limits["memory"] = m
	}
	if p := s.pidsLine(); p != "" {
		c.Limits["pids"] = p
	}
	if m := supervisor.CPULimitMode(); m != "" {
		c.Limits["cpus"] = m
	}
	return c
}

// Admit refuses a container's --network mode (networkMode) and settles a
// process run's confinement: --isolate as asked (refused if this host
// cannot enforce it), else what the plan promised or the retried run
// had; then its allow-list, and the GPUs the daemon must reserve for it. While planning, what the plan wants as far as this host
// can enforce it, with the hosts the planner proposes.
func (s *Sandbox) Admit(ctx context.Context, req sandbox.Request, spec *sandbox.Spec) (sandbox.Verdict, error) {
	if err := networkMode(req.Network); err != nil {
		return sandbox.Verdict{}, err
	}
	if req.Planning {
		var out sdk.PlanOutput
		if req.Plan != nil && req.Plan.Output != nil {
			out = *req.Plan.Output
		}
		if err := planIsolation(spec, req, out); err != nil {
			return sandbox.Verdict{}, err
		}
		if err := allowNet(spec, req); err != nil {
			return sandbox.Verdict{}, err
		}
		return sandbox.Verdict{Note: proposeAllowNet(spec, req)}, nil
	}
	refusal, err := submitIsolation(spec, req)
	if err != nil {
		return sandbox.Verdict{}, err
	}
	var note string
	if refusal == "" {
		note = confineEnv(spec, req.Env)
	}
	if err := allowNet(spec, req); err != nil {
		return sandbox.Verdict{}, err
	}
	n, err := s.admitGPUs(req.GPUs)
	if err != nil {
		return sandbox.Verdict{}, err
	}
	if refusal != "" {
		return sandbox.Verdict{Refusal: refusal, GPUs: n}, nil
	}
	return sandbox.Verdict{Note: note, GPUs: n}, nil
}

// admitGPUs is how many of this host's GPUs the daemon must reserve for
// the run: a count or all, never more than it knows; devices by name are
// a container's (the daemon chooses a process run's).
func (s *Sandbox) admitGPUs(g string) (int, error) {
	if strings.HasPrefix(g, "device=") {
		return 0, sandbox.Refuse("--gpus %s: a process run asks for a number of GPUs (or all); the daemon hands them out", g)
	}
	n, err := s.opts.GPUs.Reserve(g)
	if err != nil {
		return 0, sandbox.Refuse("%v", err)
	}
	return n, nil
}

// GiveGPUs hands a starting run the GPUs reserved for it, in
// CUDA_VISIBLE_DEVICES (Apple silicon's GPU needs no variable).
func (s *Sandbox) GiveGPUs(spec *sandbox.Spec, devs []string) {
	if s.opts.GPUs.Apple() {
		return
	}
	spec.Env = append(slices.Clone(spec.Env), "CUDA_VISIBLE_DEVICES="+strings.Join(devs, ","))
}

// networkMode refuses a container's --network mode. A process run has
// this host's network unless its isolation cuts it, and "host" (let an
// isolated run out) is the one mode it takes: --network none ran with the
// whole network, --network bridge with more than a container's.
func networkMode(mode string) error {
	switch mode {
	case "", "host":
		return nil
	case "none":
		return sandbox.Refuse("--network none is a container's: a process run has this host's network unless --isolate cuts it; use --isolate net (or full), or --sandbox docker")
	}
	return sandbox.Refuse("--network %s is a container network: a process run has this host's network (--isolate net cuts it; --network host lets an isolated run out); use --sandbox docker for a %[1]s network", mode)
}

// allowNet keeps the run to its allow-lists, once its isolation is
// settled: its network cut (the egress proxy is then its only way out),
// which the host must be able to enforce; the host network contradicts a
// list.
func allowNet(spec *sandbox.Spec, req sandbox.Request) error {
	if len(req.AllowNet) == 0 && len(req.SetupAllowNet) == 0 {
		return nil
	}
	if req.Network == "host" {
		return sandbox.Refuse("--allow-net keeps the run to named hosts, --network host gives it every host: choose one")
	}
	level, err := confine.ParseLevel(spec.Isolate)
	if err != nil {
		return sandbox.Refuse("%v", err)
	}
	level = confine.Join(level, confine.Net)
	if err := confine.Probe().Can(level); err != nil {
		return sandbox.Refuse("--allow-net needs the run's network cut (--isolate %s), which this host cannot enforce: %v", level, err)
	}
	spec.Isolate = string(level)
	spec.AllowNet, spec.SetupAllowNet = req.AllowNet, req.SetupAllowNet
	return nil
}

// proposeAllowNet makes the hosts the planner proposes (the request names
// no list) the planned run's allow-list: the run then reaches those and
// nothing else. Not when the run was given the host network or no
// isolation by name, or when this host cannot cut the network; it returns
// the plan's note on what it did.
func proposeAllowNet(spec *sandbox.Spec, req sandbox.Request) string {
	hosts := req.ProposedAllowNet
	if len(hosts) == 0 {
		return ""
	}
	list := strings.Join(hosts, ", ")
	if req.Network == "host" || req.Isolate == string(confine.None) {
		return "network: the command needs " + list + "; not enforced, as the run was given the host network or --isolate none"
	}
	level, _ := confine.ParseLevel(spec.Isolate)
	joined := confine.Join(level, confine.Net)
	if err := confine.Probe().Can(joined); err != nil {
		return "network: the command needs " + list + ", but this host cannot cut a run's network to enforce an allow-list (" + err.Error() + ")"
	}
	spec.Isolate, spec.AllowNet = string(joined), hosts
	return "network: only " + list + ", through an egress proxy (what the command needs; --allow-net to change it)"
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
