package mcp

import (
	"strings"
	"testing"
)

// cliOnly are the runbox CLI's commands and flags an agent over MCP has
// no use for: no answer may tell it to use them.
var cliOnly = []string{"runbox logs", "runbox diff", "runbox retry", "--memory", "--sandbox", "--timeout", "--pull", "--image", "--allow-net"}

func noCLIWords(t *testing.T, what, text string) {
	t.Helper()
	for _, w := range cliOnly {
		if strings.Contains(text, w) {
			t.Errorf("%s names the CLI's %q: %s", what, w, text)
		}
	}
}

// Real answers whose daemon text names CLI flags and commands (the
// sandbox the agent asked for, the memory note, a failure's suggestions
// to read the log or raise the timeout) name the MCP tools and
// arguments instead.
func TestAnswersNameMCPNotCLI(t *testing.T) {
	d := startDaemon(t)
	a := newAgent(t, d, t.TempDir())

	var p planOut
	text := a.ok("compute_plan", map[string]any{"backend": "local", "command": "exit 3",
		"backend_data": map[string]any{"recommendations": map[string]any{"sandbox": "process"}}}, &p)
	noCLIWords(t, "compute_plan", text+" "+strings.Join(p.Notes, " ")+" "+p.MemoryReason)
	if !strings.Contains(p.SandboxReason, `backend_data.recommendations.sandbox "process"`) {
		t.Errorf("sandbox_reason %q does not name the argument the agent set", p.SandboxReason)
	}
	var e executeOut
	a.ok("local_execute", map[string]any{"plan_id": p.PlanID}, &e)
	r := a.waitDone(e.RunID)
	text = a.ok("local_status", map[string]any{"run_id": e.RunID}, &r)
	if r.Failure == nil {
		t.Fatalf("exit 3: no failure: %s", text)
	}
	noCLIWords(t, "local_status of a failed run", text)
	if !strings.Contains(text, "local_logs") {
		t.Errorf("the failure does not point to local_logs: %s", text)
	}

	var p2 planOut
	a.ok("compute_plan", map[string]any{"backend": "local", "command": "sleep 30"}, &p2)
	a.ok("local_execute", map[string]any{"plan_id": p2.PlanID, "timeout_minutes": 0.01}, &e)
	r = a.waitDone(e.RunID)
	text = a.ok("local_status", map[string]any{"run_id": e.RunID}, &r)
	if r.Failure == nil || r.Failure.Code != "TIMEOUT" {
		t.Fatalf("want TIMEOUT: %s", text)
	}
	noCLIWords(t, "local_status of a timed-out run", text)
	if !strings.Contains(text, "timeout_minutes") {
		t.Errorf("the timeout's suggestions do not name timeout_minutes: %s", text)
	}
}

// The table's rewrites of the texts runbox's answers use.
func TestMCPText(t *testing.T) {
	for in, want := range map[string]string{
		"image x:1 is not present locally: pull it (docker pull x:1), build it, or pass --pull to let runbox pull it": "backend_data.recommendations.image",
		"Raise the run's memory limit (--memory; it was 64 MiB)":                                                      "backend_data.recommendations.memory",
		"Read the end of the log (`runbox logs 21`) for the program's own error message.":                             `local_logs({run_id: "21"})`,
		"and 3 more (runbox diff 1 2)":                        `local_status of runs "1" and "2"`,
		"asked for with --sandbox docker":                     `backend_data.recommendations.sandbox "docker"`,
		"retry it if it should have finished: runbox retry 7": `parent_run_id "7"`,
	} {
		got := mcpText(in)
		if !strings.Contains(got, want) {
			t.Errorf("mcpText(%q) = %q, want %q in it", in, got, want)
		}
		noCLIWords(t, "mcpText", got)
	}
}
