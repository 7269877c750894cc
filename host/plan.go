package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v4/disk"
	"github.com/shirou/gopsutil/v4/mem"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sdk"
	"github.com/runbox/runbox/store"
)

// maxScript bounds how much of a script the planner reads.
const maxScript = 1 << 20

// Plan asks the planner plugins how req should run, stores the plan and
// returns it. Nothing is run. Explicit choices in req win over the
// planner's recommendations.
func (e *Engine) Plan(ctx context.Context, req api.RunRequest) (*store.Plan, error) {
	if err := validate(req); err != nil { // validate.go
		return nil, err
	}
	if err := e.containerOnly(ctx, req); err != nil { // request.go
		return nil, err
	}
	var parentID string
	if req.ParentRunID != "" {
		parent, err := e.cfg.Store.GetRun(ctx, req.ParentRunID)
		if err != nil {
			return nil, err
		}
		parentID = parent.ID
	}
	facts := e.HostFacts(ctx, req.Workdir)
	scriptPath := req.ScriptPath
	if scriptPath == "" {
		scriptPath = FindScript(req.Command, req.Workdir)
	}
	in := sdk.PlanInput{
		Command:         req.Command,
		Workdir:         req.Workdir,
		ScriptPath:      scriptPath,
		TaskDescription: req.TaskDescription,
		Host:            facts,
	}
	missing := false
	if scriptPath != "" {
		var err error
		in.ScriptText, err = readScript(scriptPath, req.Workdir)
		missing = errors.Is(err, fs.ErrNotExist) && !onPath(req.Command, scriptPath)
	}
	if exp, err := e.cfg.Store.Experience(ctx, Fingerprint(req.Command), 20); err == nil && exp.Runs > 0 {
		in.Experience = &exp
	}
	var out sdk.PlanOutput
	if e.cfg.Judge != nil {
		out = e.cfg.Judge.Plan(ctx, in)
	}
	if missing {
		scriptNotFound(&out, scriptPath, req.Workdir)
	}
	rec := out.Recommendation
	if rec == nil {
		rec = &sdk.Recommendation{}
	}
	backend, reason, err := "", "", error(nil)
	if cluster, why := e.clusterFits(ctx, req, facts, in.Experience); why != "" {
		backend, reason = cluster, why
	} else if backend, reason, err = e.planSandbox(ctx, &req, rec); err != nil {
		return nil, err
	}
	if req.Timeout == 0 && rec.TimeoutSeconds > 0 {
		req.Timeout = api.Duration(time.Duration(rec.TimeoutSeconds) * time.Second)
	}
	if req.Limits.MemoryBytes == 0 && rec.MemoryBytes > 0 {
		req.Limits.MemoryBytes = rec.MemoryBytes
	}
	caps := e.probes.capsOf(ctx, e.cfg.Sandboxes[backend])
	if req.Network == "" && slices.Contains(caps.Networks, rec.Network) {
		req.Network = rec.Network
	}
	id := store.NewID()
	sreq, err := backendRequest(req) // request.go
	if err != nil {
		return nil, err
	}
	sreq.Planning, sreq.Plan = true, &sandbox.PlanPromise{ID: id, Output: &out}
	var dropped string
	sreq.ProposedAllowNet, dropped = proposedAllowNet(req, out) // allownet.go
	spec, err := e.commonSpec(ctx, id, backend, req)
	if err != nil {
		return nil, err
	}
	v, err := e.admitTo(ctx, backend, sreq, &spec)
	if err != nil {
		return nil, err
	}
	for _, note := range []string{dropped, v.Note} {
		if note != "" {
			out.Notes = append(out.Notes, note)
		}
	}
	out.Notes = append(out.Notes, limitsNote(caps, spec))
	plan := &store.Plan{
		ID:              id,
		CreatedAt:       e.cfg.Now(),
		Command:         req.Command,
		Workdir:         req.Workdir,
		ScriptPath:      scriptPath,
		TaskDescription: req.TaskDescription,
		ParentID:        parentID,
		Spec:            storedSpec(spec, req),
		Sandbox:         backend,
		SandboxReason:   reason,
		Result:          out,
		Host:            facts,
		Experience:      in.Experience,
	}
	if err := e.cfg.Store.PutPlan(ctx, plan); err != nil {
		return nil, err
	}
	return plan, nil
}

// limitsNote states the memory, process-count and CPU policy the run will
// get on its backend: the limit, how it is enforced, or that there is none.
func limitsNote(caps sandbox.Capabilities, spec sandbox.Spec) string {
	mem := "memory: no limit (set --memory to cap it)"
	if spec.Limits.MemoryBytes > 0 {
		mem = fmt.Sprintf("memory: %d MiB", spec.Limits.MemoryBytes>>20)
	}
	if how := caps.Limits["memory"]; spec.Limits.MemoryBytes > 0 && how != "" {
		mem += ", enforced by " + how
	}
	pids := ""
	if how := caps.Limits["pids"]; how != "" {
		pids = "pids: " + how
	}
	if spec.Limits.Pids > 0 {
		pids = fmt.Sprintf("pids: %d", spec.Limits.Pids)
	}
	note := mem
	if pids != "" {
		note += "; " + pids
	}
	if c := spec.Limits.CPUs; c > 0 {
		note += fmt.Sprintf("; cpus: %g", c)
		if how := caps.Limits["cpus"]; how != "" {
			note += ", enforced by " + how
		} else {
			note += ", not enforced here"
		}
	}
	return note
}

// clusterLongRun is how long similar runs must have taken for a plan to
// send the next one to the cluster rather than keep a local machine busy.
const clusterLongRun = 30 * time.Minute

// clusterFits says why a plan with no sandbox named should go to a
// cluster, and to which backend (the first in sandbox.Names whose
// capabilities name a cluster), or "" when it should not: a cluster must
// be configured and answering, and the run be long by experience or ask
// for more memory or GPUs than this machine has.
func (e *Engine) clusterFits(ctx context.Context, req api.RunRequest, facts sdk.HostFacts, exp *sdk.Experience) (backend, why string) {
	if req.Sandbox != "" && req.Sandbox != sandbox.Auto {
		return "", ""
	}
	backend, sb := e.backendWith(ctx, func(c sandbox.Capabilities) bool { return c.Cluster != "" })
	if sb == nil || !takes(e.probes.capsOf(ctx, sb), req) {
		return "", ""
	}
	switch {
	case exp != nil && exp.MedianDurationSeconds > clusterLongRun.Seconds():
		why = fmt.Sprintf("similar runs took %s (median of %d), longer than %s: the cluster keeps this machine free",
			time.Duration(exp.MedianDurationSeconds*float64(time.Second)).Round(time.Minute), exp.Runs, clusterLongRun)
	case req.Limits.MemoryBytes > 0 && facts.MemoryBytes > 0 && uint64(req.Limits.MemoryBytes) > facts.MemoryBytes:
		why = fmt.Sprintf("it asks for %d MiB of memory and this machine has %d MiB", req.Limits.MemoryBytes>>20, facts.MemoryBytes>>20)
	case gpusAsked(req.GPUs) > len(facts.GPUs):
		why = fmt.Sprintf("it asks for GPUs (%s) and this machine has %d", req.GPUs, len(facts.GPUs))
	default:
		return "", ""
	}
	if h := e.probes.healthOf(ctx, sb); !h.Available {
		return "", "" // the reasons stand, but a cluster that does not answer cannot take it
	}
	return backend, e.probes.capsOf(ctx, sb).Cluster + ": " + why
}

// takes says whether a backend with caps takes what req asks of the
// run's confinement and network (a cluster confines nothing: a run with
// --isolate, --network or --allow-net stays here rather than be refused
// there).
func takes(caps sandbox.Capabilities, req api.RunRequest) bool {
	switch {
	case req.Isolate != "" && req.Isolate != sandbox.IsolateNone && !slices.Contains(caps.Isolation, req.Isolate):
		return false
	case req.Network != "" && !slices.Contains(caps.Networks, req.Network):
		return false
	case (len(req.AllowNet) > 0 || len(req.SetupAllowNet) > 0) && !caps.AllowNet:
		return false
	}
	return true
}

// backendWith is the first backend, in sandbox.Names order, whose
// capabilities have what has asks for; nil if none.
func (e *Engine) backendWith(ctx context.Context, has func(sandbox.Capabilities) bool) (string, sandbox.Sandbox) {
	for _, name := range sandbox.Names {
		if sb, ok := e.cfg.Sandboxes[name]; ok && has(e.probes.capsOf(ctx, sb)) {
			return name, sb
		}
	}
	return "", nil
}

// gpusAsked is how many GPUs a --gpus value asks for (all: at least one).
func gpusAsked(v string) int {
	switch {
	case v == "":
		return 0
	case v == "all":
		return 1
	case strings.HasPrefix(v, "device="):
		return len(strings.Split(strings.TrimPrefix(v, "device="), ","))
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 1
	}
	return n
}

// planSandbox settles where a planned run goes. An explicit --sandbox
// wins. Otherwise the planner's recommendation is taken only if it can run
// here: one of auto's backends (sandbox.AutoOrder), configured and taking
// the run exactly as for --sandbox auto (a container: Docker up and the
// image present locally); if not, the plan says why it fell back to
// auto's choice.
func (e *Engine) planSandbox(ctx context.Context, req *api.RunRequest, rec *sdk.Recommendation) (string, string, error) {
	if req.Sandbox != "" && req.Sandbox != sandbox.Auto {
		return e.chooseSandbox(ctx, req.Sandbox, req.Image)
	}
	want := rec.Sandbox
	if !slices.Contains(sandbox.AutoOrder, want) {
		return e.chooseSandbox(ctx, sandbox.Auto, req.Image)
	}
	image := req.Image
	if image == "" {
		image = rec.Image
	}
	ok, reason := e.takesAuto(ctx, want, image) // request.go
	if !ok {
		backend, why := e.autoChoice(ctx, image)
		return backend, "the planner recommends " + title(want) + " (" + rec.SandboxReason + ") but: " + why, nil
	}
	if req.Image == "" && e.probes.capsOf(ctx, e.cfg.Sandboxes[want]).Images {
		req.Image = image
	}
	switch {
	case rec.SandboxReason != "":
		reason = rec.SandboxReason
	case reason == "":
		reason = "recommended by the planner"
	}
	return want, reason, nil
}

// FindScript returns the script a command runs, if it names one: the first
// argument ending in .py/.sh/.bash, or the file after an interpreter.
func FindScript(cmd []string, workdir string) string {
	for i, a := range cmd {
		if strings.HasPrefix(a, "-") {
			continue
		}
		ext := filepath.Ext(a)
		if ext == ".py" || ext == ".sh" || ext == ".bash" || ext == ".ipynb" {
			return a
		}
		if i == 0 {
			if p := resolveInWorkdir(a, workdir); p != "" && isTextScript(p) {
				return a
			}
		}
	}
	return ""
}

func resolveInWorkdir(p, wd string) string {
	if !filepath.IsAbs(p) {
		if !strings.Contains(p, "/") {
			return ""
		}
		p = filepath.Join(wd, p)
	}
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
		return p
	}
	return ""
}

func isTextScript(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 2)
	n, _ := f.Read(b)
	return n == 2 && string(b) == "#!"
}

// onPath reports whether the "script" a command names is the program it
// starts, a bare name found on PATH: not a script missing from the workdir.
func onPath(cmd []string, script string) bool {
	if strings.Contains(script, "/") || len(cmd) == 0 || cmd[0] != script {
		return false
	}
	_, err := exec.LookPath(script)
	return err == nil
}

// scriptNotFound makes a missing script the plan's first risk. The
// planner, given no script text, could not tell a missing script from one
// it was not shown: it found no risk, and the run failed FILE_NOT_FOUND.
func scriptNotFound(out *sdk.PlanOutput, script, workdir string) {
	out.Risks = append([]sdk.Risk{{Severity: sdk.SeverityHigh, Code: "script-not-found", Evidence: script,
		Message: fmt.Sprintf("the script %s does not exist in the workdir %s, so the run would fail (FILE_NOT_FOUND): put it there, or fix the command or the workdir, and plan again", script, workdir)}},
		out.Risks...)
	// The planner's words for a script it was not shown, where it is not
	// there to show.
	const notShown, absent = "the script text was not provided", "the script does not exist in the workdir"
	for i, n := range out.Notes {
		out.Notes[i] = strings.ReplaceAll(n, notShown, absent)
	}
	if r := out.Recommendation; r != nil {
		r.NetworkReason = strings.ReplaceAll(r.NetworkReason, notShown, absent)
	}
}

func readScript(p, wd string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(wd, p)
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b := make([]byte, maxScript)
	n, _ := f.Read(b)
	return string(b[:n]), nil
}

// HostFacts describes this machine for the planner.
func (e *Engine) HostFacts(ctx context.Context, workdir string) sdk.HostFacts {
	f := sdk.HostFacts{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU()}
	if vm, err := mem.VirtualMemoryWithContext(ctx); err == nil {
		f.MemoryBytes = vm.Total
	}
	if workdir == "" {
		workdir = e.cfg.Home
	}
	if du, err := disk.UsageWithContext(ctx, workdir); err == nil {
		f.DiskFreeBytes = du.Free
	}
	// What the planner calls Docker: the backend that runs images.
	if _, d := e.backendWith(ctx, func(c sandbox.Capabilities) bool { return c.Images }); d != nil {
		h := d.Health(ctx)
		f.DockerAvailable = h.Available
		f.DockerRuntimes = h.Runtimes
	}
	f.GPUs = detectGPUs(ctx)
	return f
}

// detectGPUs lists NVIDIA GPUs via nvidia-smi, and Apple silicon's GPU.
func detectGPUs(ctx context.Context) []sdk.GPU {
	if runtime.GOOS == "darwin" && runtime.GOARCH == "arm64" {
		return []sdk.GPU{{Vendor: "apple", Name: "Apple silicon GPU (Metal)"}}
	}
	smi, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, smi, "--query-gpu=name,memory.total", "--format=csv,noheader,nounits").Output()
	if err != nil {
		return nil
	}
	var gpus []sdk.GPU
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, memMiB, ok := strings.Cut(line, ",")
		if !ok {
			continue
		}
		g := sdk.GPU{Vendor: "nvidia", Name: strings.TrimSpace(name)}
		if m, err := strconv.ParseUint(strings.TrimSpace(memMiB), 10, 64); err == nil {
			g.MemoryBytes = m << 20
		}
		gpus = append(gpus, g)
	}
	return gpus
}
