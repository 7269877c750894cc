package cclassifier_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/plugins/authoring"
	"github.com/runbox/runbox/plugins/builtin"
	"github.com/runbox/runbox/sdk"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestFixtures runs testdata through the plugin exactly as `runbox plugins
// test` does.
func TestFixtures(t *testing.T) {
	wasm := filepath.Join(buildPlugin(t), "r-julia.wasm")
	inputs, err := filepath.Glob("testdata/*.input.json")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	rep, err := authoring.RunFixtures(context.Background(), wasm, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 0 || rep.Passed != len(inputs) {
		t.Fatalf("want %d fixtures passed:\n%s", len(inputs), rep)
	}
	if rep.Plugin != "r-julia 0.1.0" {
		t.Errorf("plugin = %q, want r-julia 0.1.0", rep.Plugin)
	}
}

// TestLoadsFromPluginsDir: dropped into a plugins directory, the module
// is found, loads, passes the ABI check and describes itself.
func TestLoadsFromPluginsDir(t *testing.T) {
	dir := buildPlugin(t)
	ctx := context.Background()
	h, err := plugins.NewHost(ctx, plugins.Config{Dirs: []string{dir}, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	infos := h.Plugins(ctx)
	if len(infos) != 1 {
		t.Fatalf("want 1 plugin from %s, got %+v", dir, infos)
	}
	i := infos[0]
	if i.Status != plugins.StatusReady || i.LastError != "" {
		t.Fatalf("status %s, last error %q", i.Status, i.LastError)
	}
	if i.Name != "r-julia" || i.Version != "0.1.0" || !slices.Equal(i.Kinds, []sdk.Kind{sdk.KindClassifier}) ||
		i.Priority != 10 || !slices.Equal(i.Frameworks, []string{"r", "julia"}) || i.Description == "" {
		t.Errorf("manifest as loaded: %+v", i)
	}
}

// TestAnswersAmongBuiltins: next to the built-in plugins, as the daemon
// loads them, the C plugin's answer is the one kept for an R or Julia
// failure, and the built-in classifier's still for a Python one.
func TestAnswersAmongBuiltins(t *testing.T) {
	dir := buildPlugin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var bs []plugins.Builtin
	for _, m := range builtin.Modules() {
		bs = append(bs, plugins.Builtin{Name: m.Name, Kind: m.Kind, Wasm: m.Wasm, Manifest: m.Manifest()})
	}
	h, err := plugins.NewHost(ctx, plugins.Config{Builtins: bs, Dirs: []string{dir}, Logger: quiet(), CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	for _, tc := range []struct {
		name, stderr, plugin, code string
	}{
		{"R package", "Error in library(ggplot2) : there is no package called \u2018ggplot2\u2019\nExecution halted\n", "r-julia", sdk.CodeModuleNotFound},
		{"R memory", "Error: cannot allocate vector of size 74.5 Gb\nExecution halted\n", "r-julia", sdk.CodeOOMKilled},
		{"Julia file", "ERROR: LoadError: SystemError: opening file \"in.csv\": No such file or directory\n", "r-julia", sdk.CodeFileNotFound},
		{"Python import", "Traceback (most recent call last):\n  File \"t.py\", line 1, in <module>\n    import torch\nModuleNotFoundError: No module named 'torch'\n", "runbox-classify", sdk.CodeModuleNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := h.Classify(ctx, sdk.ClassifyInput{ExitCode: 1, StderrTail: tc.stderr})
			if f == nil {
				t.Fatal("no answer")
			}
			if f.Plugin != tc.plugin || f.Code != tc.code {
				t.Errorf("got %s from %s (%s), want %s from %s", f.Code, f.Plugin, f.Message, tc.code, tc.plugin)
			}
		})
	}
}
