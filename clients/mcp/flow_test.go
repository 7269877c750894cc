package mcp

import (
	"context"
	"math"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools are exactly the contract's, with its argument names, each
// with a description, an input schema and an output schema.
func TestToolsAreTheContract(t *testing.T) {
	d := startDaemon(t)
	a := newAgent(t, d, t.TempDir())
	res, err := a.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"list_compute_backends": {},
		"compute_plan":          {"backend", "command", "task_description", "script_path", "parent_run_id", "backend_data"},
		"local_execute":         {"plan_id", "timeout_minutes", "parent_run_id"},
		"local_status":          {"run_id"},
		"local_wait":            {"run_id", "timeout_seconds"},
		"local_stop":            {"run_id"},
		"local_logs":            {"run_id", "stream", "tail_lines", "since_offset"},
	}
	required := map[string][]string{
		"compute_plan": {"backend", "command"}, "local_execute": {"plan_id"}, "local_status": {"run_id"},
		"local_wait": {"run_id"}, "local_stop": {"run_id"}, "local_logs": {"run_id"},
	}
	var got []string
	for _, tool := range res.Tools {
		got = append(got, tool.Name)
		args, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		if len(tool.Description) < 80 {
			t.Errorf("%s: description %q does not say when to use it", tool.Name, tool.Description)
		}
		in, _ := tool.InputSchema.(map[string]any)
		props, _ := in["properties"].(map[string]any)
		for _, arg := range args {
			p, ok := props[arg].(map[string]any)
			if !ok {
				t.Errorf("%s: no argument %s", tool.Name, arg)
				continue
			}
			if p["description"] == nil {
				t.Errorf("%s.%s has no description", tool.Name, arg)
			}
		}
		var req []string
		reqd, _ := in["required"].([]any)
		for _, r := range reqd {
			req = append(req, r.(string))
		}
		slices.Sort(req)
		if w := slices.Sorted(slices.Values(required[tool.Name])); !slices.Equal(req, w) {
			t.Errorf("%s requires %v, want %v", tool.Name, req, w)
		}
		if tool.OutputSchema == nil {
			t.Errorf("%s has no output schema", tool.Name)
		}
	}
	if len(got) != len(want) {
		t.Errorf("tools %v, want the %d of the contract", got, len(want))
	}
	// Limits are in the schemas.
	for _, tool := range res.Tools {
		if tool.Name == "local_wait" {
			ts := tool.InputSchema.(map[string]any)["properties"].(map[string]any)["timeout_seconds"].(map[string]any)
			if ts["maximum"] != 600.0 || ts["minimum"] != 0.0 {
				t.Errorf("timeout_seconds limits %v..%v, want 0..600", ts["minimum"], ts["maximum"])
			}
		}
	}
}

func TestListComputeBackends(t *testing.T) {
	d := startDaemon(t)
	a := newAgent(t, d, t.TempDir())
	var out backendsOut
	text := a.ok("list_compute_backends", nil, &out)
	if len(out.Backends) != 1 {
		t.Fatalf("backends %+v", out.Backends)
	}
	b := out.Backends[0]
	if b.Name != "local" || b.ToolPrefix != "local" || !b.Available || b.Auto != "process" || b.AutoReason == "" || b.Detail == "" {
		t.Errorf("local backend %+v", b)
	}
	if len(b.Sandboxes) != 1 || b.Sandboxes[0].Name != "process" || !b.Sandboxes[0].Available {
		t.Errorf("sandboxes %+v", b.Sandboxes)
	}
	if !strings.Contains(text, "local: available=true") {
		t.Errorf("summary %q", text)
	}
}

const missingModule = "import runbox_no_such_module_xyz\n"

// The compute-local flow end to end: plan, execute, wait, status of a
// Python script that fails for a missing module; then the retry with
// parent_run_id, whose plan carries the experience and whose run the
// lineage.
func TestFlowFailureThenRetry(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	d := startDaemon(t)
	wd := t.TempDir()
	writeFile(t, wd, "train.py", missingModule)
	a := newAgent(t, d, wd)

	var p planOut
	text := a.ok("compute_plan", map[string]any{
		"backend": "local", "command": "python3 train.py", "task_description": "train a model",
	}, &p)
	if p.PlanID == "" || p.Sandbox != "process" || p.SandboxReason == "" || p.Workdir != wd ||
		p.Shell || !slices.Equal(p.Command, []string{"python3", "train.py"}) || p.ScriptPath != "train.py" {
		t.Fatalf("plan %+v", p)
	}
	if p.SmokeSupported || p.Risks == nil || p.Experience != nil || !strings.Contains(text, "local_execute") {
		t.Errorf("plan of a first run: smoke %v risks %v experience %+v; summary %q", p.SmokeSupported, p.Risks, p.Experience, text)
	}
	var e executeOut
	a.ok("local_execute", map[string]any{"plan_id": p.PlanID}, &e)
	if e.RunID == "" || e.PlanID != p.PlanID || e.Attempt != 1 || e.Smoke {
		t.Fatalf("execute %+v", e)
	}
	r := a.waitDone(e.RunID)
	if r.State != "failed" || r.Exit == nil || r.Exit.Code != 1 || r.Usage == nil {
		t.Fatalf("run %+v", r)
	}
	f := r.Failure
	if f == nil || f.Code != "MODULE_NOT_FOUND" || f.Details["module"] != "runbox_no_such_module_xyz" || len(f.Suggestions) == 0 {
		t.Fatalf("failure %+v", f)
	}
	// local_status says the same, from a prefix of the id.
	var st runOut
	text = a.ok("local_status", map[string]any{"run_id": e.RunID[:len(e.RunID)-6]}, &st)
	if st.RunID != e.RunID || st.State != "failed" || st.Failure == nil || st.Failure.Code != "MODULE_NOT_FOUND" {
		t.Fatalf("status %+v", st)
	}
	if !strings.Contains(text, "MODULE_NOT_FOUND") || !strings.Contains(text, f.Suggestions[0]) || !strings.Contains(text, "parent_run_id") {
		t.Errorf("status summary does not tell the model what happened and what next: %q", text)
	}

	// The retry: the plan names the parent and knows the past failure;
	// its run, started without parent_run_id, inherits the lineage.
	writeFile(t, wd, "train.py", "print('fixed')\n")
	var p2 planOut
	a.ok("compute_plan", map[string]any{"backend": "local", "command": "python3 train.py", "parent_run_id": e.RunID[:20]}, &p2)
	if p2.ParentRunID != e.RunID || p2.Experience == nil || p2.Experience.Failed != 1 || p2.Experience.FailureCodes["MODULE_NOT_FOUND"] != 1 {
		t.Fatalf("retry plan: parent %q experience %+v", p2.ParentRunID, p2.Experience)
	}
	var e2 executeOut
	a.ok("local_execute", map[string]any{"plan_id": p2.PlanID}, &e2)
	if e2.ParentRunID != e.RunID || e2.Attempt != 2 {
		t.Fatalf("retry run %+v", e2)
	}
	r2 := a.waitDone(e2.RunID)
	if r2.State != "succeeded" || r2.ParentRunID != e.RunID || r2.Attempt != 2 || r2.Failure != nil {
		t.Fatalf("retry ended %+v", r2)
	}
	// parent_run_id on local_execute alone links too.
	var e3 executeOut
	a.ok("local_execute", map[string]any{"plan_id": p.PlanID, "parent_run_id": e2.RunID}, &e3)
	if e3.ParentRunID != e2.RunID || e3.Attempt != 3 {
		t.Fatalf("execute with parent_run_id: %+v", e3)
	}
	a.waitDone(e3.RunID)
}

// A plan whose script has a --dry-run flag runs it first; the full run
// starts only when it passes.
func TestSmokeRunsFirst(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	d := startDaemon(t)
	wd := t.TempDir()
	writeFile(t, wd, "job.py", `import argparse, sys
p = argparse.ArgumentParser()
p.add_argument("--dry-run", action="store_true", help="validate without doing the work")
a = p.parse_args()
if a.dry_run:
    print("SMOKE", flush=True)
    sys.exit(3 if open("smoke_fails").read().strip() == "yes" else 0)
print("FULL RUN")
`)
	a := newAgent(t, d, wd)
	for _, fails := range []bool{false, true} {
		writeFile(t, wd, "smoke_fails", map[bool]string{true: "yes", false: "no"}[fails])
		var p planOut
		a.ok("compute_plan", map[string]any{"backend": "local", "command": []any{"python3", "job.py"}}, &p)
		if !p.SmokeSupported || !slices.Contains(p.SmokeCommand, "--dry-run") || p.SmokeReason == "" {
			t.Fatalf("plan smoke: %v %v %q", p.SmokeSupported, p.SmokeCommand, p.SmokeReason)
		}
		var e executeOut
		a.ok("local_execute", map[string]any{"plan_id": p.PlanID}, &e)
		if !e.Smoke {
			t.Fatalf("execute %+v: smoke not run first", e)
		}
		r := a.waitDone(e.RunID)
		var l logsOut
		a.ok("local_logs", map[string]any{"run_id": e.RunID}, &l)
		switch {
		case !fails && (r.State != "succeeded" || !strings.Contains(l.Text, "FULL RUN")):
			t.Errorf("passing smoke: run %s, output %q", r.State, l.Text)
		case fails && (r.State != "failed" || strings.Contains(l.Text, "FULL RUN")):
			t.Errorf("failing smoke: run %s, output %q; the full run must not start", r.State, l.Text)
		}
	}
}

// local_wait sends progress notifications while it blocks, when the
// request has a progress token; the run's own progress is in them.
func TestWaitSendsProgress(t *testing.T) {
	d := startDaemon(t)
	wd := t.TempDir()
	writeFile(t, wd, "steps.sh", `for i in 1 2 3 4 5; do echo "##PROGRESS## {\"step\": $i, \"total\": 5, \"phase\": \"training\"}"; sleep 0.25; done`)
	a := newAgent(t, d, wd)
	id := a.start([]any{"sh", "steps.sh"}, nil)
	p := &mcpsdk.CallToolParams{Name: "local_wait", Arguments: map[string]any{"run_id": id, "timeout_seconds": 30}}
	p.SetProgressToken("wait-1")
	res := a.callParams(p)
	if res.IsError {
		t.Fatal(resultText(res))
	}
	a.mu.Lock()
	notes := slices.Clone(a.progress)
	a.mu.Unlock()
	if len(notes) < 3 {
		t.Fatalf("%d progress notifications in a 1.25 s wait at 100 ms intervals", len(notes))
	}
	sawStep := false
	for i, n := range notes {
		if n.ProgressToken != "wait-1" {
			t.Errorf("notification with token %v", n.ProgressToken)
		}
		if i > 0 && n.Progress <= notes[i-1].Progress {
			t.Errorf("progress went from %v to %v: it must grow", notes[i-1].Progress, n.Progress)
		}
		sawStep = sawStep || strings.Contains(n.Message, "training, step")
	}
	if !sawStep {
		t.Errorf("no notification carries the run's progress: %q ... %q", notes[0].Message, notes[len(notes)-1].Message)
	}
	var st runOut
	a.ok("local_status", map[string]any{"run_id": id}, &st)
	if st.State != "succeeded" || st.Progress == nil || st.Progress.Step != 5 || st.Progress.Total != 5 || st.Progress.Phase != "training" {
		t.Errorf("status after the run: %s progress %+v", st.State, st.Progress)
	}
	// Without a token, no notifications, and a short wait says not done.
	id2 := a.start("sleep 5", nil)
	a.mu.Lock()
	before := len(a.progress)
	a.mu.Unlock()
	var w runOut
	text := a.ok("local_wait", map[string]any{"run_id": id2, "timeout_seconds": 0.3}, &w)
	if w.Done || w.State == "" || !strings.Contains(text, "local_wait") {
		t.Errorf("short wait: %+v %q", w, text)
	}
	a.mu.Lock()
	after := len(a.progress)
	a.mu.Unlock()
	if after != before {
		t.Errorf("%d notifications without a progress token", after-before)
	}
}

// Two agents stop the same run while a third waits on it: every answer
// says cancelled.
func TestTwoAgentsStopOneRun(t *testing.T) {
	d := startDaemon(t)
	wd := t.TempDir()
	a, b, c := newAgent(t, d, wd), newAgent(t, d, wd), newAgent(t, d, wd)
	id := a.start("sleep 60", nil)
	var wg sync.WaitGroup
	var waited runOut
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.ok("local_wait", map[string]any{"run_id": id, "timeout_seconds": 60}, &waited)
	}()
	stops := make([]runOut, 2)
	for i, ag := range []*agent{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ag.ok("local_stop", map[string]any{"run_id": id}, &stops[i])
		}()
	}
	wg.Wait()
	for i, s := range stops {
		if s.State != "cancelled" || !s.Done {
			t.Errorf("agent %d's stop: %s done=%v (%s)", i, s.State, s.Done, s.Note)
		}
	}
	if waited.State != "cancelled" || !waited.Done {
		t.Errorf("the waiting agent saw %s done=%v", waited.State, waited.Done)
	}
	// Stopping it again says it had ended.
	var again runOut
	text := b.ok("local_stop", map[string]any{"run_id": id}, &again)
	if again.State != "cancelled" || !strings.Contains(text, "already ended") {
		t.Errorf("stop of an ended run: %s %q", again.State, text)
	}
}

// One agent can check a run, or stop it, while its own local_wait on it
// blocks: calls on a session do not queue behind each other.
func TestCallsWhileWaiting(t *testing.T) {
	d := startDaemon(t)
	a := newAgent(t, d, t.TempDir())
	id := a.start("sleep 30", nil)
	waited := make(chan runOut, 1)
	go func() {
		var r runOut
		a.ok("local_wait", map[string]any{"run_id": id, "timeout_seconds": 60}, &r)
		waited <- r
	}()
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	var st runOut
	a.ok("local_status", map[string]any{"run_id": id}, &st)
	if st.Done || time.Since(start) > 5*time.Second {
		t.Fatalf("status while waiting: %+v after %s", st, time.Since(start))
	}
	var stopped runOut
	a.ok("local_stop", map[string]any{"run_id": id}, &stopped)
	select {
	case r := <-waited:
		if r.State != "cancelled" || !r.Done {
			t.Errorf("wait ended with %s done=%v", r.State, r.Done)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("local_wait did not return after the run was stopped")
	}
}

// A loss that went NaN (and a gradient norm gone infinite) reaches an
// agent: in local_status's structured result as "NaN" and "Infinity",
// and in its text as loss=NaN.
func TestStatusNonFiniteMetrics(t *testing.T) {
	d := startDaemon(t)
	wd := t.TempDir()
	writeFile(t, wd, "nan.sh", `echo '##PROGRESS## {"step": 1, "total": 4, "metrics": {"loss": 2.5}}'
echo '##PROGRESS## {"step": 2, "total": 4, "metrics": {"loss": "NaN", "grad_norm": "Infinity"}}'`)
	a := newAgent(t, d, wd)
	id := a.start([]any{"sh", "nan.sh"}, nil)
	a.waitDone(id)
	var st runOut
	text := a.ok("local_status", map[string]any{"run_id": id}, &st)
	if st.Progress == nil || st.Progress.Step != 2 || !math.IsNaN(st.Progress.Metrics["loss"]) || !math.IsInf(st.Progress.Metrics["grad_norm"], 1) {
		t.Fatalf("status progress %+v", st.Progress)
	}
	if !strings.Contains(text, "loss=NaN") || !strings.Contains(text, "grad_norm=Infinity") {
		t.Errorf("status text lacks the non-finite metrics: %q", text)
	}
}
