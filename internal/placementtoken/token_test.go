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
	g, err := NewSigner(key, time.Minute, clock)
	require.NoError(t, err)
	other, err := NewSigner([]byte(strings.Repeat("x", 32)), time.Minute, clock)
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

func TestNewSignerRejectsWeakConfig(t *testing.T) {
	_, err := NewSigner([]byte("short"), time.Minute, nil)
	assert.ErrorContains(t, err, "5 bytes")
	_, err = NewSigner(key, 0, nil)
	assert.Error(t, err)
}

func FuzzVerify(f *testing.F) {
	g, _ := NewSigner(key, time.Minute, nil)
	f.Add(g.Sign(Subject{Namespace: "a", Name: "b", Seed: "c"}), "a", "b", "", "c")
	f.Add("v1..", "", "", "", "")
	f.Fuzz(func(t *testing.T, token, ns, name, gen, seed string) {
		_ = g.Verify(token, Subject{Namespace: ns, Name: name, GenerateName: gen, Seed: seed})
	})
}
