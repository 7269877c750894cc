package bundle

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrNotTrusted is returned by InstallChecked for a bundle the policy
// does not let in: unsigned, or signed by a key the user does not trust.
var ErrNotTrusted = errors.New("bundle not trusted")

// Policy is what InstallChecked lets in.
type Policy struct {
	Trust *TrustStore         // the user's trusted keys; nil: none
	Extra []ed25519.PublicKey // keys trusted for this install only (--trust)
	// AllowUnsigned lets in a bundle nobody trusted vouches for: unsigned,
	// or signed by an untrusted key (which vouches for no more).
	AllowUnsigned bool
	// RequireSigned (RUNBOX_REQUIRE_SIGNED=1, or require_signed in the
	// config) refuses such a bundle even with AllowUnsigned.
	RequireSigned bool
	// Names, when not nil, returns the plugin name each module's manifest
	// gives, keyed as given, leaving out those that do not load
	// (plugins.ModuleNames: this package cannot load a module).
	// InstallChecked then refuses a bundle with a plugin named like
	// another of its own, or like one of another installed bundle or a
	// loose module in the plugins directory: runbox would load neither.
	Names func(modules map[string][]byte) (map[string]string, error)
}

// ErrNameClash is a bundle whose plugin is named like another installed
// plugin.
var ErrNameClash = errors.New("plugin name already installed")

// Inspect reads and checks a bundle's structure and checksums (not its
// signature) and returns its manifest with the signature's state.
func Inspect(path string, ts *TrustStore, extra ...ed25519.PublicKey) (Manifest, Signature, error) {
	bm, _, err := readBundle(path, nil)
	if err != nil {
		return bm, Signature{}, err
	}
	return bm, CheckSignature(bm, ts, extra...), nil
}

// InstallChecked installs the bundle at path (see Install) when p lets it
// in. A bad signature is always refused; the error of a refusal says why
// and what would let the bundle in. What was installed before stays.
func InstallChecked(path, pluginsDir string, p Policy) (Manifest, Signature, error) {
	bm, files, err := readBundle(path, nil)
	if err != nil {
		return bm, Signature{}, fmt.Errorf("install: %w", err)
	}
	sig := CheckSignature(bm, p.Trust, p.Extra...)
	if err := p.admit(bm, sig); err != nil {
		return bm, sig, fmt.Errorf("install %s: %w", bm.Name, err)
	}
	if err := p.checkNames(bm, files, pluginsDir); err != nil {
		return bm, sig, fmt.Errorf("install %s: %w", bm.Name, err)
	}
	return bm, sig, place(bm, files, pluginsDir)
}

// checkNames refuses bm when one of its plugins is named like another
// plugin it has, or that pluginsDir has outside the bundle bm replaces
// (p.Names tells the names).
func (p Policy) checkNames(bm Manifest, files map[string][]byte, pluginsDir string) error {
	if p.Names == nil || len(bm.Plugins) == 0 {
		return nil
	}
	mods := map[string][]byte{}
	what := map[string]string{} // key -> how the refusal names it
	for _, f := range bm.Plugins {
		k := "new:" + f.File
		mods[k], what[k] = files[f.File], f.File+" of this bundle"
	}
	installed, _ := List(pluginsDir) // one that cannot be read loads no plugin
	for _, ob := range installed {
		if ob.Name == bm.Name {
			continue // replaced by this install
		}
		for _, f := range ob.Plugins {
			path := filepath.Join(pluginsDir, ob.Name, filepath.FromSlash(f.File))
			if b, err := os.ReadFile(path); err == nil {
				mods[path], what[path] = b, fmt.Sprintf("%s of installed bundle %s (runbox plugins remove %s)", f.File, ob.Name, ob.Name)
			}
		}
	}
	loose, _ := filepath.Glob(filepath.Join(pluginsDir, "*.wasm"))
	for _, path := range loose {
		if b, err := os.ReadFile(path); err == nil {
			mods[path], what[path] = b, path
		}
	}
	names, err := p.Names(mods)
	if err != nil {
		return fmt.Errorf("read the plugins' names: %w", err)
	}
	byName := map[string][]string{}
	for k, n := range names {
		byName[n] = append(byName[n], k)
	}
	for _, f := range bm.Plugins {
		n, ok := names["new:"+f.File]
		if !ok || len(byName[n]) < 2 {
			continue
		}
		var others []string
		for _, k := range byName[n] {
			if k != "new:"+f.File {
				others = append(others, what[k])
			}
		}
		sort.Strings(others)
		return fmt.Errorf("its plugin %s is named %q, as is %s: runbox would load neither; remove the other first, or rename one of them (sdk.Manifest.Name) and rebuild it: %w",
			f.File, n, strings.Join(others, " and "), ErrNameClash)
	}
	return nil
}

func (p Policy) admit(bm Manifest, sig Signature) error {
	switch {
	case sig.State == Trusted:
		return nil
	case sig.State == BadSignature:
		return fmt.Errorf("%s; not installed: %w", sig, ErrBadSignature)
	case p.RequireSigned && sig.State == Unsigned:
		return fmt.Errorf("bundle is unsigned and signatures are required (RUNBOX_REQUIRE_SIGNED or require_signed in the config): %w", ErrNotTrusted)
	case p.RequireSigned:
		return fmt.Errorf("%s and signatures by trusted keys are required: trust it with `runbox plugins trust add KEY --name NAME` or --trust KEY, once you know it is its author's: %w", sig, ErrNotTrusted)
	case p.AllowUnsigned:
		return nil
	case sig.State == Unsigned:
		return fmt.Errorf("bundle is unsigned, so nothing says who made it; install it anyway with --allow-unsigned: %w", ErrNotTrusted)
	}
	return fmt.Errorf("%s; trust the key (`runbox plugins trust add KEY --name NAME`, or --trust KEY for this install) once you know it is its author's, or install anyway with --allow-unsigned: %w", sig, ErrNotTrusted)
}

// Sign signs the bundle at path (directory or .tar.gz) with key, in place,
// after checking it; an earlier signature is replaced.
func Sign(path string, key ed25519.PrivateKey) (Manifest, error) {
	bm, files, err := readBundle(path, nil)
	if err != nil {
		return bm, fmt.Errorf("sign: %w", err)
	}
	bm = signManifest(bm, key)
	files[ManifestFile] = encodeManifest(bm)
	if isTarball(path) {
		tmp := path + ".tmp"
		if err := writeTarGz(tmp, files); err != nil {
			return bm, fmt.Errorf("sign: %w", err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return bm, fmt.Errorf("sign: %w", err)
		}
		return bm, nil
	}
	tmp := filepath.Join(path, ManifestFile+".tmp")
	if err := os.WriteFile(tmp, files[ManifestFile], 0o644); err != nil {
		return bm, fmt.Errorf("sign: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(path, ManifestFile)); err != nil {
		return bm, fmt.Errorf("sign: %w", err)
	}
	return bm, nil
}

func signManifest(bm Manifest, key ed25519.PrivateKey) Manifest {
	bm.Signer = base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey))
	bm.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, bm.SigningBytes()))
	return bm
}

func encodeManifest(bm Manifest) []byte {
	raw, _ := json.MarshalIndent(bm, "", "  ")
	return append(raw, '\n')
}
