package bundle_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/plugins/bundle"
	"github.com/runbox/runbox/plugins/internal/plugintest"
)

// Install refuses a bundle whose plugin is named like one of another
// installed bundle (runbox would load neither), and says which; the
// bundle it replaces does not count.
func TestInstallRefusesNameClash(t *testing.T) {
	mk := func(name string) string {
		out := filepath.Join(t.TempDir(), name)
		if _, err := bundle.Pack(srcDir(t, name, "0.1.0"), out, nil); err != nil {
			t.Fatal(err)
		}
		return out
	}
	names := func(mods map[string][]byte) (map[string]string, error) {
		cfg := plugins.Config{CacheDir: plugintest.CacheDir(t), Logger: slog.New(slog.DiscardHandler)}
		return plugins.ModuleNames(context.Background(), cfg, mods)
	}
	pol := bundle.Policy{AllowUnsigned: true, Names: names}
	dir := filepath.Join(t.TempDir(), "plugins")
	if _, _, err := bundle.InstallChecked(mk("my-errors"), dir, pol); err != nil {
		t.Fatal(err)
	}
	if _, _, err := bundle.InstallChecked(mk("my-errors"), dir, pol); err != nil {
		t.Fatalf("reinstall: %v", err)
	}
	_, _, err := bundle.InstallChecked(mk("other-bundle"), dir, pol)
	if !errors.Is(err, bundle.ErrNameClash) || !strings.Contains(err.Error(), `its plugin echo.wasm is named "echo", as is echo.wasm of installed bundle my-errors (runbox plugins remove my-errors)`) {
		t.Fatalf("install other-bundle: %v, want refused for the name", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "other-bundle")); err == nil {
		t.Fatal("other-bundle installed")
	}
}
