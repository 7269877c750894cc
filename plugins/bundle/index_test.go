package bundle_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runbox/runbox/plugins/bundle"
)

// published is a group's index served over HTTP on 127.0.0.1: bundles
// under /b/, the index at /index.json, entries added by the test.
type published struct {
	srv     *httptest.Server
	files   map[string][]byte
	entries []bundle.IndexEntry
}

func publish(t *testing.T) *published {
	p := &published{files: map[string][]byte{}}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/index.json" {
			json.NewEncoder(w).Encode(bundle.Index{Bundles: p.entries})
			return
		}
		b, ok := p.files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// add packs a bundle of version, signed by key, and lists it (url
// relative to the index, as a group would write it).
func (p *published) add(t *testing.T, version string, key ed25519.PrivateKey) bundle.IndexEntry {
	out := filepath.Join(t.TempDir(), "b.tar.gz")
	if _, err := bundle.Pack(srcDir(t, "echo-bundle", version), out, key); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	sum := sha256.Sum256(b)
	path := "/b/echo-bundle-" + version + ".tar.gz"
	p.files[path] = b
	e := bundle.IndexEntry{
		Name: "echo-bundle", Version: version, Description: "Echoes the exit code: a test classifier",
		URL: strings.TrimPrefix(path, "/"), SHA256: hex.EncodeToString(sum[:]),
		Signer: base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey)),
	}
	p.entries = append(p.entries, e)
	return e
}

func TestIndexInstallAndUpgrade(t *testing.T) {
	ctx := context.Background()
	_, priv, _ := ed25519.GenerateKey(nil)
	ts, _ := bundle.LoadTrust(filepath.Join(t.TempDir(), "trust.json"))
	ts.Add("lab", priv.Public().(ed25519.PublicKey))
	pol := bundle.Policy{Trust: ts}
	plugins := filepath.Join(t.TempDir(), "plugins")

	pub := publish(t)
	pub.add(t, "1.0.0", priv)
	pub.add(t, "1.10.0", priv)
	pub.add(t, "1.9.0", priv)
	ref := bundle.IndexRef{Name: "lab", URL: pub.srv.URL + "/index.json"}
	ix, err := bundle.Fetcher{}.FetchIndex(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if found := bundle.Search(ix.Bundles, []string{"ECHOES", "classifier"}); len(found) != 1 || found[0].Version != "1.10.0" {
		t.Fatalf("search: %+v", found)
	}
	if found := bundle.Search(ix.Bundles, []string{"nothing-like-it"}); len(found) != 0 {
		t.Fatalf("search for nothing: %+v", found)
	}
	e, err := bundle.Find(ix.Bundles, "echo-bundle", "1.0.0")
	if err != nil || !strings.HasPrefix(e.URL, pub.srv.URL+"/b/") {
		t.Fatalf("find @1.0.0: %+v %v", e, err)
	}
	if m, sig, err := (bundle.Fetcher{}).InstallEntry(ctx, e, plugins, pol); err != nil || m.Version != "1.0.0" || sig.State != bundle.Trusted {
		t.Fatalf("install @1.0.0: %+v %v %v", m, sig, err)
	}
	newest, _ := bundle.Find(ix.Bundles, "echo-bundle", "")
	if newest.Version != "1.10.0" {
		t.Fatalf("newest = %s, want 1.10.0 (numeric order)", newest.Version)
	}
	if m, _, err := (bundle.Fetcher{}).InstallEntry(ctx, newest, plugins, pol); err != nil || m.Version != "1.10.0" {
		t.Fatalf("upgrade: %+v %v", m, err)
	}
}

// A download that is not what the index says, or an index that moves to
// another host, is refused and the installed bundle stays.
func TestIndexRefusals(t *testing.T) {
	ctx := context.Background()
	_, priv, _ := ed25519.GenerateKey(nil)
	_, other, _ := ed25519.GenerateKey(nil)
	ts, _ := bundle.LoadTrust(filepath.Join(t.TempDir(), "trust.json"))
	ts.Add("lab", priv.Public().(ed25519.PublicKey))
	ts.Add("other", other.Public().(ed25519.PublicKey))
	pol := bundle.Policy{Trust: ts}
	plugins := filepath.Join(t.TempDir(), "plugins")
	pub := publish(t)
	v1 := pub.add(t, "1.0.0", priv)
	v1.URL = pub.srv.URL + "/" + v1.URL
	if _, _, err := (bundle.Fetcher{}).InstallEntry(ctx, v1, plugins, pol); err != nil {
		t.Fatal(err)
	}
	installed := func() string {
		b, _ := os.ReadFile(filepath.Join(plugins, "echo-bundle", bundle.ManifestFile))
		return string(b)
	}
	before := installed()

	digest := pub.add(t, "2.0.0", priv)
	digest.URL = pub.srv.URL + "/" + digest.URL
	digest.SHA256, digest.Index = strings.Repeat("0", 64), "lab"
	// Signed by another key than the index names (both trusted here: the
	// index's word on who signs is checked too).
	signer := pub.add(t, "3.0.0", other)
	signer.URL = pub.srv.URL + "/" + signer.URL
	signer.Signer = base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey))

	for _, tt := range []struct {
		name string
		e    bundle.IndexEntry
		want string
		is   error
	}{
		{"digest mismatch", digest, "index lab says 0000", bundle.ErrDigest},
		{"signer mismatch", signer, "says it is signed by", bundle.ErrNotTrusted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := bundle.Fetcher{}.InstallEntry(ctx, tt.e, plugins, pol)
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if installed() != before {
				t.Fatal("a refused install changed the installed bundle")
			}
		})
	}

	// The index redirects to another host (another port on 127.0.0.1 is
	// another host to a browser and to us).
	elsewhere := publish(t)
	elsewhere.add(t, "9.0.0", priv)
	moving := httptest.NewServer(http.RedirectHandler(elsewhere.srv.URL+"/index.json", http.StatusFound))
	defer moving.Close()
	_, err := bundle.Fetcher{}.FetchIndex(ctx, bundle.IndexRef{Name: "moving", URL: moving.URL + "/index.json"})
	if err == nil || !strings.Contains(err.Error(), "redirects to another host") {
		t.Fatalf("cross-host redirect: %v", err)
	}
	// Same host: followed.
	mux := http.NewServeMux()
	mux.Handle("/old.json", http.RedirectHandler("/index.json", http.StatusMovedPermanently))
	mux.HandleFunc("/index.json", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"bundles":[]}`)) })
	same := httptest.NewServer(mux)
	defer same.Close()
	if _, err := (bundle.Fetcher{}).FetchIndex(ctx, bundle.IndexRef{Name: "same", URL: same.URL + "/old.json"}); err != nil {
		t.Fatalf("same-host redirect: %v", err)
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"1.10.0", "1.9.0", 1}, {"1.0.0", "1.0.0", 0}, {"v2", "1.9.9", 1},
		{"1.0.0-rc1", "1.0.0", -1}, {"0.1.0", "0.1", 0}, {"1.0.0-rc2", "1.0.0-rc1", 1},
	} {
		if got := bundle.CompareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
