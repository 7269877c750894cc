package plugins_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/plugins/analyze"
	"github.com/runbox/runbox/plugins/builtin"
	"github.com/runbox/runbox/plugins/internal/plugintest"
	"github.com/runbox/runbox/sdk"
)

// analyze of a log and a live parser of the same output say the same
// progress, the user plugin's, every time, though the built-in answers
// the same lines (docs/PLUGINS.md §8).
func TestAnalyzeAndLiveProgressAgree(t *testing.T) {
	dir := t.TempDir()
	b, _ := os.ReadFile(plugintest.Build(t, "zork"))
	os.WriteFile(filepath.Join(dir, "zork.wasm"), b, 0o644)
	var bs []plugins.Builtin
	for _, m := range builtin.Modules() {
		bs = append(bs, plugins.Builtin{Name: m.Name, Kind: m.Kind, Wasm: m.Wasm, Manifest: m.Manifest()})
	}
	ctx := context.Background()
	h, err := plugins.NewHost(ctx, plugins.Config{
		Builtins: bs, Dirs: []string{dir}, CacheDir: plugintest.CacheDir(t),
		LoadTimeout: 5 * time.Minute, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	var log strings.Builder
	for i := 1; i <= 5; i++ {
		log.WriteString("ZORK step " + string(rune('0'+i)) + " of 10 zloss=0." + string(rune('0'+i)) + "\n")
	}
	for range 20 {
		res, err := analyze.Analyze(ctx, h, strings.NewReader(log.String()), sdk.ClassifyInput{ExitCode: 3}, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := h.NewParser()
		for _, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
			p.Feed("stdout", l)
		}
		p.Flush(ctx)
		live := p.State()
		if res.Progress == nil || live == nil || res.Progress.Source != "zork" || live.Source != "zork" || res.Progress.Step != 5 || live.Step != 5 {
			t.Fatalf("analyze %+v, live %+v: want zork's step 5 from both", res.Progress, live)
		}
	}
}
