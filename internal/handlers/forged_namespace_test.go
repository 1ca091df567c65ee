package handlers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/seedreserve"
)

// Without a NetworkPolicy or client authentication, forged reviews for
// namespaces of no Project used to take reservations until two seeds were
// full. Now they reserve nothing.

func TestMutatorReservesOnlyInProjectNamespaces(t *testing.T) {
	store := vStore(vSeed("aws-eu1", 100), vSeed("aws-eu2", 100))
	m := newMutator(t, &seedreserve.ClusterPlacer{Local: store}, nil)
	m.Projects = store
	for i := range 330 {
		obj := strings.Replace(shootJSON("", ""), `"namespace": "garden-dev",`, fmt.Sprintf(`"namespace": "forged-%d",`, i), 1)
		_, ar := serve(t, m, t.Context(), review{uid: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), object: obj}.body())
		require.True(t, ar.Response.Allowed)
		require.Empty(t, ar.Response.Patch, "not placed: like Gardener's scheduler, no Shoot outside a Project's namespace")
	}
	assert.Zero(t, store.Usage("aws-eu1")+store.Usage("aws-eu2"), "no forged review took a place")

	// A Shoot of the Project's namespace reserves as before.
	_, ar := serve(t, m, t.Context(), review{}.body())
	require.True(t, ar.Response.Allowed)
	assert.Equal(t, int64(1), store.Usage("aws-eu1")+store.Usage("aws-eu2"))
	_, held := store.Reservation(testUID)
	assert.True(t, held)
}

func TestCapacityReservesNothingForNamespacesOfNoProject(t *testing.T) {
	f := newCapacityFixture(t)
	f.v.Projects = f.store
	forged := func(seed string) string {
		r := vReview{object: vShoot(seed, nil), namespace: "forged", user: binderUser}
		return strings.ReplaceAll(r.body(t), `"namespace":"garden-dev"`, `"namespace":"forged"`)
	}
	for range 5 {
		resp := vServe(t, f.v, forged("small"))
		assert.True(t, resp.Allowed, "checked like a dry run: room left")
	}
	assert.Equal(t, int64(1), f.store.Usage("small"), "nothing reserved")
	_, held := f.store.Reservation(cache.ManualReservationKey("forged", vName))
	assert.False(t, held)
	resp := vServe(t, f.v, forged("full"))
	assert.False(t, resp.Allowed, "a full seed is still full")

	// The Project's namespace reserves as before.
	resp = vServe(t, f.v, vReview{object: vShoot("small", nil), user: binderUser}.body(t))
	assert.True(t, resp.Allowed, vMessage(resp))
	assert.Equal(t, int64(2), f.store.Usage("small"))
}
