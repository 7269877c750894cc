package bundle

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// An index is a static JSON file a group publishes (over HTTPS, or as a
// path) listing its bundles, like Krew's index or a Helm repository's
// index.yaml. It is trusted for nothing but finding bundles: a download
// must match the digest its entry names, and its signature is checked
// against the user's trust store like any other bundle.

// Index is an index file.
type Index struct {
	Bundles []IndexEntry `json:"bundles"`
}

// IndexEntry is one version of one bundle in an index.
type IndexEntry struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
	// URL of the .tar.gz: absolute, or relative to the index's own URL.
	URL    string `json:"url"`
	SHA256 string `json:"sha256"`
	// Signer is the base64 ed25519 public key that signs the bundle; a
	// download signed by another key is refused.
	Signer string `json:"signer,omitempty"`
	// Index is the configured index the entry came from (filled in).
	Index string `json:"index,omitempty"`
	// root is the directory a local download may come from: a local
	// index's own; "" for an http(s) index (and an entry built by hand).
	root string
}

// IndexRef is a configured index: a name and where to fetch it.
type IndexRef struct {
	Name string `json:"name"`
	URL  string `json:"url"` // https://, http://, or a path
}

// FetchIndex downloads and decodes one index; each entry's URL is made
// absolute (relative to the index) and its Index set to ref.Name.
func (f Fetcher) FetchIndex(ctx context.Context, ref IndexRef) (Index, error) {
	var ix Index
	b, err := f.getIndex(ctx, ref.URL)
	if err != nil {
		return ix, fmt.Errorf("index %s: %w", ref.Name, err)
	}
	if err := json.Unmarshal(b, &ix); err != nil {
		return ix, fmt.Errorf("index %s (%s): decode: %w", ref.Name, ref.URL, err)
	}
	for i := range ix.Bundles {
		e := &ix.Bundles[i]
		e.Index = ref.Name
		e.URL = resolveRef(ref.URL, e.URL)
		e.root = indexRoot(ref.URL)
	}
	return ix, nil
}

func resolveRef(base, ref string) string {
	if r, err := url.Parse(ref); err == nil && r.IsAbs() {
		return ref
	}
	if b, err := url.Parse(base); err == nil && (b.Scheme == "http" || b.Scheme == "https") {
		if r, err := url.Parse(ref); err == nil {
			return b.ResolveReference(r).String()
		}
	}
	if filepath.IsAbs(ref) {
		return ref
	}
	return filepath.Join(filepath.Dir(base), filepath.FromSlash(ref))
}

// Find returns the entry for name at version, or its newest version when
// version is "", across entries.
func Find(entries []IndexEntry, name, version string) (IndexEntry, error) {
	var best *IndexEntry
	for i, e := range entries {
		if e.Name != name || (version != "" && e.Version != version) {
			continue
		}
		if best == nil || CompareVersions(e.Version, best.Version) > 0 {
			best = &entries[i]
		}
	}
	if best == nil {
		if version != "" {
			return IndexEntry{}, fmt.Errorf("no bundle %s@%s in the configured indexes (runbox plugins search %s)", name, version, name)
		}
		return IndexEntry{}, fmt.Errorf("no bundle %s in the configured indexes (runbox plugins search; runbox plugins index add)", name)
	}
	return *best, nil
}

// Search returns, for each bundle name that some version of matches
// every word (in name or description, case-insensitive), its newest
// entry, by name.
func Search(entries []IndexEntry, words []string) []IndexEntry {
	match := map[string]bool{}
	for _, e := range entries {
		hay := strings.ToLower(e.Name + " " + e.Description)
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(hay, strings.ToLower(w))
		}
		match[e.Name] = match[e.Name] || ok
	}
	var out []IndexEntry
	for name, ok := range match {
		if ok {
			e, _ := Find(entries, name, "")
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ErrDigest is returned when a download does not match its index entry.
var ErrDigest = errors.New("download does not match the index's sha256")

// InstallEntry downloads e's bundle, checks it against the entry (digest,
// name, version, signer) and installs it under p (see InstallChecked).
// The previous install of the bundle stays until the new one has passed
// every check.
func (f Fetcher) InstallEntry(ctx context.Context, e IndexEntry, pluginsDir string, p Policy) (Manifest, Signature, error) {
	dir, err := os.MkdirTemp("", "runbox-bundle-")
	if err != nil {
		return Manifest{}, Signature{}, err
	}
	defer os.RemoveAll(dir)
	tmp, h, err := f.download(ctx, e, dir)
	if err != nil {
		return Manifest{}, Signature{}, fmt.Errorf("install %s@%s: download: %w", e.Name, e.Version, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); !strings.EqualFold(got, e.SHA256) {
		return Manifest{}, Signature{}, fmt.Errorf("install %s@%s from %s: sha256 %s, index %s says %s; not installed: %w", e.Name, e.Version, e.URL, got, e.Index, e.SHA256, ErrDigest)
	}
	bm, sig, err := Inspect(tmp, p.Trust, p.Extra...)
	if err != nil {
		return bm, sig, fmt.Errorf("install %s@%s: %w", e.Name, e.Version, err)
	}
	if bm.Name != e.Name || bm.Version != e.Version {
		return bm, sig, fmt.Errorf("install %s@%s: the download is %s@%s; not installed", e.Name, e.Version, bm.Name, bm.Version)
	}
	if e.Signer != "" {
		want, err := ParsePublicKey([]byte(e.Signer))
		if err != nil {
			return bm, sig, fmt.Errorf("install %s@%s: index %s: signer: %w", e.Name, e.Version, e.Index, err)
		}
		if sig.Signer == nil || !sig.Signer.Equal(want) {
			return bm, sig, fmt.Errorf("install %s@%s: index %s says it is signed by %s, the bundle is %s; not installed: %w", e.Name, e.Version, e.Index, Fingerprint(want), sig, ErrNotTrusted)
		}
	}
	return InstallChecked(tmp, pluginsDir, p)
}

// CompareVersions compares dotted versions ("1.10.0" > "1.9.2"), numeric
// parts as numbers; a pre-release ("1.0.0-rc1") sorts before its release.
func CompareVersions(a, b string) int {
	a, b = strings.TrimPrefix(a, "v"), strings.TrimPrefix(b, "v")
	ac, apre, _ := strings.Cut(a, "-")
	bc, bpre, _ := strings.Cut(b, "-")
	as, bs := strings.Split(ac, "."), strings.Split(bc, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		x, y := "0", "0" // 1.2 is 1.2.0
		if i < len(as) {
			x = as[i]
		}
		if i < len(bs) {
			y = bs[i]
		}
		xn, xerr := strconv.Atoi(x)
		yn, yerr := strconv.Atoi(y)
		switch {
		case xerr == nil && yerr == nil && xn != yn:
			if xn < yn {
				return -1
			}
			return 1
		case (xerr != nil || yerr != nil) && x != y:
			return strings.Compare(x, y)
		}
	}
	switch {
	case apre == bpre:
		return 0
	case apre == "":
		return 1
	case bpre == "":
		return -1
	}
	return strings.Compare(apre, bpre)
}

// LoadIndexes reads the configured indexes (a JSON list) at path; a
// missing file is none.
func LoadIndexes(path string) ([]IndexRef, error) {
	var refs []IndexRef
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &refs)
	}
	if err != nil {
		return nil, fmt.Errorf("indexes %s: %w", path, err)
	}
	return refs, nil
}

// SaveIndexes writes refs to path atomically.
func SaveIndexes(path string, refs []IndexRef) error {
	b, _ := json.MarshalIndent(refs, "", "  ")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
