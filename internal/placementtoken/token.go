// Package placementtoken signs and verifies the annotation with which the
// mutating webhook marks a seed it chose itself, so the validating webhook can
// let that placement through without the user holding binding RBAC.
//
// A token binds namespace, name (as known at mutation time, empty for
// generateName), generateName, seed, an expiry and a random nonce under a key
// shared by all replicas. It cannot be forged without the key, does not
// verify for another Shoot name, namespace or seed, and goes stale quickly.
// A generateName token verifies for every name with its prefix, so Verify
// alone would let one token serve many Shoots: the webhook and the retry
// controller honour a token through Redeem (redeem.go), which lets its nonce
// serve one Shoot only.
package placementtoken

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
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

// version is what Sign writes: "v2.<expiry>.<nonce>.<mac>".
const version = "v2"

// legacyVersion tokens ("v1.<expiry>.<mac>", no nonce) come from replicas not
// yet upgraded. They verify for the exact name they were signed for only
// (never for a generated name, the case a nonce exists for), so that a
// rolling upgrade does not refuse the placements of the old replicas.
const legacyVersion = "v1"

// maxNonceLen bounds the nonce of a token read off a Shoot; Sign's nonces
// (crypto/rand.Text) have 26 characters.
const maxNonceLen = 64

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
	// used and carriers make tokens single-use (redeem.go).
	used     ledger
	carriers CarrierLookup
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

// Sign returns the annotation value for s: "v2.<expiry>.<nonce>.<mac>", with
// a fresh random nonce (128 bits) that makes every token distinct.
func (g *Signer) Sign(s Subject) string {
	return g.sign(s, rand.Text())
}

// SignRequest is Sign with the nonce derived from the admission request's
// uid (a UUID the API server never reuses): a repeated call for one request
// gets the same token, any other request another. An empty uid gets a random
// nonce.
func (g *Signer) SignRequest(s Subject, requestUID string) string {
	if requestUID == "" {
		return g.Sign(s)
	}
	sum := sha256.Sum256([]byte("seedwarden.io/placement-nonce\x00" + requestUID))
	return g.sign(s, base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:16]))
}

func (g *Signer) sign(s Subject, nonce string) string {
	exp := strconv.FormatInt(g.now().Add(g.ttl).Unix(), 10)
	return version + "." + exp + "." + nonce + "." + base64.RawURLEncoding.EncodeToString(mac(g.keys[0], version, s, exp, nonce))
}

// Errors of Verify; the validating webhook reports them in its denial.
var (
	ErrMalformed = errors.New("placement token is malformed")
	ErrExpired   = errors.New("placement token has expired")
	ErrMismatch  = errors.New("placement token was not issued for this shoot and seed")
)

// Verify checks a token against a Shoot at validation time, without using it
// up (see Redeem). The name is known by then even for generateName Shoots,
// whose token was signed with an empty name, so both forms are tried.
func (g *Signer) Verify(token string, s Subject) error {
	_, err := g.verify(token, s)
	return err
}

// claims is what a verified token carries beyond its subject.
type claims struct {
	// nonce is empty for a legacy token.
	nonce  string
	expiry time.Time
}

func (g *Signer) verify(token string, s Subject) (claims, error) {
	p, err := parse(token)
	if err != nil {
		return claims{}, err
	}
	candidates := []Subject{s}
	if p.version == version && s.GenerateName != "" && s.Name != "" && strings.HasPrefix(s.Name, s.GenerateName) {
		unnamed := s
		unnamed.Name = ""
		candidates = append(candidates, unnamed)
	}
	for _, key := range g.keys {
		for _, c := range candidates {
			if hmac.Equal(p.mac, mac(key, p.version, c, p.exp, p.nonce)) {
				if g.now().Unix() > p.expiry.Unix() {
					return claims{}, ErrExpired
				}
				return claims{nonce: p.nonce, expiry: p.expiry}, nil
			}
		}
	}
	return claims{}, ErrMismatch
}

// parsed is a token split into its fields, not verified.
type parsed struct {
	version, exp, nonce string
	expiry              time.Time
	mac                 []byte
}

func parse(token string) (parsed, error) {
	parts := strings.Split(token, ".")
	var p parsed
	switch {
	case len(parts) == 4 && parts[0] == version && validNonce(parts[2]):
		p = parsed{version: version, exp: parts[1], nonce: parts[2]}
	case len(parts) == 3 && parts[0] == legacyVersion:
		p = parsed{version: legacyVersion, exp: parts[1]}
	default:
		return parsed{}, ErrMalformed
	}
	exp, err := strconv.ParseInt(p.exp, 10, 64)
	if err != nil {
		return parsed{}, ErrMalformed
	}
	p.expiry = time.Unix(exp, 0)
	if p.mac, err = base64.RawURLEncoding.DecodeString(parts[len(parts)-1]); err != nil {
		return parsed{}, ErrMalformed
	}
	return p, nil
}

// validNonce: letters and digits only (Sign's are base32), so that a nonce
// cannot carry the NUL separator of the MAC input and make a dry-run
// token's input read as a real one's.
func validNonce(n string) bool {
	if n == "" || len(n) > maxNonceLen {
		return false
	}
	for _, c := range []byte(n) {
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// mac is the token's MAC. A legacy token's has no nonce field, so tokens of
// replicas not yet upgraded still verify.
func mac(key []byte, ver string, s Subject, exp, nonce string) []byte {
	m := hmac.New(sha256.New, key)
	fields := []string{ver, s.Namespace, s.Name, s.GenerateName, s.Seed, exp}
	if ver != legacyVersion {
		fields = append(fields, nonce)
	}
	// NUL separators: none of the fields can contain one, so the encoding is
	// unambiguous.
	for _, f := range fields {
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
