package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// onSets makes a Shoot select the seeds of any of sets.
func onSets(sets ...string) shootOpt {
	return func(u *unstructured.Unstructured) {
		values := make([]any, len(sets))
		for i, s := range sets {
			values[i] = s
		}
		must(unstructured.SetNestedSlice(u.Object, []any{map[string]any{
			"key": seedSetLabel, "operator": "In", "values": values,
		}}, "spec", "seedSelector", "matchExpressions"))
	}
}

// TestAutoscalerFleetOneSetGrows: two ManagedSeedSets in one region, each
// one seed of room 4, and 28 Shoots either may take: 8 fill the seeds, 20
// wait. Decided alone, both SeedAutoscalers (100% utilization) would grow
// by the 5 seeds the 20 need; decided together exactly one set grows, by
// 5, the other never asks for more, and every Shoot is bound.
func TestAutoscalerFleetOneSetGrows(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace)
	ctx := context.Background()
	const a, b, perSeed, flood = "e2e-fleet-a", "e2e-fleet-b", 4, 28
	keyA, keyB := st.createManagedSeedSet(t, a, 1, perSeed), st.createManagedSeedSet(t, b, 1, perSeed)
	playerA, playerB := st.startSetPlayer(t, keyA), st.startSetPlayer(t, keyB)
	st.waitSetSeeds(t, playerA, map[string]int64{a + "-0": perSeed})
	st.waitSetSeeds(t, playerB, map[string]int64{b + "-0": perSeed})
	shoots := make([]types.NamespacedName, 0, flood)
	for i := range flood {
		sh := newShoot(t.Name(), onSets(a, b), withName(fmt.Sprintf("e2e-fleet-%02d", i)))
		require.NoError(t, st.c.Create(ctx, sh))
		shoots = append(shoots, client.ObjectKeyFromObject(sh))
	}
	eventually(t, 20*time.Second, func() error {
		if n := len(unbound(t, shoots)); n != flood-2*perSeed {
			return fmt.Errorf("%d Shoots pending, want %d", n, flood-2*perSeed)
		}
		return nil
	}, "the Shoots are not settled: the seeds full, the rest pending")

	// Watch the largest replicas either set is ever asked for.
	most := map[types.NamespacedName]int32{}
	var mu sync.Mutex
	watch, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		for watch.Err() == nil {
			for _, k := range []types.NamespacedName{keyA, keyB} {
				if spec, _, err := st.scaleOf(watch, k); err == nil {
					mu.Lock()
					most[k] = max(most[k], spec)
					mu.Unlock()
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	st.createSeedAutoscaler(t, seedAutoscaler(a, a, 1, 10, 100, time.Minute))
	st.createSeedAutoscaler(t, seedAutoscaler(b, b, 1, 10, 100, time.Minute))
	eventually(t, 45*time.Second, func() error {
		if err := playerA.Err(); err != nil {
			return err
		}
		if err := playerB.Err(); err != nil {
			return err
		}
		return allBound(t, shoots)
	}, "the pending Shoots are not all bound")
	// Two more sync periods: nothing changes.
	time.Sleep(3 * time.Second)
	stop()
	mu.Lock()
	defer mu.Unlock()
	grown := []int32{most[keyA], most[keyB]}
	assert.ElementsMatch(t, []int32{6, 1}, grown, "exactly one set grows, by the 5 seeds 20 Shoots need: a %d, b %d", grown[0], grown[1])
	assert.Len(t, append(playerA.Created(), playerB.Created()...), 7, "2 first seeds and 5 new")
}
