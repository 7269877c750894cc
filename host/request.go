package host

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/record"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/egress"
	"github.com/runbox/runbox/store"
)

// prepared is a request on its way to becoming a run: its defaults filled
// in, validated, its backend chosen and its spec admitted by that backend.
type prepared struct {
	req     api.RunRequest
	plan    *store.Plan // the plan it was submitted from, if any
	parent  *store.Run  // the run it retries or follows, if any
	backend string
	reason  string
	spec    sandbox.Spec
	verdict sandbox.Verdict
	rec     *record.Record // what ran (nil with --no-record)
	// snapshotFrom: a sweep member's copy is made from its sweep's as it
	// starts (sweepsnap.go).
	snapshotFrom string
}

// prepare takes a submitted request down the one path every client's
// takes (CLI, MCP, dashboard, retries): its defaults (from its plan, or
// the run it retries) → validate → choose the backend → the common spec →
// the record of what ran → the backend's admission. Each step happens
// once, here; Submit persists
// and queues what it returns. id is the run's, from its place in line.
func (e *Engine) prepare(ctx context.Context, req api.RunRequest, retried *store.Run, base *store.Campaign, id string) (*prepared, error) {
	pr := &prepared{req: req, parent: retried}
	if err := e.containerOnly(ctx, req); err != nil {
		return nil, err
	}
	if err := e.fillDefaults(ctx, pr); err != nil {
		return nil, err
	}
	if err := validate(pr.req); err != nil { // validate.go
		return nil, err
	}
	backend, reason, err := e.chooseSandbox(ctx, pr.req.Sandbox, pr.req.Image)
	if err != nil {
		return nil, err
	}
	pr.backend, pr.reason = backend, reason
	if pr.plan != nil && (req.Sandbox == "" || req.Sandbox == sandbox.Auto) {
		pr.reason = "planned: " + pr.plan.SandboxReason
	}
	sreq, err := backendRequest(pr.req)
	if err != nil {
		return nil, err
	}
	if p := pr.plan; p != nil {
		sreq.Plan = &sandbox.PlanPromise{ID: p.ID, Spec: p.Spec, Output: &p.Result}
	}
	if pr.parent != nil {
		sreq.Retried = &pr.parent.Spec
	}
	if pr.spec, err = e.commonSpec(ctx, id, backend, pr.req); err != nil {
		return nil, err
	}
	// The record of what ran, and the --snapshot copy the run gets as its
	// workspace (record.go): taken before admission, which checks the
	// workspace the run will really have. A sweep's member makes its copy
	// from the sweep's as it starts (sweepsnap.go); a retried member, a
	// copy of the workspace as it is now (it sees a fix made since).
	pr.rec = e.takeRecord(pr.req, pr.spec, backend)
	if pr.req.Snapshot {
		if shared := e.sweepSnapshot(base); shared != nil && retried == nil {
			if err := e.memberSnapshot(id, shared, &pr.spec, pr.rec); err != nil {
				return nil, err
			}
			pr.snapshotFrom = shared.From
		} else if err := e.takeSnapshot(ctx, id, &pr.spec, pr.rec); err != nil {
			return nil, err
		}
	}
	if pr.verdict, err = e.admitTo(ctx, backend, sreq, &pr.spec); err != nil {
		return nil, err
	}
	if pr.rec != nil && pr.rec.Image == nil && pr.spec.Image != "" {
		// A container's image is its backend's to settle (the default
		// one when none was named): known only after admission.
		pr.rec.Image = &record.Image{Name: pr.spec.Image}
	}
	return pr, nil
}

// containerOnly refuses what only a container takes (an image, a
// read-only root, a kept container, a pull) in a request that names a
// backend running no images: it took them and ran the command unlike
// what was asked, saying nothing. Only what the client sent is checked:
// a container run retried with --sandbox process carries its image over
// unasked, and keeps its command, not its container.
func (e *Engine) containerOnly(ctx context.Context, req api.RunRequest) error {
	if req.Sandbox == "" || req.Sandbox == sandbox.Auto {
		return nil
	}
	var asked []string
	for _, o := range []struct {
		flag string
		set  bool
	}{{"--image", req.Image != ""}, {"--keep-container", req.KeepContainer}, {"--pull", req.Pull}, {"--read-only", req.ReadOnlyRoot}} {
		if o.set {
			asked = append(asked, o.flag)
		}
	}
	if len(asked) == 0 {
		return nil
	}
	sb, ok := e.cfg.Sandboxes[req.Sandbox]
	if !ok || e.probes.capsOf(ctx, sb).Images {
		return nil // chooseSandbox names a backend that is missing
	}
	them := "it"
	if len(asked) > 1 {
		them = "them"
	}
	return badRequest("%s: only a container takes %s; --sandbox %s runs none: drop %[2]s, or use --sandbox docker",
		strings.Join(asked, ", "), them, req.Sandbox)
}

// fillDefaults fills what the request leaves unset: from the run it
// retries, else from the plan it names; and looks up its parent once.
func (e *Engine) fillDefaults(ctx context.Context, pr *prepared) error {
	req := &pr.req
	if p := pr.parent; p != nil { // a retry: the parent's settings
		if req.Sandbox == "" {
			req.Sandbox = p.Sandbox
		}
		if req.Name == "" {
			req.Name = p.Name
		}
		if req.Labels == nil {
			req.Labels = p.Labels
		}
		req.ParentRunID = p.ID
		return fillFromSpec(req, p.Spec, "run "+p.ID)
	}
	if req.PlanID != "" {
		p, err := e.cfg.Store.GetPlan(ctx, req.PlanID)
		if err != nil {
			return err
		}
		pr.plan = p
		if req.ParentRunID == "" {
			req.ParentRunID = p.ParentID
		}
		if err := fillFromSpec(req, p.Spec, "plan "+p.ID); err != nil {
			return err
		}
		if req.Sandbox == "" || req.Sandbox == sandbox.Auto {
			req.Sandbox = p.Sandbox
		}
	}
	if req.ParentRunID != "" {
		parent, err := e.cfg.Store.GetRun(ctx, req.ParentRunID)
		if err != nil {
			return err
		}
		pr.parent = parent
	}
	return nil
}

// commonSpec builds the part of the spec every backend shares, once the
// backend is known to take what the request asks of every backend.
func (e *Engine) commonSpec(ctx context.Context, id, backend string, req api.RunRequest) (sandbox.Spec, error) {
	sb, ok := e.cfg.Sandboxes[backend]
	if !ok {
		return sandbox.Spec{}, badRequest("sandbox %q is not available on this host", backend)
	}
	caps := e.probes.capsOf(ctx, sb)
	if req.Slurm != nil && !caps.SchedulerOptions {
		return sandbox.Spec{}, badRequest("partition, account, qos, slurm options and queue timeout need --sandbox slurm (this run goes to %s)", backend)
	}
	return e.buildSpec(id, caps, req)
}

// admitTo hands the spec to the backend's admission, which fills the
// backend's own options or refuses. A refusal is the request's fault: a
// bad request, its message as written.
func (e *Engine) admitTo(ctx context.Context, backend string, r sandbox.Request, spec *sandbox.Spec) (sandbox.Verdict, error) {
	v, err := e.cfg.Sandboxes[backend].Admit(ctx, r, spec)
	if errors.Is(err, sandbox.ErrRefused) {
		return sandbox.Verdict{}, badRequest("%v", err)
	}
	if err != nil {
		return sandbox.Verdict{}, fmt.Errorf("sandbox %s: admit: %w", backend, err)
	}
	return v, nil
}

// backendRequest is what a backend's Admit sees of a request: the settings it
// may take or refuse, not the wire type; its allow-lists checked entry by
// entry (allowLists).
func backendRequest(req api.RunRequest) (sandbox.Request, error) {
	r := sandbox.Request{
		Isolate: req.Isolate, RW: req.RW, Network: req.Network, AllowRisk: req.AllowRisk, Env: req.Env, GPUs: req.GPUs,
		Image: req.Image, Pull: req.Pull, ReadOnlyRoot: req.ReadOnlyRoot, KeepContainer: req.KeepContainer, User: req.User,
	}
	if s := req.Slurm; s != nil {
		r.Slurm = &sandbox.SlurmSpec{Partition: s.Partition, Account: s.Account, QOS: s.QOS,
			Options: s.Options, QueueTimeout: time.Duration(s.QueueTimeout)}
	}
	var err error
	r.AllowNet, r.SetupAllowNet, err = allowLists(req)
	return r, err
}

// allowLists checks --allow-net and --setup-allow-net entry by entry
// (egress.Parse names the bad one) and returns them in canonical form: the
// backend's admission keeps the run to them, or refuses them.
func allowLists(req api.RunRequest) (run, setup []string, err error) {
	if len(req.AllowNet) == 0 && len(req.SetupAllowNet) == 0 {
		return nil, nil, nil
	}
	r, err := egress.Parse(req.AllowNet)
	if err != nil {
		return nil, nil, badRequest("%v", err)
	}
	su, err := egress.Parse(req.SetupAllowNet)
	if err != nil {
		return nil, nil, badRequest("--setup-allow-net: %v", err)
	}
	if !su.Empty() && len(req.Setup) == 0 {
		return nil, nil, badRequest("--setup-allow-net gives setup commands their network, but the run has no --setup")
	}
	return r.Strings(), su.Strings(), nil
}

// chooseSandbox resolves "auto" (or "") to a backend, with the reason.
func (e *Engine) chooseSandbox(ctx context.Context, want, image string) (string, string, error) {
	switch want {
	case "", sandbox.Auto:
	default:
		if _, ok := e.cfg.Sandboxes[want]; ok {
			return want, "asked for with --sandbox " + want, nil
		}
		switch why, known := e.cfg.Missing[want]; {
		case known:
			return "", "", badRequest("sandbox %s is not available: %s", want, why)
		case slices.Contains(sandbox.Names, want):
			return "", "", badRequest("sandbox %q is not available on this host", want)
		}
		return "", "", badRequest("unknown sandbox %q (want %s or auto)", want, strings.Join(sandbox.Names, ", "))
	}
	name, reason := e.autoChoice(ctx, image)
	return name, reason, nil
}

// autoChoice is --sandbox auto's backend: the first in its order of
// preference that is configured and takes the run, else the last.
func (e *Engine) autoChoice(ctx context.Context, image string) (string, string) {
	order := sandbox.AutoOrder
	fallback := order[len(order)-1]
	var why []string
	for _, name := range order[:len(order)-1] {
		ok, reason := e.takesAuto(ctx, name, image)
		if ok {
			if reason == "" {
				reason = "preferred by --sandbox auto"
			}
			return name, reason
		}
		why = append(why, reason)
	}
	return fallback, strings.Join(append(why, "using the "+fallback+" sandbox"), "; ")
}

// takesAuto asks one of auto's backends whether it takes a run of image
// (the default image when "") now, cached as its health is (autocache.go),
// and why; a configured backend that is no AutoCandidate takes any, with
// no reason of its own.
func (e *Engine) takesAuto(ctx context.Context, name, image string) (bool, string) {
	if image == "" {
		image = e.cfg.DefaultImage
	}
	sb, ok := e.cfg.Sandboxes[name]
	if !ok {
		return false, title(name) + " is not configured on this host"
	}
	c, ok := sb.(sandbox.AutoCandidate)
	if !ok {
		return true, ""
	}
	return e.probes.takesAuto(ctx, c, name, image)
}

// title is a backend's name as a reason's sentence starts with it.
func title(name string) string {
	if name == "" {
		return name
	}
	return strings.ToUpper(name[:1]) + name[1:]
}

// buildSpec turns a validated request into the common part of the spec,
// with real env values; the backend's admission adds its own options.
func (e *Engine) buildSpec(id string, caps sandbox.Capabilities, req api.RunRequest) (sandbox.Spec, error) {
	envReq := req
	if caps.CleanEnv {
		// A container never inherits the host's environment (its PATH,
		// HOME, ... would be wrong there): only overrides and allowlisted names.
		envReq.CleanEnv = true
	}
	env, err := resolveEnv(envReq)
	if err != nil {
		return sandbox.Spec{}, err
	}
	dir := e.runDir(id)
	return sandbox.Spec{
		RunID:     id,
		Command:   req.Command,
		Shell:     req.Shell,
		Workdir:   req.Workdir,
		Env:       env,
		CleanEnv:  true, // env is fully resolved here from the client's
		Stdin:     req.Stdin,
		StdinFile: req.StdinFile,
		Setup:     req.Setup,
		Assets:    assets(req.Assets),
		Timeout:   time.Duration(req.Timeout),
		Grace:     time.Duration(req.Grace),
		Limits:    sandbox.Limits(req.Limits),
		LogPath:   filepath.Join(dir, "output.log"),
		StateDir:  filepath.Join(dir, "sandbox"),
		Network:   req.Network,
		GPUs:      req.GPUs,
	}, nil
}

// resolveEnv builds the child's environment from the client's: inherited
// plus overrides, or (clean) only the allowlisted names plus overrides.
func resolveEnv(req api.RunRequest) ([]string, error) {
	client := map[string]string{}
	for _, kv := range req.ClientEnv {
		if k, v, ok := strings.Cut(kv, "="); ok {
			client[k] = v
		}
	}
	var env []string
	seen := map[string]int{}
	add := func(k, v string) {
		if i, ok := seen[k]; ok {
			env[i] = k + "=" + v
			return
		}
		seen[k] = len(env)
		env = append(env, k+"="+v)
	}
	if req.CleanEnv {
		for _, k := range req.EnvAllow {
			if v, ok := client[k]; ok {
				add(k, v)
			}
		}
	} else {
		for _, kv := range req.ClientEnv {
			if k, v, ok := strings.Cut(kv, "="); ok {
				add(k, v)
			}
		}
	}
	for _, kv := range req.Env {
		k, v, _ := strings.Cut(kv, "=")
		if k == "" {
			return nil, badRequest("env %q has no name", kv)
		}
		add(k, v)
	}
	return env, nil
}

// fillFromSpec fills the request's unset fields from a stored spec (a
// plan's, or the run being retried): what the request says wins. The
// store keeps secrets redacted, so a stored secret cannot be replayed; the
// caller is asked to pass it again instead of running with "<redacted>".
func fillFromSpec(req *api.RunRequest, s sandbox.Spec, what string) error {
	if len(req.Command) == 0 {
		req.Command, req.Shell = s.Command, s.Shell
	}
	if req.Workdir == "" {
		req.Workdir = s.Workdir
	}
	if req.Image == "" {
		req.Image = s.Image
	}
	req.Env = append(append([]string(nil), s.Env...), req.Env...)
	if !req.CleanEnv {
		req.CleanEnv = s.CleanEnv
	}
	if len(req.EnvAllow) == 0 {
		req.EnvAllow = s.EnvAllow
	}
	if len(req.Setup) == 0 {
		req.Setup = s.Setup
	}
	if len(req.Assets) == 0 {
		for _, a := range s.Assets {
			req.Assets = append(req.Assets, api.Asset(a))
		}
	}
	if req.StdinFile == "" && len(req.Stdin) == 0 {
		req.StdinFile = s.StdinFile
	}
	if req.Timeout == 0 {
		req.Timeout = api.Duration(s.Timeout)
	}
	if req.Grace == 0 {
		req.Grace = api.Duration(s.Grace)
	}
	if req.Limits.MemoryBytes == 0 {
		req.Limits.MemoryBytes = s.Limits.MemoryBytes
	}
	if req.Limits.CPUs == 0 {
		req.Limits.CPUs = s.Limits.CPUs
	}
	if req.Limits.Pids == 0 {
		req.Limits.Pids = s.Limits.Pids
	}
	if req.Network == "" {
		req.Network = s.Network
	}
	if req.GPUs == "" {
		req.GPUs = s.GPUs
	}
	if !req.ReadOnlyRoot {
		req.ReadOnlyRoot = s.ReadOnlyRoot
	}
	if req.Slurm == nil && s.Slurm != nil {
		req.Slurm = &api.SlurmRequest{Partition: s.Slurm.Partition, Account: s.Slurm.Account, QOS: s.Slurm.QOS,
			Options: s.Slurm.Options, QueueTimeout: api.Duration(s.Slurm.QueueTimeout)}
	}
	if len(req.AllowNet) == 0 {
		req.AllowNet = s.AllowNet
	}
	if len(req.SetupAllowNet) == 0 {
		req.SetupAllowNet = s.SetupAllowNet
	}
	// Later entries win in resolveEnv, so a value given now replaces a
	// redacted one; only a secret that nobody gave again is refused.
	given := map[string]bool{}
	for _, kv := range req.Env[len(s.Env):] {
		k, _, _ := strings.Cut(kv, "=")
		given[k] = true
	}
	for _, kv := range s.Env {
		if k, v, _ := strings.Cut(kv, "="); v == store.Redacted && !given[k] {
			return badRequest("%s had a secret in %s; pass it again with --env %s=...", what, k, k)
		}
	}
	return nil
}

func assets(in []api.Asset) []sandbox.Asset {
	var out []sandbox.Asset
	for _, a := range in {
		out = append(out, sandbox.Asset(a))
	}
	return out
}
