package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
)

// A loop that prints its iteration with no total and no step word
// ("[it 10] loss=…") is progressing: the built-in plugin reads the
// counter rising across lines of one shape (issue #24). In a live run
// the lines come a few hundred milliseconds apart, so each is in a batch
// of its own, and the counter's previous value reaches the plugin only
// through what the host keeps for it (sdk.ParseInput.State); `runbox
// analyze` reads the same output in one batch and must agree.
func TestCounterProgressInALiveRun(t *testing.T) {
	e := newEnv(t)
	e.progressReady()
	script := e.write("loop.sh", "for i in 1 2 3 4 5 6; do echo \"[it ${i}0] loss=0.$((9-i))\"; sleep 0.3; done\n")
	id := strings.TrimSpace(e.must("run", "-d", "--", "sh", script))
	e.must("wait", "--timeout", "60s", id)
	r := e.getRun(id)
	if r.Progress == nil || r.Progress.Step != 60 || r.Progress.Total != 0 {
		t.Fatalf("live run's progress %+v, want step 60 with no total", r.Progress)
	}
	if v, ok := r.Progress.Metrics["loss"]; !ok || v != 0.3 {
		t.Errorf("live run's loss %v (%v), want 0.3", v, ok)
	}
	out := e.run("", "logs", id)
	logf := e.write("loop.log", out.stdout)
	a := e.run("", "analyze", "--json", "--exit-code", "0", logf)
	if a.code != 0 {
		t.Fatalf("analyze: exit %d: %s", a.code, a.stderr)
	}
	var an api.Analysis
	if err := json.Unmarshal([]byte(a.stdout), &an); err != nil {
		t.Fatalf("analyze output %q: %v", a.stdout, err)
	}
	if an.Progress == nil || an.Progress.Step != r.Progress.Step {
		t.Errorf("analyze's progress %+v, the live run's step %d", an.Progress, r.Progress.Step)
	}
}
