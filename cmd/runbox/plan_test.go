package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
)

const smokeScript = `import argparse, sys
p = argparse.ArgumentParser()
p.add_argument("--dry-run", action="store_true", help="check the setup and exit")
p.add_argument("--fail-smoke", action="store_true")
a = p.parse_args()
if a.dry_run:
    print("smoke ok")
    if a.fail_smoke:
        raise SystemExit("smoke check failed: data dir missing")
    sys.exit(0)
print("full run")
`

func TestPlanThenExecWithSmoke(t *testing.T) {
	e := newEnv(t)
	e.write("job.py", smokeScript)
	var plan api.Plan
	if err := json.Unmarshal([]byte(e.must("plan", "--json", "--sandbox", "process", "--", "python3", "job.py")), &plan); err != nil {
		t.Fatal(err)
	}
	sm := plan.Result.Smoke
	if sm == nil || sm.Flag != "--dry-run" || strings.Join(sm.Command, " ") != "python3 job.py --dry-run" {
		t.Fatalf("smoke %+v, want the --dry-run flag the script defines", sm)
	}
	if plan.ScriptPath != "job.py" {
		t.Errorf("script path %q", plan.ScriptPath)
	}
	r := e.run("", "exec", "--smoke", plan.ID)
	if r.code != 0 || r.stdout != "full run\n" {
		t.Fatalf("exec: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	// The attached client shows the smoke run's output, marked as such,
	// apart from the run's own stdout.
	if !strings.Contains(r.stderr, "smoke | smoke ok\n") {
		t.Errorf("exec --smoke did not show the smoke run's output: stderr %q", r.stderr)
	}
	var list struct{ Runs []*api.Run }
	if err := json.Unmarshal([]byte(e.must("ls", "--json", "-n", "1")), &list); err != nil {
		t.Fatal(err)
	}
	run := list.Runs[0]
	if run.PlanID != plan.ID || run.State != api.Succeeded {
		t.Errorf("run %+v", run)
	}
	if got := e.must("logs", "--smoke", run.ID); got != "smoke ok\n" {
		t.Errorf("smoke log %q", got)
	}

	// Settings given to plan reach the run exec starts.
	if err := json.Unmarshal([]byte(e.must("plan", "--json", "--sandbox", "process", "-e", "PLANNED=yes",
		"--setup", "echo set up", "--", "sh", "-c", "echo $PLANNED")), &plan); err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "exec", plan.ID); r.code != 0 || r.stdout != "yes\n" || !strings.Contains(r.stderr, "set up") {
		t.Errorf("exec of a plan with env and setup: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}

	// A failing smoke run stops everything before the full run starts.
	if err := json.Unmarshal([]byte(e.must("plan", "--json", "--sandbox", "process", "--", "python3", "job.py", "--fail-smoke")), &plan); err != nil {
		t.Fatal(err)
	}
	r = e.run("", "exec", "--smoke", plan.ID)
	if r.code == 0 || strings.Contains(r.stdout, "full run") {
		t.Fatalf("full run started after a failed smoke run: exit %d stdout %q", r.code, r.stdout)
	}
	if !strings.Contains(r.stderr, "SMOKE_FAILED") {
		t.Errorf("stderr %q does not name SMOKE_FAILED", r.stderr)
	}
	if !strings.Contains(r.stderr, "smoke | smoke check failed: data dir missing") {
		t.Errorf("the failed smoke run's output is not shown: stderr %q", r.stderr)
	}
}

func TestPlanFlagsRisks(t *testing.T) {
	e := newEnv(t)
	var plan api.Plan
	if err := json.Unmarshal([]byte(e.must("plan", "--json", "--", "sh", "-c", "curl -fsSL https://example.com/install.sh | sh; rm -rf ~/")), &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.Result.Risks) < 2 {
		t.Fatalf("risks %+v, want curl|sh and rm -rf ~", plan.Result.Risks)
	}
	for _, k := range plan.Result.Risks {
		if k.Severity == "" || k.Message == "" {
			t.Errorf("risk without severity or message: %+v", k)
		}
	}
}

// A plan of a script that is not in the workdir says so, first among its
// risks (the planner, shown no script text, found none and the run failed
// FILE_NOT_FOUND); a script that is there, or a program on PATH, is not.
func TestPlanSaysTheScriptIsMissing(t *testing.T) {
	e := newEnv(t)
	out := e.must("plan", "--", "python3", "nosuch.py")
	if !strings.Contains(out, "script-not-found") && !strings.Contains(out, "the script nosuch.py does not exist in the workdir") {
		t.Errorf("plan of a missing script:\n%s", out)
	}
	if strings.Contains(out, "was not provided") {
		t.Errorf("plan of a missing script says its text was not provided:\n%s", out)
	}
	e.write("there.py", "print('hi')\n")
	for _, cmd := range [][]string{{"python3", "there.py"}, {"true"}} {
		var plan api.Plan
		if err := json.Unmarshal([]byte(e.must(append([]string{"plan", "--json", "--"}, cmd...)...)), &plan); err != nil {
			t.Fatal(err)
		}
		for _, r := range plan.Result.Risks {
			if r.Code == "script-not-found" {
				t.Errorf("plan of %v: %+v", cmd, r)
			}
		}
	}
}
