package plugins

import (
	"context"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/plugins/bundle"
	"github.com/runbox/runbox/plugins/internal/plugintest"
	"github.com/runbox/runbox/sdk"
)

// bundleDir packs the test plugins names into a bundle directory in
// pluginsDir, as install leaves one, signed with key when not nil.
func bundleDir(t *testing.T, pluginsDir, name string, key ed25519.PrivateKey, plugins ...string) {
	t.Helper()
	src := t.TempDir()
	for _, p := range plugins {
		b, err := os.ReadFile(plugintest.Build(t, p))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(src, p+".wasm"), b, 0o644)
	}
	os.WriteFile(filepath.Join(src, bundle.ManifestFile), []byte(`{"name":"`+name+`","version":"0.1.0"}`), 0o644)
	if _, err := bundle.Pack(src, filepath.Join(pluginsDir, name), key); err != nil {
		t.Fatal(err)
	}
}

// Under RequireSigned only the bundles a trusted key signed load: a loose
// module, a bundle installed unsigned and one signed by a key no longer
// trusted are refused, saying why and what to do, and never answer.
func TestRequireSignedAtLoad(t *testing.T) {
	dir := t.TempDir()
	pub, priv, _ := ed25519.GenerateKey(nil)
	_, other, _ := ed25519.GenerateKey(nil)
	bundleDir(t, dir, "signed", priv, "echo")
	bundleDir(t, dir, "unsigned", nil, "liar")
	bundleDir(t, dir, "stranger", other, "zork")
	loose, _ := os.ReadFile(plugintest.Build(t, "panic"))
	os.WriteFile(filepath.Join(dir, "loose.wasm"), loose, 0o644)
	ts, err := bundle.LoadTrust(filepath.Join(t.TempDir(), "trusted-keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Add("me", pub); err != nil {
		t.Fatal(err)
	}
	h, _ := newTestHost(t, Config{RequireSigned: &SignedOnly{Trust: ts, Why: "RUNBOX_REQUIRE_SIGNED is set", Off: "unset RUNBOX_REQUIRE_SIGNED"}}, dir)
	want := map[string]string{ // source's dir or file -> refusal ("" = ready)
		"signed":     "",
		"unsigned":   "unsigned: RUNBOX_REQUIRE_SIGNED is set; sign bundle unsigned with a trusted key and reinstall it",
		"stranger":   "signed by an untrusted key",
		"loose.wasm": "unsigned: RUNBOX_REQUIRE_SIGNED is set and a loose module cannot be signed",
	}
	infos := h.Plugins(context.Background())
	if len(infos) != len(want) {
		t.Fatalf("%d plugins, want %d: %+v", len(infos), len(want), infos)
	}
	for _, i := range infos {
		key := filepath.Base(filepath.Dir(i.Source))
		if strings.HasSuffix(i.Source, ".wasm") && filepath.Dir(i.Source) == dir {
			key = filepath.Base(i.Source)
		}
		w, ok := want[key]
		switch {
		case !ok:
			t.Errorf("unexpected plugin %s", i.Source)
		case w == "" && i.Status != StatusReady:
			t.Errorf("%s: %s (%s), want ready", key, i.Status, i.LastError)
		case w != "" && (i.Status != StatusRefused || !strings.Contains(i.LastError, w) || !strings.Contains(i.LastError, "unset RUNBOX_REQUIRE_SIGNED")):
			t.Errorf("%s: %s %q, want refused with %q", key, i.Status, i.LastError, w)
		}
	}
	// The liar (unsigned) would answer exit 50; only the signed echo does.
	if f := h.Classify(context.Background(), sdk.ClassifyInput{ExitCode: 50}); f == nil || f.Plugin != "echo" {
		t.Errorf("classify: %+v, want echo's answer only", f)
	}
	// Without the policy the same directory loads them all.
	h2, _ := newTestHost(t, Config{}, dir)
	for _, i := range h2.Plugins(context.Background()) {
		if i.Status == StatusRefused {
			t.Errorf("%s refused without the policy", i.Source)
		}
	}
}

// Two user plugins named alike are both failed, with both paths, once
// both are loaded, and neither answers; plugins info then finds each.
func TestSameNameBothFailed(t *testing.T) {
	dir := t.TempDir()
	bundleDir(t, dir, "my-errors", nil, "echo")
	bundleDir(t, dir, "other-bundle", nil, "echo")
	h, _ := newTestHost(t, Config{}, dir)
	ctx := context.Background()
	if f := h.Classify(ctx, sdk.ClassifyInput{ExitCode: 1}); f != nil {
		t.Errorf("classify answered %+v by a plugin whose name is not unique", f)
	}
	infos := h.Plugins(ctx)
	if len(infos) != 2 {
		t.Fatalf("plugins: %+v", infos)
	}
	p1, p2 := filepath.Join(dir, "my-errors", "echo.wasm"), filepath.Join(dir, "other-bundle", "echo.wasm")
	for _, i := range infos {
		if i.Name != "echo" || i.Status != StatusFailed || !strings.Contains(i.LastError, "two plugins are named echo: "+p1+", "+p2+"; remove one") {
			t.Errorf("%s: %s %s %q, want failed naming both", i.Source, i.Name, i.Status, i.LastError)
		}
	}
	p := h.NewParser()
	p.Feed("stdout", "step 1")
	p.Flush(ctx)
	if s := p.State(); s != nil {
		t.Errorf("progress %+v from a plugin whose name is not unique", s)
	}
	// Removing one leaves the other working.
	os.RemoveAll(filepath.Join(dir, "other-bundle"))
	time.Sleep(10 * time.Millisecond)
	if f := h.Classify(ctx, sdk.ClassifyInput{ExitCode: 1}); f == nil || f.Plugin != "echo" {
		t.Errorf("after removing one: classify %+v", f)
	}
}

var zorkLines = []string{
	"ZORK step 1 of 10 zloss=0.1",
	"ZORK step 2 of 10 zloss=0.2",
	"ZORK step 3 of 10 zloss=0.3",
	"ZORK step 4 of 10 zloss=0.4",
	"ZORK step 5 of 10 zloss=0.5",
}

// A user plugin and the built-in answer the same lines: the progress is
// the user plugin's every time, however their answers interleave.
func TestProgressMergeDeterministic(t *testing.T) {
	dir := t.TempDir()
	b, _ := os.ReadFile(plugintest.Build(t, "zork"))
	os.WriteFile(filepath.Join(dir, "zork.wasm"), b, 0o644)
	h, _ := newTestHost(t, Config{Builtins: builtins()}, dir)
	ctx := context.Background()
	sources := map[string]int{}
	for range 20 {
		p := h.NewParser()
		p.Ready(ctx)
		for _, l := range zorkLines {
			p.Feed("stdout", l)
		}
		p.Flush(ctx)
		s := p.State()
		if s == nil {
			t.Fatal("no progress")
		}
		sources[s.Source]++
		if s.Source != "zork" || s.Step != 5 || s.Total != 10 || s.Phase != "zorking" || s.Metrics["zloss"] != 0.5 {
			t.Errorf("progress %+v, want zork's step 5 of 10", *s)
		}
	}
	if len(sources) != 1 {
		t.Errorf("sources over 20 runs: %v", sources)
	}
}

// The rule itself: a source further into the output goes over one that
// is behind; as far in, a user plugin over a built-in, then by name.
func TestComposeProgress(t *testing.T) {
	user := &progSource{rank: sourceRank{name: "zork"}, has: true, state: sdk.Progress{Step: 3, Source: "zork"}, pos: 3}
	b := &progSource{rank: sourceRank{builtin: true, name: "runbox-progress"}, has: true, state: sdk.Progress{Step: 5, Rate: 2, Source: "generic"}, pos: 5}
	if got := composeProgress([]*progSource{user, b}); got.Step != 5 || got.Source != "generic" {
		t.Errorf("user behind: %+v, want the built-in's newer step", got)
	}
	user.pos, user.state.Step = 5, 5
	for _, srcs := range [][]*progSource{{user, b}, {b, user}} {
		if got := composeProgress(srcs); got.Source != "zork" || got.Rate != 2 {
			t.Errorf("as far: %+v, want zork's, with the built-in's rate", got)
		}
	}
	a := &progSource{rank: sourceRank{name: "a"}, has: true, state: sdk.Progress{Source: "a"}, pos: 5}
	if got := composeProgress([]*progSource{user, a}); got.Source != "a" {
		t.Errorf("by name: %+v, want a's", got)
	}
}
