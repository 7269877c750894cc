package mcp

import (
	"strings"
	"testing"
)

// local_logs: an offset past the end gives the end as next_offset;
// tail_lines with since_offset is refused as a contradiction.
func TestLogsOffsetPastTheEndAndTailWithOffset(t *testing.T) {
	d := startDaemon(t)
	a := newAgent(t, d, t.TempDir())
	id := a.start("echo hello", nil)
	a.waitDone(id)
	var l logsOut
	text := a.ok("local_logs", map[string]any{"run_id": id, "since_offset": 1000000000000}, &l)
	if l.NextOffset != l.TotalBytes || l.TotalBytes != 6 || l.Text != "" {
		t.Errorf("past the end: next_offset %d, total %d, text %q, want next_offset = the end (6): %s", l.NextOffset, l.TotalBytes, l.Text, text)
	}
	msg := a.fails("local_logs", map[string]any{"run_id": id, "tail_lines": 5, "since_offset": 0})
	if !strings.Contains(msg, "tail_lines") || !strings.Contains(msg, "since_offset") {
		t.Errorf("tail_lines with since_offset: %s", msg)
	}
}

// An unknown run id of 100 KB is quoted cut, not echoed in full.
func TestLongUnknownIDIsCut(t *testing.T) {
	d := startDaemon(t)
	a := newAgent(t, d, t.TempDir())
	long := strings.Repeat("x", 100000)
	for _, tool := range []string{"local_status", "local_logs", "local_stop"} {
		msg := a.fails(tool, map[string]any{"run_id": long})
		if len(msg) > 2000 || !strings.Contains(msg, "100000 bytes") {
			t.Errorf("%s: %d bytes of message: %.300s", tool, len(msg), msg)
		}
	}
	msg := a.fails("compute_plan", map[string]any{"backend": "local", "command": "true", "parent_run_id": long})
	if len(msg) > 2000 {
		t.Errorf("compute_plan with a long parent_run_id: %d bytes of message", len(msg))
	}
}

// A plan made to retry run C cannot be executed as a retry of run A: the
// contradiction is refused, naming both.
func TestExecuteParentContradictsPlan(t *testing.T) {
	d := startDaemon(t)
	a := newAgent(t, d, t.TempDir())
	runA := a.start("false", nil)
	a.waitDone(runA)
	runC := a.start("exit 2", nil)
	a.waitDone(runC)
	var p planOut
	a.ok("compute_plan", map[string]any{"backend": "local", "command": "true", "parent_run_id": runC}, &p)
	msg := a.fails("local_execute", map[string]any{"plan_id": p.PlanID, "parent_run_id": runA})
	if !strings.Contains(msg, runA) || !strings.Contains(msg, runC) {
		t.Errorf("the refusal does not name both runs: %s", msg)
	}
	// The plan's own parent, given again or left out, is fine.
	var e executeOut
	a.ok("local_execute", map[string]any{"plan_id": p.PlanID, "parent_run_id": runC}, &e)
	if e.ParentRunID != runC {
		t.Errorf("parent %q, want %q", e.ParentRunID, runC)
	}
	a.waitDone(e.RunID)
}
