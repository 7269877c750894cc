package mcp

import (
	"strings"
	"testing"
)

// compute_plan of a command whose script is not in the workdir says so,
// as a risk; with the script there, it does not.
func TestPlanSaysTheScriptIsMissing(t *testing.T) {
	d := startDaemon(t)
	wd := t.TempDir()
	a := newAgent(t, d, wd)
	for _, cmd := range []any{"python3 nosuch.py", "python3 nosuch.py > out.txt 2>&1", []any{"sh", "nosuch.sh"}} {
		var p planOut
		text := a.ok("compute_plan", map[string]any{"backend": "local", "command": cmd}, &p)
		found := false
		for _, r := range p.Risks {
			if r.Code == "script-not-found" && strings.Contains(r.Message, "does not exist") {
				found = true
			}
		}
		if !found || strings.Contains(text, "Risks: none found") || !strings.Contains(text, "does not exist") {
			t.Errorf("compute_plan(%v): no missing-script risk: %s", cmd, text)
		}
		for _, n := range p.Notes {
			if strings.Contains(n, "was not provided") {
				t.Errorf("compute_plan(%v) says the script was not provided: %v", cmd, p.Notes)
			}
		}
	}
	writeFile(t, wd, "there.py", "print('hi')\n")
	var p planOut
	text := a.ok("compute_plan", map[string]any{"backend": "local", "command": "python3 there.py"}, &p)
	for _, r := range p.Risks {
		if r.Code == "script-not-found" {
			t.Errorf("a script that exists is reported missing: %s", text)
		}
	}
}
