package main

import (
	"strings"
	"testing"

	"github.com/runbox/runbox/internal/printable"
)

// A hostile run puts terminal escapes (a retitle, a screen clear, a bell,
// a right-to-left override) and a newline in its command and its output,
// which a classifier quotes back. runbox's views show them as escapes,
// one table row per run, and never send the bytes to the terminal of
// whoever looks; `runbox logs` gives the run's own bytes, where the same
// escapes do reach the terminal.
func TestViewsShowARunsEscapesRatherThanObeyThem(t *testing.T) {
	e := newEnv(t)
	cmd := []string{"sh", "-c", `printf '\033]0;pwned\007\033[2J\n'; echo "RuntimeError: CUDA out of memory $(printf '\007\033[31m')" >&2; exit 1` +
		"\n# \x1b]0;pwned-by-the-command\x07 \u202eevil"}
	e.run("", append([]string{"run", "--sandbox", "process", "--name", "hostile\x1b[2J", "--"}, cmd...)...)
	raw := func(s string) bool { return strings.ContainsAny(s, "\x1b\x07\r\u202e") }
	views := map[string]string{}
	for _, args := range [][]string{{"status", "@last"}, {"ls"}, {"diff", "@last", "@last"}} {
		views[strings.Join(args, " ")] = e.must(args...)
	}
	for name, out := range views {
		if raw(out) {
			t.Errorf("runbox %s sends the run's escapes to the terminal:\n%q", name, out)
		}
	}
	status := views["status @last"]
	if !strings.Contains(status, "command:   "+printable.Command(cmd)) || !strings.Contains(status, "CUDA_OOM") {
		t.Errorf("status does not show the command as a shell line, or lost the failure:\n%s", status)
	}
	if !strings.Contains(status, `hostile\x1b[2J`) {
		t.Errorf("status does not show the name's escape:\n%s", status)
	}
	if rows := strings.Split(strings.TrimSpace(views["ls"]), "\n"); len(rows) != 2 {
		t.Errorf("ls: %d lines for one run, want a header and one row:\n%s", len(rows), views["ls"])
	}
	if logs := e.must("logs", "@last"); !strings.Contains(logs, "\x1b]0;pwned\x07\x1b[2J") {
		t.Errorf("runbox logs does not give the run's own bytes: %q", logs)
	}
}
