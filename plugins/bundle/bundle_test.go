package bundle_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/plugins/bundle"
	"github.com/runbox/runbox/plugins/internal/plugintest"
	"github.com/runbox/runbox/sdk"
)

func TestMain(m *testing.M) { plugintest.Main(m) }

func TestBundlePackVerifyInstall(t *testing.T) {
	src := t.TempDir()
	wasm, err := os.ReadFile(plugintest.Build(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(src, "echo.wasm"), wasm, 0o644)
	os.WriteFile(filepath.Join(src, bundle.ManifestFile), []byte(`{"name":"echo-bundle","version":"1.2.3"}`), 0o644)
	pub, priv, _ := ed25519.GenerateKey(nil)
	otherPub, _, _ := ed25519.GenerateKey(nil)

	out := t.TempDir()
	tarball := filepath.Join(out, "echo.tar.gz")
	if _, err := bundle.Pack(src, tarball, priv); err != nil {
		t.Fatal(err)
	}
	dirBundle := filepath.Join(out, "dir")
	if _, err := bundle.Pack(src, dirBundle, nil); err != nil {
		t.Fatal(err)
	}

	if bm, err := bundle.Verify(tarball, []ed25519.PublicKey{otherPub, pub}); err != nil || bm.Name != "echo-bundle" || bm.Version != "1.2.3" {
		t.Fatalf("verify signed tarball: %+v, %v", bm, err)
	}
	if _, err := bundle.Verify(tarball, []ed25519.PublicKey{otherPub}); !errors.Is(err, bundle.ErrBadSignature) {
		t.Fatalf("verify with wrong key: %v", err)
	}
	if _, err := bundle.Verify(dirBundle, []ed25519.PublicKey{pub}); !errors.Is(err, bundle.ErrUnsigned) {
		t.Fatalf("verify unsigned with keys: %v", err)
	}
	if _, err := bundle.Verify(dirBundle, nil); err != nil {
		t.Fatalf("verify unsigned without keys: %v", err)
	}

	// Tampered module: checksum fails, install refuses.
	tampered := append([]byte{}, wasm...)
	tampered[len(tampered)-1] ^= 0xff
	os.WriteFile(filepath.Join(dirBundle, "echo.wasm"), tampered, 0o644)
	pluginsDir := filepath.Join(t.TempDir(), "plugins")
	if _, err := bundle.Install(dirBundle, pluginsDir); !errors.Is(err, bundle.ErrChecksum) {
		t.Fatalf("install tampered: %v", err)
	}
	// Not a wasm file under a matching checksum.
	notWasm := t.TempDir()
	os.WriteFile(filepath.Join(notWasm, "x.wasm"), []byte("#!/bin/sh\n"), 0o644)
	os.WriteFile(filepath.Join(notWasm, bundle.ManifestFile), []byte(`{"name":"x","version":"1","abi":1,"plugins":[{"file":"x.wasm","sha256":"00"}]}`), 0o644)
	if _, err := bundle.Install(notWasm, pluginsDir); !errors.Is(err, bundle.ErrNotWasm) {
		t.Fatalf("install non-wasm: %v", err)
	}
	// Wrong ABI.
	os.WriteFile(filepath.Join(notWasm, bundle.ManifestFile), []byte(`{"name":"x","version":"1","abi":2,"plugins":[{"file":"x.wasm","sha256":"00"}]}`), 0o644)
	if _, err := bundle.Install(notWasm, pluginsDir); !errors.Is(err, bundle.ErrABI) {
		t.Fatalf("install wrong abi: %v", err)
	}

	if _, err := bundle.Install(tarball, pluginsDir, pub); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Install(tarball, pluginsDir, pub); err != nil { // reinstall replaces
		t.Fatal(err)
	}
	list, err := bundle.List(pluginsDir)
	if err != nil || len(list) != 1 || list[0].Name != "echo-bundle" {
		t.Fatalf("list = %+v, %v", list, err)
	}

	// The installed bundle is loaded by a Host.
	h, err := plugins.NewHost(context.Background(), plugins.Config{Dirs: []string{pluginsDir}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if f := h.Classify(context.Background(), sdk.ClassifyInput{ExitCode: 2}); f == nil || f.Plugin != "echo" {
		t.Fatalf("classify through installed bundle = %+v", f)
	}
	h.Close(context.Background())

	if err := bundle.Remove(pluginsDir, "echo-bundle"); err != nil {
		t.Fatal(err)
	}
	if list, _ := bundle.List(pluginsDir); len(list) != 0 {
		t.Fatalf("after remove: %+v", list)
	}
	if err := bundle.Remove(pluginsDir, "echo-bundle"); err == nil {
		t.Fatal("removing twice succeeded")
	}
}

// What install says of a path that is not a bundle as it expects: each
// error says what is wrong and what to do; a folder named like a tarball
// is a folder bundle.
func TestInstallMessages(t *testing.T) {
	src := srcDir(t, "echo-bundle", "1.2.3")
	out := t.TempDir()
	tarball := filepath.Join(out, "echo.tar.gz")
	if _, err := bundle.Pack(src, tarball, nil); err != nil {
		t.Fatal(err)
	}
	tb, _ := os.ReadFile(tarball)
	truncated := filepath.Join(out, "truncated.tar.gz")
	os.WriteFile(truncated, tb[:len(tb)/2], 0o644)
	dirNamedTgz := filepath.Join(out, "dd.tar.gz")
	if _, err := bundle.Pack(src, filepath.Join(out, "dd"), nil); err != nil {
		t.Fatal(err)
	}
	os.Rename(filepath.Join(out, "dd"), dirNamedTgz)
	project := srcDir(t, "p", "0.1.0") // a plugin project: a bundle manifest beside testdata/
	os.Mkdir(filepath.Join(project, "testdata"), 0o755)

	for _, tc := range []struct {
		path string
		want string // "" = installs
	}{
		{dirNamedTgz, ""},
		{truncated, "is truncated or corrupt (download it again"},
		{project, "make bundle, or runbox plugins pack"},
	} {
		_, err := bundle.Install(tc.path, filepath.Join(t.TempDir(), "plugins"))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("install %s: %v, want %q", filepath.Base(tc.path), err, tc.want)
		}
	}
}
