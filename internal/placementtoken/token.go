// Package placementtoken signs and verifies the annotation with which the
// mutating webhook marks a seed it chose itself, so the validating webhook can
// let that placement through without the user holding binding RBAC.
//
// A token binds namespace, name (as known at mutation time, empty for
// generateName), generateName, seed and an expiry under a key shared by all
// replicas. It cannot be forged without the key, does not verify for another
// Shoot name, namespace or seed, and goes stale quickly, which bounds replays
// to a Shoot of the same name in the same namespace within the expiry window.
package placementtoken

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Annotation carries the token on the Shoot.
const Annotation = "seedwarden.io/placement"

// SeedAnnotation names the seed the mutating webhook announced for a Shoot it
// leaves to the retry controller to bind (placement mode "binding"). Only
// trusted together with a token that verifies for that seed.
const SeedAnnotation = "seedwarden.io/seed"

const version = "v1"

// dryRunMarker ends the MAC input of a dry-run token.
const dryRunMarker = "dry-run"

// MinKeyBytes is the shortest key accepted: HMAC-SHA256 wants 32 bytes.
const MinKeyBytes = 32

// Subject is what a token is about.
type Subject struct {
	Namespace, Name, GenerateName, Seed string
	// DryRun marks a token minted for a dry-run request. It verifies only
	// for dry-run requests, so that a token shown to a client by a dry run
	// cannot carry a real Shoot onto the seed.
	DryRun bool
}

// Signer issues and checks tokens.
type Signer struct {
	// keys[0] signs; every key verifies.
	keys [][]byte
	ttl  time.Duration
	now  func() time.Time
}

// NewSigner returns a Signer that signs with keys[0] and accepts tokens
// signed with any of keys, so that the key can be rotated across replicas
// without refusing placements made meanwhile: first every replica learns
// the new key (second), then signs with it (first), then the old one goes.
// ttl bounds how long a token verifies.
func NewSigner(keys [][]byte, ttl time.Duration, now func() time.Time) (*Signer, error) {
	if len(keys) == 0 {
		return nil, errors.New("placement key: none given")
	}
	g := &Signer{ttl: ttl, now: now}
	for i, k := range keys {
		if len(k) < MinKeyBytes {
			return nil, fmt.Errorf("placement key %d: %d bytes, need at least %d", i+1, len(k), MinKeyBytes)
		}
		g.keys = append(g.keys, append([]byte(nil), k...))
	}
	if ttl <= 0 {
		return nil, fmt.Errorf("placement token ttl: %s must be positive", ttl)
	}
	if g.now == nil {
		g.now = time.Now
	}
	return g, nil
}

// Sign returns the annotation value for s: "v1.<expiry>.<mac>".
func (g *Signer) Sign(s Subject) string {
	exp := strconv.FormatInt(g.now().Add(g.ttl).Unix(), 10)
	return version + "." + exp + "." + base64.RawURLEncoding.EncodeToString(mac(g.keys[0], s, exp))
}

// Errors of Verify; the validating webhook reports them in its denial.
var (
	ErrMalformed = errors.New("placement token is malformed")
	ErrExpired   = errors.New("placement token has expired")
	ErrMismatch  = errors.New("placement token was not issued for this shoot and seed")
)

// Verify checks a token against a Shoot at validation time. The name is known
// by then even for generateName Shoots, whose token was signed with an empty
// name, so both forms are tried.
func (g *Signer) Verify(token string, s Subject) error {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[0] != version {
		return ErrMalformed
	}
	exp, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return ErrMalformed
	}
	got, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return ErrMalformed
	}
	candidates := []Subject{s}
	if s.GenerateName != "" && s.Name != "" && strings.HasPrefix(s.Name, s.GenerateName) {
		unnamed := s
		unnamed.Name = ""
		candidates = append(candidates, unnamed)
	}
	for _, key := range g.keys {
		for _, c := range candidates {
			if hmac.Equal(got, mac(key, c, parts[1])) {
				if g.now().Unix() > exp {
					return ErrExpired
				}
				return nil
			}
		}
	}
	return ErrMismatch
}

func mac(key []byte, s Subject, exp string) []byte {
	m := hmac.New(sha256.New, key)
	// NUL separators: none of the fields can contain one, so the encoding is
	// unambiguous.
	for _, f := range []string{version, s.Namespace, s.Name, s.GenerateName, s.Seed, exp} {
		m.Write([]byte(f))
		m.Write([]byte{0})
	}
	if s.DryRun {
		// Only dry-run tokens carry the marker, so real tokens are the
		// same as before it existed.
		m.Write([]byte(dryRunMarker))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}
