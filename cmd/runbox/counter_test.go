package main

import (
	"encoding/json"
	"os"
	"path/filepath"
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

// A team's rules file says a shape's counter in one line of data
// ("processed shard {counter}": no literal of the built-in plugin is on
// such a line, so only a rules file can bring it in): its fixture passes
// `plugins test`, and once signed and installed a live run that prints
// the line every 300 ms shows the counter's step.
func TestRulesFileCounterInALiveRun(t *testing.T) {
	e := newEnv(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "shards")
	e.must("plugins", "new", "--rules", "--dir", dir, "shards")
	rulesFile := filepath.Join(dir, "shards.rules.json")
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(rulesFile, `{
  "name": "shards",
  "progress": [
    {"name": "shards", "literal": "processed shard", "match": ["processed shard {counter}"],
     "optional": ["rows={rows:count}"]}
  ]
}
`)
	for _, f := range []string{"progress-rounds", "classifier-quota"} {
		for _, ext := range []string{".input.json", ".expected.json"} {
			if err := os.Remove(filepath.Join(dir, "testdata", f+ext)); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(filepath.Join(dir, "testdata", "progress-shards.input.json"),
		`{"lines": ["processed shard 1 rows=1,000", "processed shard 2 rows=2,000", "processed shard 3 rows=2,500"]}`+"\n")
	write(filepath.Join(dir, "testdata", "progress-shards.expected.json"),
		`{"step": 3, "phase": "train", "metrics": {"rows": 2500}, "source": "shards"}`+"\n")
	if out := e.must("plugins", "test", rulesFile, filepath.Join(dir, "testdata")); !strings.Contains(out, "1 passed") {
		t.Fatalf("plugins test: %s", out)
	}
	key := filepath.Join(tmp, "team.pem")
	e.must("plugins", "keygen", key)
	tgz := filepath.Join(tmp, "shards.tar.gz")
	e.must("plugins", "pack", "--key", key, dir, tgz)
	e.must("plugins", "install", "--trust", key+".pub", tgz)

	script := e.write("shards.sh", "for i in 17 18 19 20; do echo \"processed shard $i\"; sleep 0.3; done\n")
	id := strings.TrimSpace(e.must("run", "-d", "--", "sh", script))
	e.must("wait", "--timeout", "60s", id)
	if r := e.getRun(id); r.Progress == nil || r.Progress.Step != 20 || r.Progress.Source != "shards" {
		t.Fatalf("live run's progress %+v, want step 20 from the rules file", r.Progress)
	}
}
