package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
)

// TestFailedSmokeOutputIsReadable: a run whose smoke run failed has no
// log of its own; `runbox logs RUN` shows the smoke run's output instead,
// headed as such (the failure's suggestion sends the user there). And
// `plan --json` names the plan's id plan_id, as MCP does.
func TestFailedSmokeOutputIsReadable(t *testing.T) {
	e := newEnv(t)
	e.write("job.py", `import argparse, sys
p = argparse.ArgumentParser()
p.add_argument("--dry-run", action="store_true")
a = p.parse_args()
if a.dry_run:
    print("smoke says: data dir missing", flush=True)
    sys.exit(3)
print("full run")
`)
	out := e.must("plan", "--json", "--sandbox", "process", "--", "python3", "job.py")
	var plan api.Plan
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	_ = json.Unmarshal([]byte(out), &raw)
	if raw["plan_id"] != plan.ID || plan.ID == "" {
		t.Errorf("plan --json: plan_id %v, id %q", raw["plan_id"], plan.ID)
	}
	if plan.Result.Smoke == nil {
		t.Skipf("the planner found no smoke command: %+v", plan.Result)
	}
	if r := e.run("", "exec", "--smoke", plan.ID); r.code == 0 {
		t.Fatalf("exec --smoke of a failing smoke run: exit 0\n%s", r.stderr)
	}
	var runs []api.Run
	if err := json.Unmarshal([]byte(e.must("ls", "--json")), &runs); err != nil {
		var wrapped struct{ Runs []api.Run }
		if err2 := json.Unmarshal([]byte(e.must("ls", "--json")), &wrapped); err2 != nil {
			t.Fatal(err, err2)
		}
		runs = wrapped.Runs
	}
	if len(runs) == 0 {
		t.Fatal("no run")
	}
	r := e.run("", "logs", runs[0].ID)
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "smoke says: data dir missing") || !strings.Contains(r.stdout+r.stderr, "smoke run output") {
		t.Errorf("logs of a run whose smoke failed: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
}
