package authoring

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/plugins/builtin"
	"github.com/runbox/runbox/plugins/bundle"
	"github.com/runbox/runbox/plugins/internal/plugintest"
	"github.com/runbox/runbox/sdk"
)

// A rules bundle end to end, as a team would add a format (issue #24):
// scaffold it, its fixtures pass, extend it with a progress format and a
// failure signature no built-in knows, sign and pack it, install it with
// the key trusted, and a plugin host with the built-ins and the installed
// bundle — what a run's daemon uses — reads the new progress line from a
// run's output and names the new failure code. A bad rules file is
// refused at pack and install with an error naming its line.
func TestRulesBundleEndToEnd(t *testing.T) {
	ctx := context.Background()
	proj := filepath.Join(t.TempDir(), "lab-rules")
	if err := ScaffoldRules(proj, "lab-rules"); err != nil {
		t.Fatal(err)
	}
	rulesPath := filepath.Join(proj, "lab-rules"+bundle.RulesSuffix)
	rep, err := RunRulesFixtures(rulesPath, filepath.Join(proj, "testdata"))
	if err != nil || rep.Failed != 0 || rep.Passed != 2 {
		t.Fatalf("scaffold's fixtures: %v\n%s", err, rep)
	}
	// The team's own format and signature, in a few lines.
	src, _ := os.ReadFile(rulesPath)
	src = []byte(strings.Replace(string(src), `"progress": [`, `"progress": [
    {"name": "zeta", "literal": "ZETA-TRAIN", "pattern": "ZETA-TRAIN cycle=(?P<step>\\d+) of (?P<total>\\d+) fitness=(?P<fitness>[-0-9.]+)"},`, 1))
	src = []byte(strings.Replace(string(src), `"failures": [`, `"failures": [
    {"name": "zeta-licence", "code": "PERMISSION_DENIED", "phrases": ["zeta licence server refused seat"], "message": "The Zeta licence server has no free seat", "suggestions": ["Retry later or ask for a seat."], "confidence": 0.95},`, 1))
	if err := os.WriteFile(rulesPath, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if rep, err := RunRulesFixtures(rulesPath, filepath.Join(proj, "testdata")); err != nil || rep.Failed != 0 {
		t.Fatalf("fixtures after the edit: %v\n%s", err, rep)
	}

	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	packed := filepath.Join(t.TempDir(), "lab-rules.tar.gz")
	if _, err := bundle.Pack(proj, packed, priv); err != nil {
		t.Fatal(err)
	}
	pluginsDir := t.TempDir()
	if _, err := bundle.Install(packed, pluginsDir, pub); err != nil {
		t.Fatal(err)
	}

	var bs []plugins.Builtin
	for _, m := range builtin.Modules() {
		bs = append(bs, plugins.Builtin{Name: m.Name, Kind: m.Kind, Wasm: m.Wasm})
	}
	h, err := plugins.NewHost(ctx, plugins.Config{Builtins: bs, Dirs: []string{pluginsDir}, CacheDir: plugintest.CacheDir(t),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	out := []string{"loading data", "ZETA-TRAIN cycle=7 of 20 fitness=0.375 (best so far)", "ZETA-TRAIN cycle=8 of 20 fitness=0.5"}
	if keep := h.ProgressFilter(); keep != nil && !keep(out[1]) {
		t.Error("the host's line filter drops the new format's lines")
	}
	p := h.NewParser()
	p.Ready(ctx)
	for _, l := range out {
		p.Feed("stdout", l)
	}
	p.Flush(ctx)
	st := p.State()
	if st == nil || st.Step != 8 || st.Total != 20 || st.Percentage != 40 || st.Metrics["fitness"] != 0.5 || st.Source != "zeta" {
		t.Fatalf("progress %+v", st)
	}
	f := h.Classify(ctx, sdk.ClassifyInput{ExitCode: 1, StderrTail: "starting solver\nFATAL: Zeta licence server refused seat (0 of 4 free)\n"})
	if f == nil || f.Code != sdk.CodePermissionDenied || f.Plugin != "rules:lab-rules" || !strings.Contains(f.Message, "free seat") {
		t.Fatalf("failure %+v", f)
	}
	// The built-in classifier still answers what the rules do not know.
	if f := h.Classify(ctx, sdk.ClassifyInput{ExitCode: 1, StderrTail: "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nModuleNotFoundError: No module named 'zeta'\n"}); f == nil || f.Code != sdk.CodeModuleNotFound {
		t.Fatalf("built-in answer %+v", f)
	}

	// A broken rules file is refused, naming the line.
	bad := []byte("{\n  \"name\": \"lab-rules\",\n  \"failures\": [\n    {\"name\": \"x\", \"code\": \"NOPE\", \"phrases\": [\"abc\"], \"message\": \"m\"}\n  ]\n}\n")
	if err := os.WriteFile(rulesPath, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := RunRulesFixtures(rulesPath, filepath.Join(proj, "testdata")); err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("plugins test on a bad file: %v", err)
	}
	if _, err := bundle.Pack(proj, filepath.Join(t.TempDir(), "x.tar.gz"), priv); err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("pack of a bad file: %v", err)
	}
}
