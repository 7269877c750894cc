package bundle

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Keys are ed25519 in the formats OpenSSL and Go's crypto/x509 share: the
// private key PKCS#8 in a "PRIVATE KEY" PEM block, the public key PKIX in a
// "PUBLIC KEY" PEM block (`openssl genpkey -algorithm ed25519` makes the
// former, `openssl pkey -pubout` the latter). Raw base64 (a 32-byte seed
// or public key, a 64-byte private key) is still read, as earlier
// releases wrote it.

// GenerateKey writes a new key pair: the private key to priv (mode 0600,
// refused when it exists) and the public key to priv+".pub".
func GenerateKey(priv string) (ed25519.PublicKey, error) {
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("keygen: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("keygen: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(priv), 0o700); err != nil {
		return nil, fmt.Errorf("keygen: %w", err)
	}
	f, err := os.OpenFile(priv, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("keygen: %w", err)
	}
	err = pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.WriteFile(priv+".pub", EncodePublicKey(pub), 0o644)
	}
	if err != nil {
		_ = os.Remove(priv)
		return nil, fmt.Errorf("keygen: %w", err)
	}
	return pub, nil
}

// EncodePublicKey returns pub as a PKIX "PUBLIC KEY" PEM block.
func EncodePublicKey(pub ed25519.PublicKey) []byte {
	der, _ := x509.MarshalPKIXPublicKey(pub) // an ed25519 key always marshals
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// ParsePrivateKey reads an ed25519 private key: PKCS#8 PEM, or raw base64.
func ParsePrivateKey(b []byte) (ed25519.PrivateKey, error) {
	if blk, _ := pem.Decode(b); blk != nil {
		k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("private key: %w", err)
		}
		ek, ok := k.(ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("private key is %T, want ed25519", k)
		}
		return ek, nil
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, errors.New("private key: neither PEM (PKCS#8) nor base64")
	}
	switch len(raw) {
	case ed25519.SeedSize:
		return ed25519.NewKeyFromSeed(raw), nil
	case ed25519.PrivateKeySize:
		return ed25519.PrivateKey(raw), nil
	}
	return nil, fmt.Errorf("private key: want a %d-byte seed or %d-byte key, got %d bytes", ed25519.SeedSize, ed25519.PrivateKeySize, len(raw))
}

// ReadPrivateKey reads ParsePrivateKey's formats from a file.
func ReadPrivateKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := ParsePrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// ParsePublicKey reads an ed25519 public key: PKIX PEM, or raw base64.
func ParsePublicKey(b []byte) (ed25519.PublicKey, error) {
	if blk, _ := pem.Decode(b); blk != nil {
		k, err := x509.ParsePKIXPublicKey(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("public key: %w", err)
		}
		ek, ok := k.(ed25519.PublicKey)
		if !ok {
			return nil, fmt.Errorf("public key is %T, want ed25519", k)
		}
		return ek, nil
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, errors.New("public key: want PEM (PKIX) or a base64 32-byte ed25519 key")
	}
	return ed25519.PublicKey(raw), nil
}

// LoadPublicKey reads a public key given inline (base64 or PEM) or as a
// file holding one; a private key file gives its public half.
func LoadPublicKey(s string) (ed25519.PublicKey, error) {
	if k, err := ParsePublicKey([]byte(s)); err == nil {
		return k, nil
	}
	b, err := os.ReadFile(s)
	if err != nil {
		return nil, fmt.Errorf("key %q: neither a base64 ed25519 public key nor a readable file: %w", s, err)
	}
	if k, err := ParsePublicKey(b); err == nil {
		return k, nil
	}
	if k, err := ParsePrivateKey(b); err == nil {
		return k.Public().(ed25519.PublicKey), nil
	}
	return nil, fmt.Errorf("%s: no ed25519 public key (PEM or base64) in it", s)
}

// Fingerprint names a public key briefly: "SHA256:" and the unpadded
// base64 of its sha256, as ssh-keygen -l shows keys.
func Fingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}
