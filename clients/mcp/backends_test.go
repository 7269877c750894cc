package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeSlurm puts commands on PATH that answer as a reachable Slurm
// controller with an idle node.
func fakeSlurm(t *testing.T) {
	t.Helper()
	bin := t.TempDir()
	script := `#!/bin/sh
case "$(basename "$0") $1" in
"sinfo --version") echo "slurm 23.02.7" ;;
"scontrol ping") echo "Slurmctld(primary) at ctl is UP" ;;
"sinfo -h") echo "debug|up|1|idle" ;;
*) exit 1 ;;
esac
`
	for _, name := range []string{"sbatch", "sinfo", "scontrol", "squeue", "scancel"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv(slurmEnv, "1")
}

// Where the daemon has a reachable Slurm cluster, list_compute_backends
// says it is not usable over MCP (compute_plan refuses it) and does not
// offer it as running on this machine.
func TestSlurmIsNotOfferedOverMCP(t *testing.T) {
	fakeSlurm(t)
	d := startDaemon(t)
	a := newAgent(t, d, t.TempDir())
	var out backendsOut
	text := a.ok("list_compute_backends", map[string]any{}, &out)
	local := out.Backends[0]
	found := false
	for _, sb := range local.Sandboxes {
		if sb.Name != "slurm" {
			continue
		}
		found = true
		if sb.Available || !strings.Contains(sb.Detail, "not usable over MCP") || !strings.Contains(sb.Detail, "CLI") {
			t.Errorf("slurm sandbox: %+v, want unavailable over MCP, CLI only", sb)
		}
	}
	if !found {
		t.Fatalf("no slurm sandbox listed (is the fake cluster seen?): %+v", local.Sandboxes)
	}
	if strings.Contains(local.Detail, "or slurm") || strings.Contains(text, "slurm sandbox") {
		t.Errorf("the backend offers slurm on this machine: %s", text)
	}
	if !strings.Contains(local.Detail, "slurm: CLI only") {
		t.Errorf("the backend does not say slurm is CLI only: %s", local.Detail)
	}
	msg := a.fails("compute_plan", map[string]any{"backend": "local", "command": "true",
		"backend_data": map[string]any{"recommendations": map[string]any{"sandbox": "slurm"}}})
	if !strings.Contains(msg, "sandbox") {
		t.Errorf("compute_plan with sandbox slurm: %s", msg)
	}
}
