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
	refused bool  // err is Config.RequireSigned's refusal
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
				out = append(out, bundleSources(p, cfg.RequireSigned)...)
			case strings.HasSuffix(e.Name(), ".wasm"):
				b, err := os.ReadFile(p)
				s := source{path: p, wasm: b, err: err}
				if pol := cfg.RequireSigned; pol != nil {
					s.refused = true
					s.err = fmt.Errorf("unsigned: %s and a loose module cannot be signed; pack it into a bundle signed with a trusted key (runbox plugins pack DIR OUT.tar.gz --key KEY), install that and delete %s, or %s: %w",
						pol.Why, p, pol.Off, bundle.ErrNotTrusted)
				}
				out = append(out, s)
			}
		}
	}
	return out
}

// bundleSources reads an installed bundle, checking each file's sha256,
// and under pol its signature.
func bundleSources(dir string, pol *SignedOnly) []source {
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
	refusal := pol.admit(bm)
	var out []source
	for _, f := range bm.Plugins {
		p := filepath.Join(dir, filepath.FromSlash(f.File))
		b, err := os.ReadFile(p)
		if refusal != nil {
			out = append(out, source{path: p, wasm: b, err: refusal, refused: true})
			continue
		}
		if err == nil {
			if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != f.SHA256 {
				err = fmt.Errorf("sha256 of %s does not match its bundle manifest (the installed file was changed): install the bundle again (runbox plugins install): %w", f.File, bundle.ErrChecksum)
			}
		}
		out = append(out, source{path: p, wasm: b, err: err})
	}
	return out
}

// admit returns why pol refuses installed bundle bm (nil: it loads): its
// signature is checked as install checks it (bundle.CheckSignature), with
// the trusted keys of now. A nil pol admits every bundle.
func (pol *SignedOnly) admit(bm bundle.Manifest) error {
	if pol == nil {
		return nil
	}
	sig := bundle.CheckSignature(bm, pol.Trust)
	switch sig.State {
	case bundle.Trusted:
		return nil
	case bundle.Unsigned:
		return fmt.Errorf("unsigned: %s; sign bundle %s with a trusted key and reinstall it (runbox plugins sign DIR --key KEY, then runbox plugins install), or %s: %w",
			pol.Why, bm.Name, pol.Off, bundle.ErrNotTrusted)
	case bundle.Untrusted:
		return fmt.Errorf("%s: %s; trust its key once you know it is its author's (runbox plugins trust add KEY --name NAME), or %s: %w",
			sig, pol.Why, pol.Off, bundle.ErrNotTrusted)
	}
	return fmt.Errorf("%s: %s; install bundle %s again from its author's copy, or %s: %w",
		sig, pol.Why, bm.Name, pol.Off, bundle.ErrNotTrusted)
}
