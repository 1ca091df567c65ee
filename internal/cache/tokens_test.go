package cache

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

func tokenSigner(t *testing.T, now func() time.Time) *placementtoken.Signer {
	t.Helper()
	g, err := placementtoken.NewSigner([][]byte{[]byte("0123456789abcdef0123456789abcdef")}, 2*time.Minute, now)
	require.NoError(t, err)
	return g
}

func tokenShoot(name, uid, token string) *api.Shoot {
	sh := shoot("garden-dev", name, "", "")
	sh.UID = types.UID(uid)
	sh.Annotations = map[string]string{placementtoken.Annotation: token, "other": "x"}
	return sh
}

func TestTransformShootKeepsLiveTokenOnly(t *testing.T) {
	live := tokenSigner(t, nil).Sign(placementtoken.Subject{Namespace: "garden-dev", GenerateName: "web-", Seed: "seed-a"})
	expired := tokenSigner(t, func() time.Time { return time.Now().Add(-time.Hour) }).Sign(placementtoken.Subject{Seed: "seed-a"})
	for _, tc := range []struct {
		name, token string
		kept        bool
	}{
		{"live", live, true},
		{"expired", expired, false},
		{"legacy (no nonce)", "v1.4102444800.AAAA", false},
		{"malformed", "hello", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := TransformShoot(tokenShoot("web-x7k2p", "uid-1", tc.token))
			require.NoError(t, err)
			got, ok := expand(t, out).Annotations[placementtoken.Annotation]
			assert.Equal(t, tc.kept, ok)
			if tc.kept {
				assert.Equal(t, tc.token, got)
				assert.Len(t, expand(t, out).Annotations, 1, "nothing else is kept")
			}
		})
	}
}

func TestTokenCarriers(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	signer := tokenSigner(t, clock)
	token := signer.Sign(placementtoken.Subject{Namespace: "garden-dev", GenerateName: "web-", Seed: "seed-a"})
	nonce, _, ok := placementtoken.Nonce(token)
	require.True(t, ok)
	first := placementtoken.Holder{UID: "uid-1", Namespace: "garden-dev", Name: "web-x7k2p"}
	second := placementtoken.Holder{UID: "uid-2", Namespace: "garden-dev", Name: "web-q9z4m"}

	s := NewStore(Options{})
	assert.Empty(t, s.TokenCarriers(nonce))
	s.Apply(tokenShoot(first.Name, first.UID, token))
	assert.Equal(t, []placementtoken.Holder{first}, s.TokenCarriers(nonce))
	s.Apply(tokenShoot(second.Name, second.UID, token)) // the copy
	assert.ElementsMatch(t, []placementtoken.Holder{first, second}, s.TokenCarriers(nonce))

	// The copy's token removed, then the first Shoot deleted.
	s.Apply(tokenShoot(second.Name, second.UID, "")) // annotation emptied
	assert.Equal(t, []placementtoken.Holder{first}, s.TokenCarriers(nonce))
	s.Remove(tokenShoot(first.Name, first.UID, token))
	assert.Empty(t, s.tokens.byNonce)
	assert.Empty(t, s.tokens.byShoot)

	// Wired into the Signer: the watch's carrier refuses the copy on a
	// replica that never saw the first Shoot's admission.
	s.Apply(tokenShoot(first.Name, first.UID, token))
	other := tokenSigner(t, clock)
	other.SetCarriers(s.TokenCarriers)
	subject := placementtoken.Subject{Namespace: "garden-dev", Name: second.Name, GenerateName: "web-", Seed: "seed-a"}
	assert.ErrorIs(t, other.Redeem(token, subject, second), placementtoken.ErrReused)
	subject.Name = first.Name
	assert.NoError(t, other.Redeem(token, subject, first))
}
