package bundle

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// TrustedKey is one key a user trusts to sign bundles, by name.
type TrustedKey struct {
	Name        string    `json:"name"`
	Key         string    `json:"key"` // base64 ed25519 public key
	Fingerprint string    `json:"fingerprint"`
	Added       time.Time `json:"added"`
}

// Public decodes Key.
func (k TrustedKey) Public() ed25519.PublicKey {
	b, _ := base64.StdEncoding.DecodeString(k.Key)
	return ed25519.PublicKey(b)
}

// TrustStore is a user's trusted keys, kept as JSON in one file.
type TrustStore struct {
	Path string
	Keys []TrustedKey `json:"keys"`
}

// LoadTrust reads the store at path; a missing file is an empty store.
func LoadTrust(path string) (*TrustStore, error) {
	ts := &TrustStore{Path: path}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return ts, nil
	}
	if err == nil {
		err = json.Unmarshal(b, ts)
	}
	if err != nil {
		return nil, fmt.Errorf("trust store %s: %w", path, err)
	}
	return ts, nil
}

// Add trusts pub under name. A key already trusted is renamed; a name
// already used by another key is refused (names pick keys for rm).
func (ts *TrustStore) Add(name string, pub ed25519.PublicKey) error {
	if err := CheckName(name); err != nil {
		return fmt.Errorf("trust add: %w", err)
	}
	fp := Fingerprint(pub)
	for i, k := range ts.Keys {
		if k.Name == name && k.Fingerprint != fp {
			return fmt.Errorf("trust add: the name %q is taken by key %s (trust rm %s first)", name, k.Fingerprint, name)
		}
		if k.Fingerprint == fp {
			ts.Keys[i].Name = name
			return ts.save()
		}
	}
	ts.Keys = append(ts.Keys, TrustedKey{Name: name, Key: base64.StdEncoding.EncodeToString(pub), Fingerprint: fp, Added: time.Now().UTC()})
	sort.Slice(ts.Keys, func(i, j int) bool { return ts.Keys[i].Name < ts.Keys[j].Name })
	return ts.save()
}

// Remove forgets the key named, or with the fingerprint, nameOrFP.
func (ts *TrustStore) Remove(nameOrFP string) (TrustedKey, error) {
	for i, k := range ts.Keys {
		if k.Name == nameOrFP || k.Fingerprint == nameOrFP {
			ts.Keys = append(ts.Keys[:i], ts.Keys[i+1:]...)
			return k, ts.save()
		}
	}
	return TrustedKey{}, fmt.Errorf("trust rm: no trusted key named %q (see runbox plugins trust ls)", nameOrFP)
}

// Lookup returns the trusted key pub, if trusted.
func (ts *TrustStore) Lookup(pub ed25519.PublicKey) (TrustedKey, bool) {
	fp := Fingerprint(pub)
	for _, k := range ts.Keys {
		if k.Fingerprint == fp {
			return k, true
		}
	}
	return TrustedKey{}, false
}

// save writes the store atomically (a temp file renamed over it).
func (ts *TrustStore) save() error {
	b, _ := json.MarshalIndent(struct {
		Keys []TrustedKey `json:"keys"`
	}{ts.Keys}, "", "  ")
	if err := os.MkdirAll(filepath.Dir(ts.Path), 0o700); err != nil {
		return fmt.Errorf("trust store: %w", err)
	}
	tmp := ts.Path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("trust store: %w", err)
	}
	if err := os.Rename(tmp, ts.Path); err != nil {
		return fmt.Errorf("trust store: %w", err)
	}
	return nil
}

// SigState is what a bundle's signature says, against a trust store.
type SigState int

// Signature states, exactly one per bundle.
const (
	Unsigned     SigState = iota // no signature
	BadSignature                 // a signature that does not verify
	Untrusted                    // verifies, with a key not in the store
	Trusted                      // verifies, with a key in the store
)

// Signature is a bundle's signature checked against a trust store.
type Signature struct {
	State       SigState
	Fingerprint string // the signer's, when known
	KeyName     string // the trusted key's name (Trusted; "" for a --trust key)
	Signer      ed25519.PublicKey
}

// String is what verify prints: one of four sentences.
func (s Signature) String() string {
	switch s.State {
	case Trusted:
		if s.KeyName == "" {
			return fmt.Sprintf("signed by a key given with --trust (%s)", s.Fingerprint)
		}
		return fmt.Sprintf("signed by trusted key %s (%s)", s.KeyName, s.Fingerprint)
	case Untrusted:
		return fmt.Sprintf("signed by an untrusted key (%s)", s.Fingerprint)
	case BadSignature:
		return "bad signature: the manifest was changed after signing, or the signature is corrupt"
	}
	return "unsigned"
}

// CheckSignature checks bm's signature. The manifest names its signer's
// public key (Manifest.Signer), so a signature is checked on its own and
// then the signer looked up; a bundle of an earlier release names none
// and is tried with each trusted key (extra keys too).
func CheckSignature(bm Manifest, ts *TrustStore, extra ...ed25519.PublicKey) Signature {
	if bm.Signature == "" {
		return Signature{State: Unsigned}
	}
	sig, err := base64.StdEncoding.DecodeString(bm.Signature)
	if err != nil {
		return Signature{State: BadSignature}
	}
	cands := append([]ed25519.PublicKey{}, extra...)
	if ts != nil {
		for _, k := range ts.Keys {
			cands = append(cands, k.Public())
		}
	}
	if bm.Signer != "" {
		pub, err := ParsePublicKey([]byte(bm.Signer))
		if err != nil || !ed25519.Verify(pub, bm.SigningBytes(), sig) {
			return Signature{State: BadSignature}
		}
		s := Signature{State: Untrusted, Fingerprint: Fingerprint(pub), Signer: pub}
		for _, c := range cands {
			if c.Equal(pub) {
				s.State = Trusted
				if k, ok := ts.lookup(pub); ok {
					s.KeyName = k.Name
				}
			}
		}
		return s
	}
	for _, c := range cands {
		if ed25519.Verify(c, bm.SigningBytes(), sig) {
			s := Signature{State: Trusted, Fingerprint: Fingerprint(c), Signer: c}
			if k, ok := ts.lookup(c); ok {
				s.KeyName = k.Name
			}
			return s
		}
	}
	// No signer named and no trusted key verifies: it cannot be told
	// apart from a corrupt signature.
	return Signature{State: BadSignature}
}

func (ts *TrustStore) lookup(pub ed25519.PublicKey) (TrustedKey, bool) {
	if ts == nil {
		return TrustedKey{}, false
	}
	return ts.Lookup(pub)
}
