package handlers

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// In mode binding the mutating webhook announces a seed and the leader binds
// it later through shoots/binding, where the capacity webhook checks the seed
// across replicas. The announcement could hold a soft place (in its replica's
// memory) or a hard one (the cross-replica entry). Measured: 300 concurrent
// CREATEs over three replicas, one seed with 50 free places. Hard: exactly
// 50 announced, each one bound where announced. Soft: every replica announces
// the places it sees free, so more are announced than fit and the surplus is
// decided again at binding, onto another seed than the user was told.
func TestAnnouncementsHoldPlacesAcrossReplicas(t *testing.T) {
	landscape := func(s *cache.Store) { vShootsOn(s, "target", 10) } // 60 places, 10 taken
	announce := func(t *testing.T, replicas []replica) (announced int) {
		var (
			mu sync.Mutex
			wg sync.WaitGroup
		)
		for _, r := range replicas {
			r.chain.mutator.Announce = true
		}
		for i := range 300 {
			wg.Go(func() {
				name := fmt.Sprintf("shoot-%03d", i)
				object := namedShoot(name, "")
				review := vReview{uid: fmt.Sprintf("uid-%03d", i), name: name, object: object}
				resp := vServe(t, replicas[i%len(replicas)].chain.mutator, review.body(t))
				require.True(t, resp.Allowed, vMessage(resp))
				if announcedSeed(t, object, resp.Patch) == "target" {
					mu.Lock()
					announced++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return announced
	}

	t.Run("hard: the cross-replica entry", func(t *testing.T) {
		scheme := runtime.NewScheme()
		require.NoError(t, corev1.AddToScheme(scheme))
		announced := announce(t, newReplicas(t, 3, fake.NewClientBuilder().WithScheme(scheme).Build(), landscape))
		t.Logf("hard: %d announced for 50 places", announced)
		assert.Equal(t, 50, announced)
	})
	t.Run("soft: replica memory only", func(t *testing.T) {
		announced := announce(t, newReplicas(t, 3, nil, landscape))
		t.Logf("soft: %d announced for 50 places", announced)
		assert.Equal(t, 150, announced, "each replica announces the 50 it sees free")
	})
}

// announcedSeed is the seed a mutating answer announces
// (placementtoken.SeedAnnotation), "" for none.
func announcedSeed(t *testing.T, object string, patch []byte) string {
	t.Helper()
	if len(patch) == 0 {
		return ""
	}
	annotations, _ := applyPatch(t, object, patch)["metadata"].(map[string]any)["annotations"].(map[string]any)
	seed, _ := annotations[placementtoken.SeedAnnotation].(string)
	return seed
}
