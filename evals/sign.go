// Package evals measures which work a local model can take: the eval tasks and their
// predicates, the screen, the signed A/B records, and the routing those records earn.
package evals

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const (
	publicPrefix  = "ed25519:"
	privatePrefix = "ed25519-private:"
)

// FormatPublicKey writes a public key the way trust.keys lists it.
func FormatPublicKey(pub ed25519.PublicKey) string {
	return publicPrefix + base64.StdEncoding.EncodeToString(pub)
}

// ParsePublicKey reads ed25519:<base64 of 32 bytes>.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	b64, ok := strings.CutPrefix(strings.TrimSpace(s), publicPrefix)
	if !ok {
		return nil, fmt.Errorf("%q is not an ed25519 public key (want ed25519:<base64>)", s)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%q is not an ed25519 public key: want the base64 of 32 bytes", s)
	}
	return ed25519.PublicKey(raw), nil
}

// GenerateKey writes a new private key to file (mode 0600) and its public key to file.pub as one
// line, ed25519:<base64>. It never overwrites a key.
func GenerateKey(file string) (string, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	// The folder too is the operator's alone (~/.config/locum on a fresh machine).
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return "", fmt.Errorf("the key's folder: %w", err)
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("writing the private key: %w", err)
	}
	if _, err := fmt.Fprintf(f, "%s%s\n", privatePrefix, base64.StdEncoding.EncodeToString(priv.Seed())); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	line := FormatPublicKey(pub)
	if err := os.WriteFile(file+".pub", []byte(line+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("writing the public key: %w", err)
	}
	return line, nil
}

// LoadPrivateKey reads a key GenerateKey wrote.
func LoadPrivateKey(file string) (ed25519.PrivateKey, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	b64, ok := strings.CutPrefix(strings.TrimSpace(string(data)), privatePrefix)
	if !ok {
		return nil, fmt.Errorf("signing key %s: not an ed25519 private key written by locum eval keygen", file)
	}
	seed, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("signing key %s: want the base64 of a 32-byte seed", file)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// Canonical is the bytes a signature covers: the document without its signature, as JSON with
// object keys sorted and no insignificant space. Numbers keep the text they were written with.
func Canonical(doc map[string]any) ([]byte, error) {
	rest := make(map[string]any, len(doc))
	for k, v := range doc {
		if k != "signature" {
			rest[k] = v
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rest); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Sign sets doc's signer and signature.
func Sign(doc map[string]any, key ed25519.PrivateKey) error {
	doc["signer"] = FormatPublicKey(key.Public().(ed25519.PublicKey))
	data, err := Canonical(doc)
	if err != nil {
		return err
	}
	doc["signature"] = base64.StdEncoding.EncodeToString(ed25519.Sign(key, data))
	return nil
}

// Signature failures, each a reason never to use a document for routing.
var (
	ErrUnsigned     = errors.New("it is not signed")
	ErrBadSignature = errors.New("its signature does not match its contents: it was edited after signing, or signed by another key")
)

// UntrustedKeyError is a document signed by a key the trusted list does not name.
type UntrustedKeyError struct {
	Key string
	// Keys says which list was asked, when it is not the workspace's trust.keys.
	Keys *TrustedKeys
}

func (e *UntrustedKeyError) Error() string {
	if e.Keys != nil {
		msg := fmt.Sprintf("it is signed by %s, which %s does not list", e.Key, e.Keys.Where)
		for _, k := range e.Keys.Vouched {
			if pk, err := ParsePublicKey(k); err == nil {
				if sk, err := ParsePublicKey(e.Key); err == nil && pk.Equal(sk) {
					msg += "; the repository's .locum/workspace.json trusts it, but a repository cannot vouch for itself: if you accept its A/B records, add the key to trust_keys in your user config"
					break
				}
			}
		}
		return msg
	}
	return fmt.Sprintf("it is signed by %s, which .locum/workspace.json does not list in trust.keys", e.Key)
}

// Trusts reports whether trusted lists the public half of key.
func Trusts(trusted []string, key ed25519.PrivateKey) bool {
	pub := key.Public().(ed25519.PublicKey)
	for _, t := range trusted {
		if k, err := ParsePublicKey(t); err == nil && k.Equal(pub) {
			return true
		}
	}
	return false
}

// TrustedKeys are the keys whose signatures route a role on this machine, and where they come
// from: the operator's (the user config), never a repository's own list.
type TrustedKeys struct {
	Keys  []string
	Where string
	// Vouched are keys a repository lists for itself; named in the refusal, never trusted.
	Vouched []string
}

// VerifyTrusting is Verify against keys, with a refusal that says where the keys come from.
func VerifyTrusting(doc map[string]any, keys TrustedKeys) error {
	err := Verify(doc, keys.Keys)
	var ue *UntrustedKeyError
	if errors.As(err, &ue) && keys.Where != "" {
		ue.Keys = &keys
	}
	return err
}

// Verify checks doc's signature and that its signer is one of trusted.
func Verify(doc map[string]any, trusted []string) error {
	signer, _ := doc["signer"].(string)
	sig, _ := doc["signature"].(string)
	if signer == "" || sig == "" {
		return ErrUnsigned
	}
	pub, err := ParsePublicKey(signer)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	raw, err := base64.StdEncoding.DecodeString(sig)
	if err != nil {
		return ErrBadSignature
	}
	data, err := Canonical(doc)
	if err != nil {
		return err
	}
	if !ed25519.Verify(pub, data, raw) {
		return ErrBadSignature
	}
	for _, t := range trusted {
		if k, err := ParsePublicKey(t); err == nil && k.Equal(pub) {
			return nil
		}
	}
	return &UntrustedKeyError{Key: signer}
}
