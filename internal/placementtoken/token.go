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

const version = "v1"

// MinKeyBytes is the shortest key accepted: HMAC-SHA256 wants 32 bytes.
const MinKeyBytes = 32

// Subject is what a token is about.
type Subject struct {
	Namespace, Name, GenerateName, Seed string
}

// Signer issues and checks tokens.
type Signer struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

// NewSigner returns a Signer; ttl bounds how long a token verifies.
func NewSigner(key []byte, ttl time.Duration, now func() time.Time) (*Signer, error) {
	if len(key) < MinKeyBytes {
		return nil, fmt.Errorf("placement key: %d bytes, need at least %d", len(key), MinKeyBytes)
	}
	if ttl <= 0 {
		return nil, fmt.Errorf("placement token ttl: %s must be positive", ttl)
	}
	if now == nil {
		now = time.Now
	}
	return &Signer{key: append([]byte(nil), key...), ttl: ttl, now: now}, nil
}

// Sign returns the annotation value for s: "v1.<expiry>.<mac>".
func (g *Signer) Sign(s Subject) string {
	exp := strconv.FormatInt(g.now().Add(g.ttl).Unix(), 10)
	return version + "." + exp + "." + g.mac(s, exp)
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
	for _, c := range candidates {
		want, _ := base64.RawURLEncoding.DecodeString(g.mac(c, parts[1]))
		if hmac.Equal(got, want) {
			if g.now().Unix() > exp {
				return ErrExpired
			}
			return nil
		}
	}
	return ErrMismatch
}

func (g *Signer) mac(s Subject, exp string) string {
	m := hmac.New(sha256.New, g.key)
	// NUL separators: none of the fields can contain one, so the encoding is
	// unambiguous.
	for _, f := range []string{version, s.Namespace, s.Name, s.GenerateName, s.Seed, exp} {
		m.Write([]byte(f))
		m.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
