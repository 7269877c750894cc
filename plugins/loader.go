package plugins

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/runbox/runbox/plugins/bundle"
	"github.com/runbox/runbox/sdk"
)

// source is a module found on disk or embedded, before compiling.
type source struct {
	path    string
	builtin bool
	kind    sdk.Kind
	known   *sdk.Manifest // a built-in's manifest known without loading it
	wasm    []byte
	err     error // could not be read or failed its bundle's checksum
}

// discover lists the built-ins, the files and the modules in dirs: *.wasm
// directly inside a dir, and the files of each installed bundle
// (dir/NAME/runbox-bundle.json). A missing dir is not an error.
func discover(cfg Config) []source {
	var out []source
	for _, b := range cfg.Builtins {
		out = append(out, source{path: "builtin:" + b.Name, builtin: true, kind: b.Kind, known: b.Manifest, wasm: b.Wasm})
	}
	for _, p := range cfg.Files {
		b, err := os.ReadFile(p)
		out = append(out, source{path: p, wasm: b, err: err})
	}
	for _, dir := range cfg.Dirs {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			out = append(out, source{path: dir, err: fmt.Errorf("read plugin dir: %w", err)})
			continue
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue // an install under way (bundle.Install's .install-*), or hidden
			}
			p := filepath.Join(dir, e.Name())
			switch {
			case e.IsDir():
				out = append(out, bundleSources(p)...)
			case strings.HasSuffix(e.Name(), ".wasm"):
				b, err := os.ReadFile(p)
				out = append(out, source{path: p, wasm: b, err: err})
			}
		}
	}
	return out
}

// bundleSources reads an installed bundle, checking each file's sha256.
func bundleSources(dir string) []source {
	raw, err := os.ReadFile(filepath.Join(dir, bundle.ManifestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // not a bundle: ignore
	}
	if err != nil {
		return []source{{path: dir, err: err}}
	}
	var bm bundle.Manifest
	if err := json.Unmarshal(raw, &bm); err != nil {
		return []source{{path: dir, err: fmt.Errorf("decode %s: %w", bundle.ManifestFile, err)}}
	}
	var out []source
	for _, f := range bm.Plugins {
		p := filepath.Join(dir, filepath.FromSlash(f.File))
		b, err := os.ReadFile(p)
		if err == nil {
			if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != f.SHA256 {
				err = fmt.Errorf("sha256 of %s does not match its bundle manifest: %w", f.File, bundle.ErrChecksum)
			}
		}
		out = append(out, source{path: p, wasm: b, err: err})
	}
	return out
}
