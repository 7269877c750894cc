package mcp

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Bad input is a tool error (isError) whose message says what to do;
// the server goes on answering.
func TestBadInputIsAToolError(t *testing.T) {
	d := startDaemon(t)
	wd := t.TempDir()
	a := newAgent(t, d, wd)
	id := a.start("true", nil)
	a.waitDone(id)
	var p planOut
	a.ok("compute_plan", map[string]any{"backend": "local", "command": "true"}, &p)
	const ghost = "01NOSUCHRUNATALL"
	tests := []struct {
		name string
		tool string
		args map[string]any
		want []string // all in the message
	}{
		{"backend not local", "compute_plan", map[string]any{"backend": "modal", "command": "true"}, []string{"modal", "local"}},
		{"no backend", "compute_plan", map[string]any{"command": "true"}, []string{"compute_plan", "backend"}},
		{"no command", "compute_plan", map[string]any{"backend": "local"}, []string{"compute_plan", "command"}},
		{"empty command", "compute_plan", map[string]any{"backend": "local", "command": "  "}, []string{"command is empty"}},
		{"empty argv", "compute_plan", map[string]any{"backend": "local", "command": []any{}}, []string{"command"}},
		{"command of numbers", "compute_plan", map[string]any{"backend": "local", "command": 42}, []string{"command"}},
		{"relative workdir", "compute_plan", map[string]any{"backend": "local", "command": "true", "workdir": "src"}, []string{"absolute"}},
		{"unknown parent", "compute_plan", map[string]any{"backend": "local", "command": "true", "parent_run_id": ghost}, []string{ghost, "parent_run_id"}},
		{"bad memory", "compute_plan", map[string]any{"backend": "local", "command": "true",
			"backend_data": map[string]any{"recommendations": map[string]any{"memory": "lots"}}}, []string{"memory", "4g"}},
		{"negative plan timeout", "compute_plan", map[string]any{"backend": "local", "command": "true",
			"backend_data": map[string]any{"recommendations": map[string]any{"timeout_minutes": -5}}}, []string{"timeout_minutes"}},
		{"unknown sandbox", "compute_plan", map[string]any{"backend": "local", "command": "true",
			"backend_data": map[string]any{"recommendations": map[string]any{"sandbox": "vm"}}}, []string{"sandbox"}},
		{"unknown plan", "local_execute", map[string]any{"plan_id": ghost}, []string{ghost, "compute_plan"}},
		{"no plan id", "local_execute", map[string]any{}, []string{"local_execute", "plan_id"}},
		{"empty plan id", "local_execute", map[string]any{"plan_id": ""}, []string{"plan_id"}},
		{"negative timeout", "local_execute", map[string]any{"plan_id": p.PlanID, "timeout_minutes": -1}, []string{"timeout_minutes"}},
		{"huge timeout", "local_execute", map[string]any{"plan_id": p.PlanID, "timeout_minutes": 1e12}, []string{"timeout_minutes"}},
		{"unknown parent on execute", "local_execute", map[string]any{"plan_id": p.PlanID, "parent_run_id": ghost}, []string{ghost}},
		{"unknown run", "local_status", map[string]any{"run_id": ghost}, []string{ghost, "local_execute"}},
		{"no run id", "local_status", map[string]any{}, []string{"run_id"}},
		{"wait unknown run", "local_wait", map[string]any{"run_id": ghost}, []string{ghost}},
		{"negative wait", "local_wait", map[string]any{"run_id": id, "timeout_seconds": -1}, []string{"timeout_seconds"}},
		{"huge wait", "local_wait", map[string]any{"run_id": id, "timeout_seconds": 1e9}, []string{"timeout_seconds"}},
		{"stop unknown run", "local_stop", map[string]any{"run_id": ghost}, []string{ghost}},
		{"logs unknown run", "local_logs", map[string]any{"run_id": ghost}, []string{ghost}},
		{"logs bad stream", "local_logs", map[string]any{"run_id": id, "stream": "stdin"}, []string{"stream"}},
		{"logs zero tail", "local_logs", map[string]any{"run_id": id, "tail_lines": 0}, []string{"tail_lines"}},
		{"logs negative offset", "local_logs", map[string]any{"run_id": id, "since_offset": -4}, []string{"since_offset"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a.t = t
			msg := a.fails(tt.tool, tt.args)
			t.Log(msg)
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not mention %q", msg, w)
				}
			}
		})
	}
	a.t = t
	// Nothing was started by the bad calls, and the server still answers.
	runs, err := d.c.List(context.Background(), nil)
	if err != nil || len(runs) != 1 {
		t.Errorf("%d runs after the bad calls (%v), want 1", len(runs), err)
	}
	var st runOut
	a.ok("local_status", map[string]any{"run_id": id}, &st)
}

// A prefix of two runs' ids is ambiguous: the message asks for more of it.
func TestAmbiguousRunPrefix(t *testing.T) {
	d := startDaemon(t)
	a := newAgent(t, d, t.TempDir())
	x, y := a.start("true", nil), a.start("true", nil)
	n := 0
	for n < len(x) && x[n] == y[n] {
		n++
	}
	if n == 0 {
		t.Skip("the ids share no prefix")
	}
	msg := a.fails("local_status", map[string]any{"run_id": x[:n]})
	if !strings.Contains(msg, "more characters") {
		t.Errorf("ambiguous prefix: %q", msg)
	}
}

// A daemon that dies while local_wait blocks: the call ends with a tool
// error saying what to do, later calls say the daemon is not reachable,
// and once a daemon is back the run is there again.
func TestDaemonDiesMidCall(t *testing.T) {
	d := startDaemon(t)
	a := newAgent(t, d, t.TempDir())
	id := a.start("sleep 30", nil)
	done := make(chan string, 1)
	go func() {
		res := a.call("local_wait", map[string]any{"run_id": id, "timeout_seconds": 30})
		if !res.IsError {
			done <- "no error: " + resultText(res)
			return
		}
		done <- resultText(res)
	}()
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	d.kill(t)
	var msg string
	select {
	case msg = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("local_wait hung after the daemon died")
	}
	t.Log(msg)
	if time.Since(start) > 5*time.Second || !strings.Contains(msg, "daemon") || !strings.Contains(msg, "local_status") {
		t.Errorf("local_wait when the daemon died (after %s): %q", time.Since(start), msg)
	}
	msg = a.fails("local_status", map[string]any{"run_id": id})
	if !strings.Contains(msg, "not reachable") {
		t.Errorf("local_status with no daemon: %q", msg)
	}
	// The server itself is fine, and a new daemon has the run.
	if _, err := a.cs.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("server broken after the daemon died: %v", err)
	}
	d.start(t)
	var st runOut
	a.ok("local_status", map[string]any{"run_id": id}, &st)
	if st.RunID != id {
		t.Errorf("after restart: %+v", st)
	}
	var stopped runOut
	a.ok("local_stop", map[string]any{"run_id": id}, &stopped)
	if !stopped.Done {
		t.Errorf("stop after restart: %+v", stopped)
	}
}
