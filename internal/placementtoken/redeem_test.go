package placementtoken

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The mutating webhook signs a generateName Shoot's token with no name; the
// API server generates the name (and uid) before the validating webhook.
var (
	generated = Subject{Namespace: "garden-a", GenerateName: "web-", Seed: "seed-1"}
	first     = Holder{UID: "uid-1", Namespace: "garden-a", Name: "web-x7k2p"}
	second    = Holder{UID: "uid-2", Namespace: "garden-a", Name: "web-q9z4m"}
)

func subjectFor(h Holder) Subject {
	s := generated
	s.Name = h.Name
	return s
}

func newTestSigner(t *testing.T) (*Signer, *time.Time) {
	t.Helper()
	now := time.Unix(1_700_000_000, 0)
	g, err := NewSigner([][]byte{key}, time.Minute, func() time.Time { return now })
	require.NoError(t, err)
	return g, &now
}

// TestRedeemGenerateNameTokenServesOneShoot: the token of one generateName Shoot, copied onto another Shoot with the same
// prefix, verifies (Verify) but is refused by Redeem; its own Shoot keeps
// redeeming it (the API server's repeated calls, the controller's attempts).
func TestRedeemGenerateNameTokenServesOneShoot(t *testing.T) {
	g, _ := newTestSigner(t)
	tok := g.SignRequest(generated, "admission-uid-1")

	require.NoError(t, g.Verify(tok, subjectFor(second)), "the signature alone cannot tell the Shoots apart")
	require.NoError(t, g.Redeem(tok, subjectFor(first), first))
	require.NoError(t, g.Redeem(tok, subjectFor(first), first), "the same Shoot again")

	err := g.Redeem(tok, subjectFor(second), second)
	assert.ErrorIs(t, err, ErrReused)
	assert.ErrorContains(t, err, `garden-a/web-x7k2p (uid "uid-1")`)
	sameName := Holder{UID: "uid-3", Namespace: first.Namespace, Name: first.Name}
	assert.ErrorIs(t, g.Redeem(tok, subjectFor(sameName), sameName), ErrReused, "a Shoot of the same name, recreated")
	assert.NoError(t, g.Redeem(tok, subjectFor(first), first), "refusing the copy did not take the token from its Shoot")
}

func TestRedeem(t *testing.T) {
	tests := []struct {
		name string
		// run redeems and returns the last error.
		run  func(g *Signer, now *time.Time) error
		want error
	}{
		{"other token, other Shoot", func(g *Signer, _ *time.Time) error {
			_ = g.Redeem(g.Sign(generated), subjectFor(first), first)
			return g.Redeem(g.Sign(generated), subjectFor(second), second)
		}, nil},
		{"dry run is not remembered", func(g *Signer, _ *time.Time) error {
			dry := generated
			dry.DryRun = true
			tok := g.Sign(dry)
			a, b := subjectFor(first), subjectFor(second)
			a.DryRun, b.DryRun = true, true
			_ = g.Redeem(tok, a, first)
			return g.Redeem(tok, b, second)
		}, nil},
		{"expired", func(g *Signer, now *time.Time) error {
			tok := g.Sign(generated)
			_ = g.Redeem(tok, subjectFor(first), first)
			*now = now.Add(2 * time.Minute)
			return g.Redeem(tok, subjectFor(second), second)
		}, ErrExpired},
		{"mismatch is not remembered", func(g *Signer, _ *time.Time) error {
			tok := g.Sign(generated)
			other := subjectFor(first)
			other.Seed = "seed-2"
			_ = g.Redeem(tok, other, first)
			return g.Redeem(tok, subjectFor(second), second)
		}, nil},
		{"carried by another Shoot the watch saw", func(g *Signer, _ *time.Time) error {
			g.SetCarriers(func(string) []Holder { return []Holder{first} })
			return g.Redeem(g.Sign(generated), subjectFor(second), second)
		}, ErrReused},
		{"carried by itself", func(g *Signer, _ *time.Time) error {
			g.SetCarriers(func(string) []Holder { return []Holder{second} })
			return g.Redeem(g.Sign(generated), subjectFor(second), second)
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, now := newTestSigner(t)
			err := tt.run(g, now)
			if tt.want == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tt.want)
			}
		})
	}
}

// Legacy tokens (replicas not yet upgraded) have no nonce: they verify for
// the exact name they were signed for, never for a generated one.
func TestLegacyToken(t *testing.T) {
	g, now := newTestSigner(t)
	legacy := func(s Subject) string {
		exp := "1700000060"
		return legacyVersion + "." + exp + "." + base64.RawURLEncoding.EncodeToString(mac(key, legacyVersion, s, exp, ""))
	}
	named := Subject{Namespace: "garden-a", Name: "web", Seed: "seed-1"}
	assert.NoError(t, g.Redeem(legacy(named), named, Holder{UID: "u", Namespace: "garden-a", Name: "web"}))
	assert.ErrorIs(t, g.Verify(legacy(generated), subjectFor(first)), ErrMismatch)
	*now = now.Add(2 * time.Minute)
	assert.ErrorIs(t, g.Verify(legacy(named), named), ErrExpired)
}

// A nonce is letters and digits only: with a NUL in it, a dry-run token's
// MAC input ("…nonce\x00dry-run\x00") would read as a real token's whose
// nonce ends in "\x00dry-run".
func TestNonceCannotSpliceDryRunMarker(t *testing.T) {
	g, _ := newTestSigner(t)
	dry := Subject{Namespace: "garden-a", Name: "web", Seed: "seed-1", DryRun: true}
	parts := strings.Split(g.Sign(dry), ".")
	require.Len(t, parts, 4)
	spliced := strings.Join([]string{parts[0], parts[1], parts[2] + "\x00" + dryRunMarker, parts[3]}, ".")
	real := dry
	real.DryRun = false
	assert.ErrorIs(t, g.Verify(spliced, real), ErrMalformed)
	for _, n := range []string{"", "a-b", "a_b", strings.Repeat("A", maxNonceLen+1)} {
		assert.False(t, validNonce(n), "%q", n)
	}
	assert.True(t, validNonce(parts[2]))
}

func TestSignRequestNonce(t *testing.T) {
	g, _ := newTestSigner(t)
	a, b := g.SignRequest(generated, "req-1"), g.SignRequest(generated, "req-1")
	assert.Equal(t, a, b, "a repeated call for one request")
	assert.NotEqual(t, a, g.SignRequest(generated, "req-2"))
	assert.NotEqual(t, g.SignRequest(generated, ""), g.SignRequest(generated, ""), "no uid: random")
	p, err := parse(a)
	require.NoError(t, err)
	assert.Len(t, p.nonce, 26)
}

// Past its share a namespace's tokens are refused rather than a nonce in
// use forgotten; the other namespaces' are not.
func TestLedgerShareIsPerNamespace(t *testing.T) {
	var l ledger
	now := time.Unix(1_700_000_000, 0)
	exp := now.Add(time.Minute)
	for i := range MaxUsesPerNamespace {
		require.NoError(t, l.claim("n"+strconv.Itoa(i), Holder{UID: strconv.Itoa(i), Namespace: "garden-flood"}, exp, now))
	}
	err := l.claim("one-more", Holder{UID: "x", Namespace: "garden-flood"}, exp, now)
	assert.ErrorIs(t, err, ErrBusy)
	assert.ErrorContains(t, err, fmt.Sprintf(`namespace "garden-flood": %d in use`, MaxUsesPerNamespace))
	require.NoError(t, l.claim("n0", Holder{UID: "0", Namespace: "garden-flood"}, exp, now), "a nonce already held still redeems for its Shoot")
	require.NoError(t, l.claim("n0", Holder{UID: "y", Namespace: "garden-other"}, exp, now), "another namespace's share is its own")

	// Once they expire they are swept and room returns.
	later := exp.Add(2 * time.Second)
	assert.NoError(t, l.claim("one-more", Holder{UID: "x", Namespace: "garden-flood"}, exp.Add(time.Minute), later))
	assert.Len(t, l.namespaces["garden-flood"].uses, 1)
	assert.Equal(t, 1, entries(&l), "garden-other's expired too")
}

// Namespaces whose tokens all expired are forgotten within a second.
func TestLedgerForgetsIdleNamespaces(t *testing.T) {
	var l ledger
	now := time.Unix(1_700_000_000, 0)
	for i := range 1000 {
		require.NoError(t, l.claim("n", Holder{UID: "u", Namespace: "ns-" + strconv.Itoa(i)}, now, now))
	}
	require.NoError(t, l.claim("n", Holder{UID: "u", Namespace: "garden-dev"}, now.Add(time.Minute), now.Add(5*time.Second)))
	assert.Len(t, l.namespaces, 1)
	assert.Equal(t, 1, entries(&l))
}

// A review may name a Shoot of any size; the ledger keeps what Kubernetes
// allows only.
func TestLedgerRefusesHoldersNoShootCanHave(t *testing.T) {
	var l ledger
	now := time.Unix(1_700_000_000, 0)
	for _, h := range []Holder{
		{UID: "u", Namespace: strings.Repeat("n", 64), Name: "x"},
		{UID: "u", Namespace: "garden-dev", Name: strings.Repeat("x", 254)},
		{UID: strings.Repeat("u", 129), Namespace: "garden-dev", Name: "x"},
	} {
		assert.ErrorIs(t, l.claim("n", h, now, now), ErrHolder)
	}
	assert.NoError(t, l.claim("n", Holder{UID: strings.Repeat("u", 128), Namespace: strings.Repeat("n", 63), Name: strings.Repeat("x", 253)}, now, now))
}

// entries counts the nonces l remembers, expired ones not yet swept too.
func entries(l *ledger) int {
	n := 0
	for _, ns := range l.namespaces {
		n += len(ns.uses)
	}
	return n
}
