package mcp

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runbox/runbox/api"
)

func (s *server) listBackends(ctx context.Context, _ *mcpsdk.CallToolRequest, _ noArgs) (*mcpsdk.CallToolResult, backendsOut, error) {
	b, err := s.c.Backends(ctx)
	if err != nil {
		return nil, backendsOut{}, daemonError(err, "", "")
	}
	local := computeBackend{Name: "local", ToolPrefix: "local", Auto: b.Default, AutoReason: mcpText(b.Reason), Sandboxes: []sandboxOut{}}
	var names, other []string
	for _, sb := range b.Backends {
		o := sandboxOut{Name: sb.Name, Available: sb.Available, Detail: mcpText(sb.Detail), Version: sb.Version}
		if !mcpSandboxes[sb.Name] {
			// Slurm runs jobs on a cluster's nodes, and needs settings
			// (partition, account) that MCP has no arguments for.
			o.Available = false
			o.Detail = fmt.Sprintf("not usable over MCP: compute_plan's backend_data.recommendations.sandbox takes process, docker or auto; %s jobs run on the cluster's nodes, not on this machine, and are submitted with the runbox CLI only (runbox run --sandbox %s) — on this machine: %s", sb.Name, sb.Name, orNone(sb.Detail))
			other = append(other, sb.Name)
		} else if sb.Available {
			local.Available = true
			names = append(names, sb.Name)
		}
		local.Sandboxes = append(local.Sandboxes, o)
	}
	if local.Available {
		local.Detail = fmt.Sprintf("runs on this machine in the %s sandbox; free, no approval, supports stop; runs use %s by default (%s)",
			strings.Join(names, " or "), b.Default, local.AutoReason)
	} else {
		local.Detail = "no sandbox can run here: " + local.AutoReason
	}
	if len(other) > 0 {
		local.Detail += fmt.Sprintf("; %s: CLI only, not over MCP", strings.Join(other, ", "))
	}
	out := backendsOut{Backends: []computeBackend{local}}
	return textResult("local: available=%v — %s", local.Available, local.Detail), out, nil
}

// mcpSandboxes are the sandboxes compute_plan can ask for.
var mcpSandboxes = map[string]bool{"process": true, "docker": true}

func orNone(s string) string {
	if s == "" {
		return "no details"
	}
	return s
}

func (s *server) plan(ctx context.Context, _ *mcpsdk.CallToolRequest, in planIn) (*mcpsdk.CallToolResult, planOut, error) {
	if in.Backend != "local" {
		return nil, planOut{}, toolError("backend %q is not served here: this server has only backend \"local\" (see list_compute_backends)", in.Backend)
	}
	argv, shell, err := parseCommand(in.Command)
	if err != nil {
		return nil, planOut{}, err
	}
	wd := in.Workdir
	if wd == "" {
		wd = s.o.Workdir
	}
	if !filepath.IsAbs(wd) {
		return nil, planOut{}, toolError("workdir %q is not an absolute path: give an absolute directory, or leave it out to run in %s", wd, s.o.Workdir)
	}
	if st, err := os.Stat(wd); err != nil || !st.IsDir() {
		return nil, planOut{}, toolError("workdir %s is not a directory on this machine", wd)
	}
	req := api.RunRequest{
		Command: argv, Shell: shell, Workdir: wd,
		TaskDescription: in.TaskDescription, ScriptPath: in.ScriptPath, ParentRunID: in.ParentRunID,
		ClientEnv: s.o.Env, User: fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()),
		Grace: api.Duration(10 * time.Second),
	}
	if req.ScriptPath == "" && shell {
		req.ScriptPath = scriptIn(argv[0])
	}
	var overridden []string
	if in.BackendData != nil && in.BackendData.Recommendations != nil {
		if overridden, err = applyRecommendations(&req, in.BackendData.Recommendations); err != nil {
			return nil, planOut{}, err
		}
	}
	if in.ParentRunID != "" {
		if _, err := s.c.Get(ctx, in.ParentRunID); err != nil {
			return nil, planOut{}, daemonError(err, "parent run", in.ParentRunID)
		}
	}
	p, err := s.c.Plan(ctx, req)
	if err != nil {
		return nil, planOut{}, daemonError(err, "plan", "")
	}
	out := planView(p)
	out.Overridden = overridden
	return textResult("%s", planSummary(&out)), out, nil
}

// parseCommand reads compute_plan's command: an argv array, or a string.
// A string of plain words (no quotes, variables, redirections, globs...)
// is split into an argv, which is what sh would run, so the planner sees
// the script and its flags; any other string runs with sh -c.
func parseCommand(v any) (argv []string, shell bool, err error) {
	switch c := v.(type) {
	case string:
		c = strings.TrimSpace(c)
		if c == "" {
			return nil, false, toolError("command is empty: give the command to run, e.g. \"python train.py\"")
		}
		words := strings.Fields(c)
		if strings.ContainsAny(c, "|&;<>()$`\\\"'*?[]#~{}\n") || strings.Contains(words[0], "=") {
			return []string{c}, true, nil
		}
		return words, false, nil
	case []any:
		if len(c) == 0 {
			return nil, false, toolError("command is an empty array: give the program and its arguments, e.g. [\"python\", \"train.py\"]")
		}
		for i, a := range c {
			s, ok := a.(string)
			if !ok {
				return nil, false, toolError("command[%d] is not a string: every argument must be a string", i)
			}
			argv = append(argv, s)
		}
		if argv[0] == "" {
			return nil, false, toolError("command[0] is empty: it must name the program to run")
		}
		return argv, false, nil
	case nil:
		return nil, false, toolError("command is missing: give the command to run, as a string or an argv array")
	}
	return nil, false, toolError("command must be a string or an array of strings, not %T", v)
}

// scriptIn finds the script a shell command line runs, for the planner:
// the first word ending in a script extension.
func scriptIn(line string) string {
	for _, w := range strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(" \t\n;&|()<>'\"", r) }) {
		switch filepath.Ext(w) {
		case ".py", ".sh", ".bash", ".ipynb":
			return w
		}
	}
	return ""
}

// applyRecommendations puts the agent's overrides into req, where they win
// over the planner's, and names them.
func applyRecommendations(req *api.RunRequest, r *recommendations) ([]string, error) {
	var names []string
	if r.Sandbox != "" {
		req.Sandbox = r.Sandbox
		names = append(names, "sandbox")
	}
	if r.Image != "" {
		req.Image = r.Image
		names = append(names, "image")
	}
	if r.TimeoutMinutes != 0 {
		d, err := minutes(r.TimeoutMinutes, "backend_data.recommendations.timeout_minutes")
		if err != nil {
			return nil, err
		}
		req.Timeout = api.Duration(d)
		names = append(names, "timeout_minutes")
	}
	if r.Memory != nil {
		n, err := parseMemory(r.Memory)
		if err != nil {
			return nil, err
		}
		req.Limits.MemoryBytes = n
		names = append(names, "memory")
	}
	if len(r.AllowNet) > 0 {
		req.AllowNet = r.AllowNet
		names = append(names, "allow_net")
	}
	return names, nil
}

// minutes checks a timeout in minutes and converts it.
func minutes(m float64, name string) (time.Duration, error) {
	if math.IsNaN(m) || m <= 0 || m > maxTimeoutMins {
		return 0, toolError("%s is %v: give a number of minutes above 0 and at most %d (7 days)", name, m, maxTimeoutMins)
	}
	return time.Duration(m * float64(time.Minute)), nil
}

// parseMemory reads a memory size: bytes as a number, or "512m", "4g",
// "8GiB", "1.5GB" (binary multiples, as docker reads them).
func parseMemory(v any) (int64, error) {
	bad := toolError("backend_data.recommendations.memory %v: give a size such as \"512m\", \"4g\" or \"8GiB\", or a number of bytes (at least 4m)", v)
	var n float64
	switch m := v.(type) {
	case float64:
		n = m
	case string:
		s := strings.ToLower(strings.TrimSpace(m))
		s = strings.TrimSuffix(strings.TrimSuffix(s, "b"), "i")
		mult := 1.0
		if s != "" {
			switch s[len(s)-1] {
			case 'k':
				mult = 1 << 10
			case 'm':
				mult = 1 << 20
			case 'g':
				mult = 1 << 30
			case 't':
				mult = 1 << 40
			}
			if mult > 1 {
				s = strings.TrimSpace(s[:len(s)-1])
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, bad
		}
		n = f * mult
	default:
		return 0, bad
	}
	if math.IsNaN(n) || n < 4<<20 || n > 1<<50 {
		return 0, bad
	}
	return int64(n), nil
}

func (s *server) execute(ctx context.Context, _ *mcpsdk.CallToolRequest, in executeIn) (*mcpsdk.CallToolResult, executeOut, error) {
	p, err := s.c.GetPlan(ctx, in.PlanID)
	if err != nil {
		return nil, executeOut{}, daemonError(err, "plan", in.PlanID)
	}
	req := api.RunRequest{
		PlanID: p.ID, ParentRunID: in.ParentRunID, Smoke: p.Result.Smoke != nil,
		ClientEnv: s.o.Env, User: fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()),
	}
	if in.TimeoutMinutes != 0 {
		d, err := minutes(in.TimeoutMinutes, "timeout_minutes")
		if err != nil {
			return nil, executeOut{}, err
		}
		req.Timeout = api.Duration(d)
	}
	if in.ParentRunID != "" {
		parent, err := s.c.Get(ctx, in.ParentRunID)
		if err != nil {
			return nil, executeOut{}, daemonError(err, "parent run", in.ParentRunID)
		}
		if p.ParentRunID != "" && parent.ID != p.ParentRunID {
			return nil, executeOut{}, toolError("parent_run_id %s (run %s) contradicts the plan's parent_run_id %s: plan %s was made to retry run %s. Leave parent_run_id out to keep the plan's, or call compute_plan again with parent_run_id %s",
				quoteID(in.ParentRunID), parent.ID, p.ParentRunID, p.ID, p.ParentRunID, quoteID(in.ParentRunID))
		}
	}
	r, err := s.c.Submit(ctx, req)
	if err != nil {
		return nil, executeOut{}, daemonError(err, "plan", in.PlanID)
	}
	out := executeOut{
		RunID: r.ID, PlanID: p.ID, State: string(r.State), Smoke: req.Smoke,
		ParentRunID: r.ParentRunID, Attempt: r.Attempt, Sandbox: r.Sandbox,
		Next: fmt.Sprintf("local_wait({run_id: %q}) blocks until it ends; local_status({run_id: %q}) checks without blocking", r.ID, r.ID),
	}
	text := fmt.Sprintf("started run %s (attempt %d, %s sandbox)", r.ID, r.Attempt, r.Sandbox)
	if r.ParentRunID != "" {
		text += ", a retry of " + r.ParentRunID
	}
	if req.Smoke {
		text += "; the smoke test runs first: " + strings.Join(p.Result.Smoke.Command, " ")
	}
	return textResult("%s. Next: %s.", text, out.Next), out, nil
}
