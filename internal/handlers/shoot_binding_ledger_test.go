package handlers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// Forged mint-and-redeem pairs (a CREATE review to the mutating webhook,
// then its placed object to the binding webhook) used to fill the one token
// ledger, after which every placement was refused. The mutating webhook
// mints tokens in Project namespaces only, and each namespace has a share of
// the ledger: a flood costs the flooded namespace its placements, no other.
// (The reservation limits bound how fast tokens are minted too; they are
// raised here so that the flood reaches the ledger's share.)
func TestForgedTokenPairsLeaveAnotherProjectPlacing(t *testing.T) {
	store := cache.NewStore(cache.Options{Limits: cache.Limits{PerNamespace: 10_000, PerUser: 10_000, Total: 10_000}})
	dev, ops := vNamespace, "garden-ops"
	store.Apply(&api.CloudProfile{ObjectMeta: metav1.ObjectMeta{Name: "aws"}, Spec: api.CloudProfileSpec{Type: "aws"}})
	store.Apply(&api.Project{ObjectMeta: metav1.ObjectMeta{Name: "dev"}, Spec: api.ProjectSpec{Namespace: &dev}})
	store.Apply(&api.Project{ObjectMeta: metav1.ObjectMeta{Name: "ops"}, Spec: api.ProjectSpec{Namespace: &ops}})
	store.Apply(vSeed("aws-eu1", 100_000))
	c := newChain(t, store, &fakeAuthorizer{}) // nobody may bind by hand
	c.mutator.Projects, c.binding.Projects, c.capacity.Projects = store, store, store
	forger := &authenticationv1.UserInfo{Username: "forger"}

	inNamespace := func(ns, name string) string {
		return strings.Replace(namedShoot(name, ""), `"namespace": "garden-dev"`, fmt.Sprintf(`"namespace": %q`, ns), 1)
	}
	// Outside any Project nothing is minted.
	for i := range 100 {
		name := fmt.Sprintf("forged-%d", i)
		seed, admitted, why := c.admitCreate(t, fmt.Sprintf("forged-uid-%d", i), name, inNamespace("forged", name), forger)
		require.True(t, admitted, why)
		require.Empty(t, seed, "no placement, so no token, outside a Project")
	}
	// In a Project's namespace, the flood holds that namespace's share.
	busy := 0
	for i := range placementtoken.MaxUsesPerNamespace + 1 {
		name := fmt.Sprintf("forged-%d", i)
		seed, admitted, why := c.admitCreate(t, fmt.Sprintf("dev-uid-%d", i), name, namedShoot(name, ""), forger)
		if !admitted {
			assert.Contains(t, why, "too many placement tokens in use", i)
			busy++
			continue
		}
		require.Equal(t, "aws-eu1", seed, "forged pair %d", i)
	}
	assert.Equal(t, 1, busy, "past the share only")

	seed, admitted, why := c.admitCreate(t, "ops-uid-1", "web", inNamespace(ops, "web"), &authenticationv1.UserInfo{Username: "ops-member"})
	require.True(t, admitted, why)
	assert.Equal(t, "aws-eu1", seed, "another Project's placement is admitted as the webhook's own")
}
