package placementtoken

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var key = []byte(strings.Repeat("k", 32))

func TestSignVerify(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	g, err := NewSigner([][]byte{key}, time.Minute, clock)
	require.NoError(t, err)
	other, err := NewSigner([][]byte{[]byte(strings.Repeat("x", 32))}, time.Minute, clock)
	require.NoError(t, err)

	named := Subject{Namespace: "garden-a", Name: "web", Seed: "seed-1"}
	generated := Subject{Namespace: "garden-a", GenerateName: "web-", Seed: "seed-1"}
	tok := g.Sign(named)
	genTok := g.Sign(generated)

	tests := []struct {
		name  string
		token string
		subj  Subject
		want  error
	}{
		{"valid", tok, named, nil},
		{"generateName token verifies with the generated name", genTok, Subject{Namespace: "garden-a", Name: "web-x7k2p", GenerateName: "web-", Seed: "seed-1"}, nil},
		{"generated name must carry the prefix", genTok, Subject{Namespace: "garden-a", Name: "evil", GenerateName: "web-", Seed: "seed-1"}, ErrMismatch},
		{"other seed", tok, Subject{Namespace: "garden-a", Name: "web", Seed: "seed-2"}, ErrMismatch},
		{"other namespace", tok, Subject{Namespace: "garden-b", Name: "web", Seed: "seed-1"}, ErrMismatch},
		{"other name", tok, Subject{Namespace: "garden-a", Name: "db", Seed: "seed-1"}, ErrMismatch},
		{"other key", other.Sign(named), named, ErrMismatch},
		{"tampered expiry", strings.Replace(tok, ".17", ".27", 1), named, ErrMismatch},
		{"tampered nonce", tamperNonce(tok), named, ErrMismatch},
		{"v2 without nonce", "v2.1700000060..AAAA", named, ErrMalformed},
		{"garbage", "hello", named, ErrMalformed},
		{"bad base64", "v1.1.!!!", named, ErrMalformed},
		{"bad expiry", "v1.x.abc", named, ErrMalformed},
		{"empty", "", named, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorIs(t, g.Verify(tt.token, tt.subj), tt.want)
			if tt.want == nil {
				assert.NoError(t, g.Verify(tt.token, tt.subj))
			}
		})
	}

	now = now.Add(2 * time.Minute)
	assert.ErrorIs(t, g.Verify(tok, named), ErrExpired)
}

// TestKeyRotation walks the three steps of a rotation from key to next,
// with replicas at neighbouring steps side by side: every token one issues
// verifies at the other.
func TestKeyRotation(t *testing.T) {
	next := []byte(strings.Repeat("n", 32))
	steps := [][][]byte{
		{key},       // before
		{key, next}, // every replica learns the new key
		{next, key}, // and signs with it
		{next},      // the old key is gone
	}
	subj := Subject{Namespace: "garden-a", Name: "web", Seed: "seed-1"}
	signers := make([]*Signer, len(steps))
	for i, keys := range steps {
		var err error
		signers[i], err = NewSigner(keys, time.Minute, nil)
		require.NoError(t, err)
	}
	for i := range len(steps) - 1 {
		a, b := signers[i], signers[i+1]
		assert.NoError(t, b.Verify(a.Sign(subj), subj), "step %d's token at step %d", i, i+1)
		assert.NoError(t, a.Verify(b.Sign(subj), subj), "step %d's token at step %d", i+1, i)
	}
	assert.ErrorIs(t, signers[3].Verify(signers[0].Sign(subj), subj), ErrMismatch, "the old key no longer verifies")
	assert.ErrorIs(t, signers[0].Verify(signers[3].Sign(subj), subj), ErrMismatch, "skipping the middle steps refuses placements")
}

func TestNewSignerRejectsWeakConfig(t *testing.T) {
	_, err := NewSigner([][]byte{[]byte("short")}, time.Minute, nil)
	assert.ErrorContains(t, err, "placement key 1: 5 bytes")
	_, err = NewSigner([][]byte{key, []byte("short!")}, time.Minute, nil)
	assert.ErrorContains(t, err, "placement key 2: 6 bytes")
	_, err = NewSigner(nil, time.Minute, nil)
	assert.ErrorContains(t, err, "none given")
	_, err = NewSigner([][]byte{key}, 0, nil)
	assert.Error(t, err)
}

func FuzzVerify(f *testing.F) {
	g, _ := NewSigner([][]byte{key, []byte(strings.Repeat("n", 32))}, time.Minute, nil)
	f.Add(g.Sign(Subject{Namespace: "a", Name: "b", Seed: "c"}), "a", "b", "", "c")
	f.Add("v1..", "", "", "", "")
	f.Fuzz(func(t *testing.T, token, ns, name, gen, seed string) {
		_ = g.Verify(token, Subject{Namespace: ns, Name: name, GenerateName: gen, Seed: seed})
	})
}

// tamperNonce changes the first character of the token's nonce.
func tamperNonce(tok string) string {
	parts := strings.Split(tok, ".")
	b := []byte(parts[2])
	b[0] = 'A' + (b[0]-'A'+1)%26
	if b[0] < 'A' || b[0] > 'Z' {
		b[0] = 'A'
	}
	parts[2] = string(b)
	return strings.Join(parts, ".")
}
