package plugins

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/runbox/runbox/plugins/bundle"
	"github.com/runbox/runbox/sdk"
)

// A Host that lives on (the daemon's) sees bundles installed and removed
// after it started, at its next classify, and keeps the modules of an
// unchanged directory loaded as they are.
func TestHostPicksUpInstallAndRemove(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "plugins")
	h, logs := newTestHost(t, Config{}, dir)
	in := sdk.ClassifyInput{ExitCode: 2}
	if f := h.Classify(ctx, in); f != nil {
		t.Fatalf("no plugins yet, got %+v", f)
	}

	src := pluginDir(t, "echo")
	os.WriteFile(filepath.Join(src, bundle.ManifestFile), []byte(`{"name":"echo-bundle","version":"1.0.0"}`), 0o644)
	packed := filepath.Join(t.TempDir(), "b")
	if _, err := bundle.Pack(src, packed, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Install(packed, dir); err != nil {
		t.Fatal(err)
	}
	f := h.Classify(ctx, in)
	if f == nil || f.Plugin != "echo" || f.PluginVersion == "" {
		t.Fatalf("after install: %+v\n%s", f, logs)
	}
	before := h.mods()
	if f := h.Classify(ctx, in); f == nil || f.Plugin != "echo" {
		t.Fatalf("second classify: %+v", f)
	}
	if after := h.mods(); len(after) != len(before) || after[0] != before[0] {
		t.Fatal("an unchanged plugin directory was loaded again")
	}

	if err := bundle.Remove(dir, "echo-bundle"); err != nil {
		t.Fatal(err)
	}
	if f := h.Classify(ctx, in); f != nil {
		t.Fatalf("after remove: %+v", f)
	}
	if p := h.NewParser(); len(p.targets) != 0 {
		t.Fatalf("a parser after remove still feeds %d plugin(s)", len(p.targets))
	}
}

// BenchmarkRefreshUnchanged is what live pick-up adds to each run's
// parser and each classify when nothing was installed: a look at a plugin
// directory of 10 bundles.
func BenchmarkRefreshUnchanged(b *testing.B) {
	dir := b.TempDir()
	for i := range 10 {
		d := filepath.Join(dir, "bundle"+string(rune('a'+i)))
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, bundle.ManifestFile), []byte(`{}`), 0o644)
		os.WriteFile(filepath.Join(d, "x.wasm"), []byte("\x00asm"), 0o644)
	}
	h, _ := newTestHost(b, Config{}, dir)
	b.ResetTimer()
	for b.Loop() {
		h.refresh()
	}
}
