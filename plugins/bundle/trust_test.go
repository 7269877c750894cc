package bundle_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runbox/runbox/plugins/bundle"
	"github.com/runbox/runbox/plugins/internal/plugintest"
)

// A key pair made by `openssl genpkey -algorithm ed25519` and
// `openssl pkey -pubout` (OpenSSL 3): the formats keygen writes too.
const (
	opensslPriv = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIPDRkBiM8l2HzbJCgfNo2i9w69Z9zIEVk4Y3b9lZ8hnH\n-----END PRIVATE KEY-----\n"
	opensslPub  = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA7PlcdDeoWCLNH6OJueaWJ8X+FOmfwkXlRFHChLPBfnk=\n-----END PUBLIC KEY-----\n"
)

// srcDir is a directory to pack: the echo plugin and a manifest naming
// name and version.
func srcDir(t *testing.T, name, version string) string {
	t.Helper()
	wasm, err := os.ReadFile(plugintest.Build(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "echo.wasm"), wasm)
	writeFile(t, filepath.Join(dir, bundle.ManifestFile), []byte(`{"name":"`+name+`","version":"`+version+`"}`))
	return dir
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestKeygenAndOpenSSLKeys(t *testing.T) {
	dir := t.TempDir()
	priv := filepath.Join(dir, "k.pem")
	pub, err := bundle.GenerateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.GenerateKey(priv); err == nil {
		t.Fatal("keygen overwrote an existing key")
	}
	if fi, _ := os.Stat(priv); fi.Mode().Perm() != 0o600 {
		t.Errorf("private key mode %v, want 0600", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(priv)
	if !bytes.HasPrefix(b, []byte("-----BEGIN PRIVATE KEY-----")) {
		t.Errorf("private key not PKCS#8 PEM:\n%s", b)
	}
	k, err := bundle.ReadPrivateKey(priv)
	if err != nil || !k.Public().(ed25519.PublicKey).Equal(pub) {
		t.Fatalf("read back: %v", err)
	}
	for _, src := range []string{priv + ".pub", priv} { // a .pub file, or the private key's public half
		if got, err := bundle.LoadPublicKey(src); err != nil || !got.Equal(pub) {
			t.Errorf("LoadPublicKey(%s) = %v", src, err)
		}
	}
	ok, err := bundle.ParsePrivateKey([]byte(opensslPriv))
	if err != nil {
		t.Fatalf("OpenSSL private key: %v", err)
	}
	op, err := bundle.ParsePublicKey([]byte(opensslPub))
	if err != nil || !ok.Public().(ed25519.PublicKey).Equal(op) {
		t.Fatalf("OpenSSL public key: %v", err)
	}
	if _, err := bundle.ParsePrivateKey([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")); err == nil {
		t.Error("a corrupt PEM key was accepted")
	}
}

func TestTrustStore(t *testing.T) {
	p := filepath.Join(t.TempDir(), "trust.json")
	ts, _ := bundle.LoadTrust(p)
	a, _, _ := ed25519.GenerateKey(nil)
	b, _, _ := ed25519.GenerateKey(nil)
	if err := ts.Add("alice", a); err != nil {
		t.Fatal(err)
	}
	if err := ts.Add("alice", b); err == nil || !strings.Contains(err.Error(), "taken") {
		t.Fatalf("a second key under one name: %v", err)
	}
	if err := ts.Add("bob", b); err != nil {
		t.Fatal(err)
	}
	again, err := bundle.LoadTrust(p)
	if err != nil || len(again.Keys) != 2 {
		t.Fatalf("reloaded: %+v, %v", again, err)
	}
	if k, ok := again.Lookup(b); !ok || k.Name != "bob" || k.Fingerprint != bundle.Fingerprint(b) {
		t.Fatalf("lookup bob: %+v %v", k, ok)
	}
	if _, err := again.Remove(bundle.Fingerprint(a)); err != nil {
		t.Fatal(err)
	}
	if _, err := again.Remove("alice"); err == nil {
		t.Fatal("removed alice twice")
	}
}

func TestVerifySaysWhoSigned(t *testing.T) {
	src := srcDir(t, "echo-bundle", "1.0.0")
	_, priv, _ := ed25519.GenerateKey(nil)
	ts, _ := bundle.LoadTrust(filepath.Join(t.TempDir(), "trust.json"))
	out := t.TempDir()
	signed := filepath.Join(out, "signed.tar.gz")
	if _, err := bundle.Pack(src, signed, priv); err != nil {
		t.Fatal(err)
	}
	unsigned := filepath.Join(out, "unsigned")
	if _, err := bundle.Pack(src, unsigned, nil); err != nil {
		t.Fatal(err)
	}
	// Signed afterwards with plugins sign, then its manifest edited.
	bad := filepath.Join(out, "bad")
	if _, err := bundle.Pack(src, bad, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Sign(bad, priv); err != nil {
		t.Fatal(err)
	}
	mf := filepath.Join(bad, bundle.ManifestFile)
	raw, _ := os.ReadFile(mf)
	writeFile(t, mf, bytes.Replace(raw, []byte(`"1.0.0"`), []byte(`"9.0.0"`), 1))

	check := func(path, want string) {
		t.Helper()
		_, sig, err := bundle.Inspect(path, ts)
		if err != nil {
			t.Fatalf("inspect %s: %v", path, err)
		}
		if !strings.HasPrefix(sig.String(), want) {
			t.Errorf("%s: %q, want %q", filepath.Base(path), sig, want)
		}
	}
	check(unsigned, "unsigned")
	check(signed, "signed by an untrusted key (SHA256:")
	check(bad, "bad signature")
	if err := ts.Add("lab", priv.Public().(ed25519.PublicKey)); err != nil {
		t.Fatal(err)
	}
	check(signed, "signed by trusted key lab")
	check(bad, "bad signature")
}

// Each refusal leaves the installed bundle as it was.
func TestInstallRefusals(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(nil)
	_, stranger, _ := ed25519.GenerateKey(nil)
	ts, _ := bundle.LoadTrust(filepath.Join(t.TempDir(), "trust.json"))
	if err := ts.Add("lab", priv.Public().(ed25519.PublicKey)); err != nil {
		t.Fatal(err)
	}
	plugins := filepath.Join(t.TempDir(), "plugins")
	v1 := filepath.Join(t.TempDir(), "v1.tar.gz")
	if _, err := bundle.Pack(srcDir(t, "echo-bundle", "1.0.0"), v1, priv); err != nil {
		t.Fatal(err)
	}
	if _, _, err := bundle.InstallChecked(v1, plugins, bundle.Policy{Trust: ts}); err != nil {
		t.Fatal(err)
	}
	installed := func() string {
		raw, err := os.ReadFile(filepath.Join(plugins, "echo-bundle", bundle.ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	before := installed()

	v2src := srcDir(t, "echo-bundle", "2.0.0")
	pack := func(key ed25519.PrivateKey) string {
		out := filepath.Join(t.TempDir(), "b")
		if _, err := bundle.Pack(v2src, out, key); err != nil {
			t.Fatal(err)
		}
		return out
	}
	unsigned, untrusted, good := pack(nil), pack(stranger), pack(priv)
	tampered := pack(priv)
	wasm, _ := os.ReadFile(filepath.Join(tampered, "echo.wasm"))
	wasm[len(wasm)-1] ^= 0xff
	writeFile(t, filepath.Join(tampered, "echo.wasm"), wasm)
	extra := pack(priv)
	writeFile(t, filepath.Join(extra, "other.wasm"), wasm)
	missing := pack(priv)
	os.Remove(filepath.Join(missing, "echo.wasm"))
	symlinked := pack(nil)
	os.Symlink("/etc/passwd", filepath.Join(symlinked, "passwd"))
	abi := t.TempDir()
	writeFile(t, filepath.Join(abi, "echo.wasm"), wasm)
	writeFile(t, filepath.Join(abi, bundle.ManifestFile), []byte(`{"name":"echo-bundle","version":"3","abi":99,"plugins":[{"file":"echo.wasm","sha256":"00"}]}`))

	tests := []struct {
		name, path string
		pol        bundle.Policy
		want       string
		is         error
	}{
		{"unsigned", unsigned, bundle.Policy{Trust: ts}, "--allow-unsigned", bundle.ErrNotTrusted},
		{"untrusted key", untrusted, bundle.Policy{Trust: ts}, "--trust", bundle.ErrNotTrusted},
		{"signatures required", unsigned, bundle.Policy{Trust: ts, AllowUnsigned: true, RequireSigned: true}, "signatures are required", bundle.ErrNotTrusted},
		{"untrusted when required", untrusted, bundle.Policy{Trust: ts, AllowUnsigned: true, RequireSigned: true}, "trusted keys are required", bundle.ErrNotTrusted},
		{"tampered module", tampered, bundle.Policy{Trust: ts, AllowUnsigned: true}, "sha256", bundle.ErrChecksum},
		{"extra file", extra, bundle.Policy{Trust: ts}, "other.wasm is in the bundle but not in its manifest", bundle.ErrExtraFile},
		{"missing file", missing, bundle.Policy{Trust: ts}, "echo.wasm missing", nil},
		{"symlink", symlinked, bundle.Policy{Trust: ts, AllowUnsigned: true}, "not a regular file", nil},
		{"abi", abi, bundle.Policy{Trust: ts, AllowUnsigned: true}, "ABI 99", bundle.ErrABI},
		{"traversal", tarWith(t, tar.Header{Name: "../../evil.wasm", Typeflag: tar.TypeReg, Size: 4}), bundle.Policy{AllowUnsigned: true}, "escapes the bundle", nil},
		{"tar symlink", tarWith(t, tar.Header{Name: "echo.wasm", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}), bundle.Policy{AllowUnsigned: true}, "not a regular file", nil},
		{"oversized", tarWith(t, tar.Header{Name: "echo.wasm", Typeflag: tar.TypeReg, Size: 1 << 40}), bundle.Policy{AllowUnsigned: true}, "larger than", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := bundle.InstallChecked(tt.path, plugins, tt.pol)
			if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("err = %v, want %q (%v)", err, tt.want, tt.is)
			}
			if got := installed(); got != before {
				t.Fatalf("a refused install changed the installed bundle:\n%s", got)
			}
		})
	}
	// Bad signature: the manifest of a signed bundle, edited.
	bad := pack(priv)
	mf := filepath.Join(bad, bundle.ManifestFile)
	raw, _ := os.ReadFile(mf)
	writeFile(t, mf, bytes.Replace(raw, []byte(`"2.0.0"`), []byte(`"2.0.1"`), 1))
	if _, _, err := bundle.InstallChecked(bad, plugins, bundle.Policy{Trust: ts, AllowUnsigned: true}); !errors.Is(err, bundle.ErrBadSignature) || installed() != before {
		t.Fatalf("bad signature: %v", err)
	}
	// --trust for this install, and the good one.
	if _, sig, err := bundle.InstallChecked(untrusted, plugins, bundle.Policy{Trust: ts, Extra: []ed25519.PublicKey{stranger.Public().(ed25519.PublicKey)}}); err != nil || sig.State != bundle.Trusted {
		t.Fatalf("--trust: %v %v", sig, err)
	}
	if m, sig, err := bundle.InstallChecked(good, plugins, bundle.Policy{Trust: ts}); err != nil || m.Version != "2.0.0" || sig.KeyName != "lab" {
		t.Fatalf("good: %+v %v %v", m, sig, err)
	}
}

// tarWith is a .tar.gz holding one entry with hdr, its content zeros (none
// when the header claims more than it would be reasonable to write).
func tarWith(t *testing.T, hdr tar.Header) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&hdr); err != nil {
		t.Fatal(err)
	}
	if hdr.Typeflag == tar.TypeReg && hdr.Size < 1<<20 {
		tw.Write(make([]byte, hdr.Size))
		tw.Close()
	} else {
		tw.Flush()
	}
	zw.Close()
	p := filepath.Join(t.TempDir(), "b.tar.gz")
	writeFile(t, p, buf.Bytes())
	return p
}
