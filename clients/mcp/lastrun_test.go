package mcp

import (
	"strings"
	"testing"
)

// An agent names runs as people do: @last, @last~N and the numbers
// `runbox ls` shows reach the daemon as they are, and it resolves them.
func TestRunNamesThroughMCP(t *testing.T) {
	d := startDaemon(t)
	a := newAgent(t, d, t.TempDir())
	first := a.start([]any{"sh", "-c", "echo one"}, nil)
	a.waitDone(first)
	second := a.start([]any{"sh", "-c", "echo two"}, nil)
	a.waitDone(second)
	for name, want := range map[string]string{"@last": second, "@last~1": first, "1": first, "2": second} {
		var r runOut
		a.ok("local_status", map[string]any{"run_id": name}, &r)
		if r.RunID != want {
			t.Errorf("local_status(%q) = run %s, want %s", name, r.RunID, want)
		}
	}
	var l logsOut
	a.ok("local_logs", map[string]any{"run_id": "@last~1"}, &l)
	if l.RunID != first || !strings.Contains(l.Text, "one") {
		t.Errorf("local_logs(@last~1) = run %s %q, want %s with \"one\"", l.RunID, l.Text, first)
	}
	if msg := a.fails("local_status", map[string]any{"run_id": "@last~2"}); !strings.Contains(msg, "only 2 runs") {
		t.Errorf("local_status(@last~2) of 2 runs: %s", msg)
	}
}
