package mcp

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox"
)

// An agent asking about a run that waits for another is told why.
func TestStatusSaysWhyARunWaits(t *testing.T) {
	d := startDaemon(t)
	wd := t.TempDir()
	bg := context.Background()
	first, err := d.c.Submit(bg, api.RunRequest{Command: []string{"sleep", "3"}, Sandbox: sandbox.Process, Workdir: wd, ClientEnv: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	then, err := d.c.Submit(bg, api.RunRequest{Command: []string{"true"}, Sandbox: sandbox.Process, Workdir: wd, ClientEnv: os.Environ(), After: []string{first.ID}})
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, d, wd)
	var st runOut
	text := a.ok("local_status", map[string]any{"run_id": then.ID}, &st)
	if st.State != "queued" || !strings.Contains(st.Reason, "waiting for") || !strings.Contains(text, "waiting for") {
		t.Errorf("local_status of a chained run: state %s reason %q text %q", st.State, st.Reason, text)
	}
	_, _ = d.c.Stop(bg, first.ID, 0)
}
