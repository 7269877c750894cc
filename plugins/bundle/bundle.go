// Package bundle packs, verifies, installs and lists plugin bundles: a
// directory or .tar.gz of WebAssembly modules with a runbox-bundle.json
// that names each file's sha256 and may be signed with ed25519. The plugin
// runtime (package plugins) loads installed bundles from its plugin
// directories and checks each file's sha256 again on every load.
package bundle

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/runbox/runbox/plugins/rules"
	"github.com/runbox/runbox/sdk"
)

// ManifestFile names a bundle's manifest, at the bundle's root.
const ManifestFile = "runbox-bundle.json"

// Errors callers may branch on.
var (
	ErrChecksum     = errors.New("checksum mismatch")
	ErrBadSignature = errors.New("bundle signature does not verify with any trusted key")
	ErrUnsigned     = errors.New("bundle is not signed")
	ErrNotWasm      = errors.New("not a WebAssembly module")
	ErrABI          = errors.New("bundle targets another plugin ABI")
	ErrExtraFile    = errors.New("bundle holds a file its manifest does not list")
)

// Manifest is runbox-bundle.json.
type Manifest struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	ABI     int    `json:"abi"`
	Plugins []File `json:"plugins"`
	// Rules are rules files (NAME.rules.json, package rules): progress
	// formats and failure signatures as data, which the host interprets.
	// Covered by the signature like the modules.
	Rules []File `json:"rules,omitempty"`
	// Signer is the signing key, base64 ed25519 public key; it is covered
	// by the signature, so that verify can tell a bad signature from one
	// by a key the user does not trust.
	Signer string `json:"signer,omitempty"`
	// Signature is base64 ed25519 over SigningBytes (the manifest without
	// this field). Optional.
	Signature string `json:"signature,omitempty"`
}

// File is one module in a bundle.
type File struct {
	File   string `json:"file"` // slash-separated, relative to the bundle root
	SHA256 string `json:"sha256"`
}

// SigningBytes is what the signature covers: the manifest as JSON, without
// the signature field.
func (m Manifest) SigningBytes() []byte {
	m.Signature = ""
	b, _ := json.Marshal(m) // plain strings and ints: cannot fail
	return b
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// CheckName returns an error when name cannot name a bundle (nor, so, a
// plugin project: plugins new).
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("name %q must match %s", name, nameRE)
	}
	return nil
}

var wasmMagic = []byte("\x00asm\x01\x00\x00\x00")

// RulesSuffix ends the name of a rules file in a bundle's directory.
const RulesSuffix = ".rules.json"

// Pack makes a bundle of the *.wasm and *.rules.json files in dir, written to out: a .tar.gz
// when out ends in .tar.gz or .tgz, else a directory. Name and version come
// from dir/runbox-bundle.json when present (other fields are recomputed),
// else from dir's base name and "0.0.0". With a non-nil signingKey the
// manifest is signed.
func Pack(dir, out string, signingKey ed25519.PrivateKey) (Manifest, error) {
	bm := Manifest{Name: filepath.Base(dir), Version: "0.0.0"}
	if raw, err := os.ReadFile(filepath.Join(dir, ManifestFile)); err == nil {
		if err := json.Unmarshal(raw, &bm); err != nil {
			return bm, fmt.Errorf("pack %s: decode %s: %w", dir, ManifestFile, err)
		}
	}
	bm.ABI, bm.Plugins, bm.Rules, bm.Signature, bm.Signer = sdk.ABIVersion, nil, nil, "", ""
	if !nameRE.MatchString(bm.Name) {
		return bm, fmt.Errorf("pack %s: bundle name %q must match %s", dir, bm.Name, nameRE)
	}
	files := map[string][]byte{}
	matches, _ := filepath.Glob(filepath.Join(dir, "*.wasm"))
	sort.Strings(matches)
	for _, p := range matches {
		b, err := os.ReadFile(p)
		if err != nil {
			return bm, fmt.Errorf("pack %s: %w", dir, err)
		}
		if !bytes.HasPrefix(b, wasmMagic) {
			return bm, fmt.Errorf("pack %s: %s: %w", dir, filepath.Base(p), ErrNotWasm)
		}
		sum := sha256.Sum256(b)
		bm.Plugins = append(bm.Plugins, File{File: filepath.Base(p), SHA256: hex.EncodeToString(sum[:])})
		files[filepath.Base(p)] = b
	}
	ruleFiles, _ := filepath.Glob(filepath.Join(dir, "*"+RulesSuffix))
	sort.Strings(ruleFiles)
	for _, p := range ruleFiles {
		b, err := os.ReadFile(p)
		if err != nil {
			return bm, fmt.Errorf("pack %s: %w", dir, err)
		}
		if _, err := rules.Parse(b); err != nil {
			return bm, fmt.Errorf("pack %s: %s: %w", dir, filepath.Base(p), err)
		}
		sum := sha256.Sum256(b)
		bm.Rules = append(bm.Rules, File{File: filepath.Base(p), SHA256: hex.EncodeToString(sum[:])})
		files[filepath.Base(p)] = b
	}
	if len(bm.Plugins)+len(bm.Rules) == 0 {
		return bm, fmt.Errorf("pack %s: no .wasm or %s files", dir, RulesSuffix)
	}
	if signingKey != nil {
		bm = signManifest(bm, signingKey)
	}
	files[ManifestFile] = encodeManifest(bm)
	if isTarball(out) {
		return bm, writeTarGz(out, files)
	}
	return bm, writeDir(out, files)
}

// Verify checks a bundle (directory or .tar.gz): manifest, ABI, that every
// file is a wasm module with the sha256 the manifest names and, when
// trustedKeys are given, that the manifest is signed by one of them.
func Verify(path string, trustedKeys []ed25519.PublicKey) (Manifest, error) {
	bm, _, err := readBundle(path, trustedKeys)
	return bm, err
}

func readBundle(path string, trustedKeys []ed25519.PublicKey) (Manifest, map[string][]byte, error) {
	var bm Manifest
	files, err := readFiles(path)
	if err != nil {
		return bm, nil, fmt.Errorf("bundle %s: %w", path, err)
	}
	raw, ok := files[ManifestFile]
	if !ok {
		return bm, nil, fmt.Errorf("bundle %s: no %s", path, ManifestFile)
	}
	if err := json.Unmarshal(raw, &bm); err != nil {
		return bm, nil, fmt.Errorf("bundle %s: decode %s: %w", path, ManifestFile, err)
	}
	if err := checkBundle(bm, files, trustedKeys); err != nil {
		return bm, nil, fmt.Errorf("bundle %s: %w", path, err)
	}
	return bm, files, nil
}

func checkBundle(bm Manifest, files map[string][]byte, trustedKeys []ed25519.PublicKey) error {
	if !nameRE.MatchString(bm.Name) {
		return fmt.Errorf("bundle name %q must match %s", bm.Name, nameRE)
	}
	if bm.ABI != sdk.ABIVersion {
		return fmt.Errorf("bundle targets ABI %d, this runbox speaks %d: %w", bm.ABI, sdk.ABIVersion, ErrABI)
	}
	if len(bm.Plugins)+len(bm.Rules) == 0 {
		return errors.New("bundle lists no plugins and no rules")
	}
	listed := map[string]bool{ManifestFile: true}
	for _, f := range append(append([]File(nil), bm.Plugins...), bm.Rules...) {
		listed[f.File] = true
	}
	for name := range files {
		if !listed[name] {
			return fmt.Errorf("file %s is in the bundle but not in its manifest: %w", name, ErrExtraFile)
		}
	}
	for _, f := range bm.Plugins {
		if !filepath.IsLocal(filepath.FromSlash(f.File)) {
			return fmt.Errorf("plugin file %q escapes the bundle", f.File)
		}
		b, ok := files[f.File]
		if !ok {
			return fmt.Errorf("plugin file %s missing", f.File)
		}
		if !bytes.HasPrefix(b, wasmMagic) {
			return fmt.Errorf("%s: %w", f.File, ErrNotWasm)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != strings.ToLower(f.SHA256) {
			return fmt.Errorf("%s: sha256 %x, manifest says %s: %w", f.File, sum, f.SHA256, ErrChecksum)
		}
	}
	for _, f := range bm.Rules {
		if !filepath.IsLocal(filepath.FromSlash(f.File)) || !strings.HasSuffix(f.File, RulesSuffix) {
			return fmt.Errorf("rules file %q must be a %s file inside the bundle", f.File, RulesSuffix)
		}
		b, ok := files[f.File]
		if !ok {
			return fmt.Errorf("rules file %s missing", f.File)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != strings.ToLower(f.SHA256) {
			return fmt.Errorf("%s: sha256 %x, manifest says %s: %w", f.File, sum, f.SHA256, ErrChecksum)
		}
		if _, err := rules.Parse(b); err != nil {
			return fmt.Errorf("%s: %w", f.File, err)
		}
	}
	if len(trustedKeys) == 0 {
		return nil
	}
	if bm.Signature == "" {
		return ErrUnsigned
	}
	sig, err := base64.StdEncoding.DecodeString(bm.Signature)
	if err != nil {
		return fmt.Errorf("decode signature: %w", ErrBadSignature)
	}
	for _, k := range trustedKeys {
		if ed25519.Verify(k, bm.SigningBytes(), sig) {
			return nil
		}
	}
	return ErrBadSignature
}

// Install verifies the bundle at path (see Verify) and installs it as
// pluginsDir/NAME, replacing an installed bundle of the same name. It
// checks no trust policy: see InstallChecked.
func Install(path, pluginsDir string, trustedKeys ...ed25519.PublicKey) (Manifest, error) {
	bm, files, err := readBundle(path, trustedKeys)
	if err != nil {
		return bm, fmt.Errorf("install: %w", err)
	}
	return bm, place(bm, files, pluginsDir)
}

// place writes a verified bundle to pluginsDir/NAME: into a temporary
// directory first, then swapped with the installed one in one step where
// the OS can (else two renames), so that a failure leaves the previous
// install as it was, and a plugin host scanning the directory sees the
// old bundle or the new one, never half of one.
func place(bm Manifest, files map[string][]byte, pluginsDir string) error {
	keep := map[string][]byte{ManifestFile: files[ManifestFile]}
	for _, f := range append(append([]File(nil), bm.Plugins...), bm.Rules...) {
		keep[f.File] = files[f.File]
	}
	if err := os.MkdirAll(pluginsDir, 0o755); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	tmp, err := os.MkdirTemp(pluginsDir, ".install-")
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := writeDir(tmp, keep); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	dst := filepath.Join(pluginsDir, bm.Name)
	if err := exchange(tmp, dst); err == nil {
		return nil // tmp now holds the previous install, removed by the defer
	}
	old := tmp + ".old"
	if err := os.Rename(dst, old); err == nil {
		defer os.RemoveAll(old)
	}
	if err := os.Rename(tmp, dst); err != nil {
		_ = os.Rename(old, dst) // put the previous one back
		return fmt.Errorf("install: %w", err)
	}
	return nil
}

// Remove uninstalls bundle name from pluginsDir.
func Remove(pluginsDir, name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("remove: invalid bundle name %q", name)
	}
	dst := filepath.Join(pluginsDir, name)
	if _, err := os.Stat(filepath.Join(dst, ManifestFile)); err != nil {
		return fmt.Errorf("remove %s: not installed: %w", name, err)
	}
	if err := os.RemoveAll(dst); err != nil {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	return nil
}

// List returns the manifests of the bundles installed in pluginsDir, by name.
func List(pluginsDir string) ([]Manifest, error) {
	matches, err := filepath.Glob(filepath.Join(pluginsDir, "*", ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	sort.Strings(matches)
	var out []Manifest
	for _, p := range matches {
		var bm Manifest
		raw, err := os.ReadFile(p)
		if err == nil {
			err = json.Unmarshal(raw, &bm)
		}
		if err != nil {
			return out, fmt.Errorf("list: %s: %w", p, err)
		}
		out = append(out, bm)
	}
	return out, nil
}
