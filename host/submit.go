package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/internal/jsonfile"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

// ErrBadRequest marks requests that can never succeed as given.
var ErrBadRequest = errors.New("bad request")

func badRequest(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrBadRequest, fmt.Sprintf(format, a...))
}

// checkLimits refuses limits that cannot mean what they say: a negative
// duration or count is never "no limit" (clients other than the CLI, such
// as agents, reach the daemon directly).
func checkLimits(req api.RunRequest) error {
	for _, d := range []struct {
		name string
		v    api.Duration
	}{{"timeout", req.Timeout}, {"grace", req.Grace}, {"stall_timeout", req.StallTimeout}} {
		if d.v < 0 {
			return badRequest("%s %s is negative", d.name, d.v)
		}
	}
	switch {
	case req.Limits.MemoryBytes < 0:
		return badRequest("memory limit %d is negative", req.Limits.MemoryBytes)
	case req.Limits.CPUs < 0:
		return badRequest("cpus %g is negative", req.Limits.CPUs)
	case req.Limits.Pids < 0:
		return badRequest("pids %d is negative", req.Limits.Pids)
	}
	return nil
}

// Submit creates a run from req and queues it. The run is in the store
// (state queued) before Submit returns.
func (e *Engine) Submit(ctx context.Context, req api.RunRequest) (*store.Run, error) {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if req.IdempotencyKey != "" {
		// The same submission sent again (its answer was lost) gets the
		// run it created, never a second one.
		if run, err := e.cfg.Store.SubmittedRun(ctx, req.IdempotencyKey); err == nil {
			return e.Get(ctx, run.ID)
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	var plan *store.Plan
	if req.PlanID != "" {
		p, err := e.cfg.Store.GetPlan(ctx, req.PlanID)
		if err != nil {
			return nil, err
		}
		plan = p
		if req.ParentRunID == "" {
			req.ParentRunID = p.ParentID
		}
		if err := fillFromSpec(&req, p.Spec, "plan "+p.ID); err != nil {
			return nil, err
		}
	}
	if len(req.Command) == 0 {
		return nil, badRequest("no command given")
	}
	if err := checkLimits(req); err != nil {
		return nil, err
	}
	if err := checkInput(req); err != nil { // checkinput.go
		return nil, err
	}
	fromPlan := (req.Sandbox == "" || req.Sandbox == sandbox.Auto) && plan != nil
	if fromPlan {
		req.Sandbox = plan.Sandbox
	}
	backend, reason, err := e.chooseSandbox(ctx, req.Sandbox, req.Image)
	if err != nil {
		return nil, err
	}
	if err := isolationElsewhere(backend, req); err != nil { // isolate.go
		return nil, err
	}
	if err := e.checkImage(ctx, backend, req); err != nil {
		return nil, err
	}
	if fromPlan {
		reason = "planned: " + plan.SandboxReason
	}
	// The run's place in line is taken with its id (engine.go: admit), so
	// runs start in creation order; every return before the run is
	// created gives the place back.
	adm, err := e.admit()
	if err != nil {
		return nil, err
	}
	admitted := false
	defer func() {
		if !admitted {
			e.abandon(adm)
		}
	}()
	id := adm.id
	spec, err := e.buildSpec(id, backend, req)
	if err != nil {
		return nil, err
	}
	// The record of what ran, and the --snapshot copy (record.go).
	rec := e.takeRecord(req, spec, backend)
	if req.Snapshot {
		defer func() {
			if !admitted {
				e.removeSnapshot(id)
			}
		}()
		if err := e.takeSnapshot(ctx, id, &spec, rec); err != nil {
			return nil, err
		}
	}
	refusal, err := e.submitIsolation(ctx, &spec, backend, req, plan) // isolate.go
	if err != nil {
		return nil, err
	}
	envNote := confineEnv(&spec, req) // isolate.go
	run := &store.Run{
		ID:            id,
		ParentID:      req.ParentRunID,
		Attempt:       1,
		State:         store.Queued,
		Sandbox:       backend,
		SandboxReason: reason,
		Spec:          storedSpec(spec, req),
		Fingerprint:   Fingerprint(req.Command),
		SubmitKey:     req.IdempotencyKey,
		Name:          req.Name,
		Labels:        req.Labels,
		CreatedAt:     adm.created,
		Reason:        "queued",
	}
	if plan != nil {
		run.PlanID = plan.ID
	}
	if req.Snapshot {
		run.Spec.Workdir = req.Workdir // the workspace; the record names the copy that runs
	}
	if req.StallTimeout > 0 {
		if run.Labels == nil {
			run.Labels = map[string]string{}
		}
		run.Labels[labelStall] = time.Duration(req.StallTimeout).String()
	}
	if req.ParentRunID != "" {
		parent, err := e.cfg.Store.GetRun(ctx, req.ParentRunID)
		if err != nil {
			return nil, err
		}
		run.ParentID = parent.ID
		run.Attempt = parent.Attempt + 1
		if run.PlanID == "" {
			run.PlanID = parent.PlanID
		}
	}
	if refusal != "" {
		return nil, e.refuse(ctx, run, refusal)
	}
	p := &pendingRun{spec: spec, backend: backend}
	if req.Smoke {
		if plan == nil || plan.Result.Smoke == nil {
			return nil, badRequest("--smoke needs a plan with a smoke command (runbox plan found none)")
		}
		sm := spec
		sm.Command = plan.Result.Smoke.Command
		sm.LogPath = filepath.Join(e.runDir(id), "smoke", "output.log")
		sm.StateDir = filepath.Join(e.runDir(id), "smoke", "sandbox")
		p.smoke = &sm
	}
	// A run that can start at once is created in preparing: one synced
	// write instead of two.
	r := adm.slot
	if r != nil {
		run.State, run.Reason = store.Preparing, "preparing"
	}
	// The spec waits on disk until the run has started, so that a daemon
	// that dies first leaves the next one enough to start it. It is in
	// place before the run's record is: a record without it would be a run
	// the next daemon can neither start nor find (it used to be written
	// while the store synced, and a daemon killed in between lost the run).
	if err := savePending(e.runDir(id), p); err != nil {
		return nil, fmt.Errorf("keep the run's spec: %w", err)
	}
	if err := e.cfg.Store.CreateRun(ctx, run); err != nil {
		removeSecrets(e.runDir(id))
		os.Remove(e.runDir(id)) // only if empty: an id is never reused
		var dup *store.DuplicateSubmitError
		if errors.As(err, &dup) {
			return e.Get(ctx, dup.RunID)
		}
		return nil, err
	}
	admitted = true
	if envNote != "" {
		if _, err := e.cfg.Store.AppendEvent(ctx, store.Event{RunID: id, Time: e.cfg.Now(), Type: store.EventNote, Message: envNote}); err != nil {
			e.log.Warn("run: note", "run", id, "err", err)
		}
	}
	e.saveRecord(ctx, id, rec)
	if r != nil {
		e.launch(r, p)
		return run, nil
	}
	e.ready(adm, p)
	return run, nil
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
	slurmFromSpec(req, s)
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

// chooseSandbox resolves "auto" (or "") to a backend, with the reason.
func (e *Engine) chooseSandbox(ctx context.Context, want, image string) (string, string, error) {
	switch want {
	case sandbox.Process, sandbox.Docker, sandbox.Slurm:
		if _, ok := e.cfg.Sandboxes[want]; !ok {
			if want == sandbox.Slurm {
				return "", "", badRequest("sandbox slurm is not available: no sbatch on PATH and SLURM_RESTD_URL unset (install slurm-client and point it at the cluster)")
			}
			return "", "", badRequest("sandbox %q is not available on this host", want)
		}
		return want, "asked for with --sandbox " + want, nil
	case "", sandbox.Auto:
	default:
		return "", "", badRequest("unknown sandbox %q (want process, docker, slurm or auto)", want)
	}
	d, ok := e.cfg.Sandboxes[sandbox.Docker]
	if !ok || runtime.GOOS != "linux" {
		return sandbox.Process, "Docker is not configured on this host; using the process sandbox", nil
	}
	h := e.probes.healthOf(ctx, d)
	if !h.Available {
		return sandbox.Process, "Docker is not available (" + h.Detail + "); using the process sandbox", nil
	}
	if image == "" {
		image = e.cfg.DefaultImage
	}
	if ic, ok := d.(imageChecker); ok && !e.probes.hasImage(ctx, ic, image) {
		return sandbox.Process, fmt.Sprintf("Docker is up but image %s is not present locally (pull or build it, or pass --image); using the process sandbox", image), nil
	}
	return sandbox.Docker, "Docker is available on Linux; containers isolate the run (image " + image + ")", nil
}

// checkImage refuses a container run whose image is not present locally,
// at once, unless the request allows a pull: a pull can be gigabytes, or
// hang offline, and nobody asked for one.
func (e *Engine) checkImage(ctx context.Context, backend string, req api.RunRequest) error {
	if backend != sandbox.Docker || req.Pull {
		return nil
	}
	d := e.cfg.Sandboxes[sandbox.Docker]
	ic, ok := d.(imageChecker)
	if !ok || !e.probes.healthOf(ctx, d).Available {
		return nil // a daemon that does not answer is the sandbox's to report
	}
	image := req.Image
	if image == "" {
		image = e.cfg.DefaultImage
	}
	if image == "" || ic.HasImage(ctx, image) {
		return nil
	}
	return badRequest("image %s is not present locally: pull it (docker pull %s), build it, or pass --pull to let runbox pull it", image, image)
}

// buildSpec turns a request into the sandbox spec, with real env values.
func (e *Engine) buildSpec(id, backend string, req api.RunRequest) (sandbox.Spec, error) {
	wd := req.Workdir
	if wd == "" {
		return sandbox.Spec{}, badRequest("no working directory given")
	}
	if !filepath.IsAbs(wd) {
		return sandbox.Spec{}, badRequest("working directory %q is not absolute", wd)
	}
	if st, err := os.Stat(wd); err != nil || !st.IsDir() {
		return sandbox.Spec{}, badRequest("working directory %s does not exist", wd)
	}
	envReq := req
	if backend == sandbox.Docker {
		// A container never inherits the host's environment (its PATH,
		// HOME, ... would be wrong there): only overrides and allowlisted names.
		envReq.CleanEnv = true
	}
	env, err := resolveEnv(envReq)
	if err != nil {
		return sandbox.Spec{}, err
	}
	for _, kv := range req.Env {
		if !strings.Contains(kv, "=") {
			return sandbox.Spec{}, badRequest("env %q is not KEY=VALUE", kv)
		}
	}
	switch req.Network {
	case "", "none", "bridge", "host":
	default:
		return sandbox.Spec{}, badRequest("unknown network %q (want none, bridge or host)", req.Network)
	}
	image := req.Image
	if backend == sandbox.Docker && image == "" {
		image = e.cfg.DefaultImage
	}
	sl, err := slurmSpec(backend, req)
	if err != nil {
		return sandbox.Spec{}, err
	}
	dir := e.runDir(id)
	return sandbox.Spec{
		Slurm:         sl,
		RunID:         id,
		Command:       req.Command,
		Shell:         req.Shell,
		Workdir:       wd,
		Env:           env,
		CleanEnv:      true, // env is fully resolved here from the client's
		Stdin:         req.Stdin,
		StdinFile:     req.StdinFile,
		Setup:         req.Setup,
		Assets:        assets(req.Assets),
		Timeout:       time.Duration(req.Timeout),
		Grace:         time.Duration(req.Grace),
		Limits:        sandbox.Limits(req.Limits),
		LogPath:       filepath.Join(dir, "output.log"),
		StateDir:      filepath.Join(dir, "sandbox"),
		Image:         image,
		Network:       req.Network,
		ReadOnlyRoot:  req.ReadOnlyRoot,
		GPUs:          req.GPUs,
		KeepContainer: req.KeepContainer,
		User:          req.User,
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

// storedSpec is what the store keeps: the user's own env overrides (the
// store redacts secrets), not the whole inherited environment.
func storedSpec(s sandbox.Spec, req api.RunRequest) sandbox.Spec {
	s.Env = append([]string(nil), req.Env...)
	s.CleanEnv = req.CleanEnv
	s.EnvAllow = req.EnvAllow
	s.Stdin = nil
	return s
}

// A queued run's full spec (with the real environment) waits in a 0600 file
// in its run directory, so a daemon restart can still start it; the file is
// removed as soon as the run starts. The store only ever sees redacted env.
const pendingFile = "pending.json"

type pendingJSON struct {
	Spec  sandbox.Spec  `json:"spec"`
	Smoke *sandbox.Spec `json:"smoke,omitempty"`
}

func savePending(dir string, p *pendingRun) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// Written whole or not at all: a daemon killed mid-write must not
	// leave a torn spec that the next one cannot read.
	return jsonfile.Write(filepath.Join(dir, pendingFile), pendingJSON{Spec: p.spec, Smoke: p.smoke}, false)
}

func loadPending(dir string) (*pendingRun, error) {
	b, err := os.ReadFile(filepath.Join(dir, pendingFile))
	if err != nil {
		return nil, err
	}
	var pj pendingJSON
	if err := json.Unmarshal(b, &pj); err != nil {
		return nil, err
	}
	return &pendingRun{spec: pj.Spec, smoke: pj.Smoke}, nil
}

// removeSecrets deletes the queued spec once the run has started.
func removeSecrets(dir string) {
	_ = os.Remove(filepath.Join(dir, pendingFile))
	_ = os.Remove(filepath.Join(dir, pendingFile+jsonfile.TmpSuffix))
}

// Fingerprint groups runs of the same job: the program and, for
// interpreters, the script — not the arguments.
func Fingerprint(cmd []string) string {
	if len(cmd) == 0 {
		return ""
	}
	parts := []string{filepath.Base(cmd[0])}
	for _, a := range cmd[1:] {
		if strings.HasPrefix(a, "-") {
			if a == "-m" || a == "-c" {
				parts = append(parts, a)
				continue
			}
			continue
		}
		parts = append(parts, a)
		break
	}
	return strings.Join(parts, " ")
}

func assets(in []api.Asset) []sandbox.Asset {
	var out []sandbox.Asset
	for _, a := range in {
		out = append(out, sandbox.Asset(a))
	}
	return out
}
