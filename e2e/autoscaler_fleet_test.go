package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
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

// floodTwoSets creates sets a and b, one seed of room perSeed each, plays
// their controllers, and creates flood Shoots either may take: it returns
// once the seeds are full and the rest wait.
func (st *suite) floodTwoSets(t *testing.T, a, b string, perSeed int64, flood int) ([2]types.NamespacedName, [2]*setPlayer, []types.NamespacedName) {
	t.Helper()
	ctx := context.Background()
	keys := [2]types.NamespacedName{st.createManagedSeedSet(t, a, 1, perSeed), st.createManagedSeedSet(t, b, 1, perSeed)}
	players := [2]*setPlayer{st.startSetPlayer(t, keys[0]), st.startSetPlayer(t, keys[1])}
	st.waitSetSeeds(t, players[0], map[string]int64{a + "-0": perSeed})
	st.waitSetSeeds(t, players[1], map[string]int64{b + "-0": perSeed})
	shoots := make([]types.NamespacedName, 0, flood)
	for i := range flood {
		sh := newShoot(t.Name(), onSets(a, b), withName(fmt.Sprintf("%s-%02d", a, i)))
		require.NoError(t, st.c.Create(ctx, sh))
		shoots = append(shoots, client.ObjectKeyFromObject(sh))
	}
	eventually(t, 20*time.Second, func() error {
		if n := len(unbound(t, shoots)); n != flood-2*int(perSeed) {
			return fmt.Errorf("%d Shoots pending, want %d", n, flood-2*int(perSeed))
		}
		return nil
	}, "the Shoots are not settled: the seeds full, the rest pending")
	return keys, players, shoots
}

// TestAutoscalerFleetBacksOffAFailingSet: two sets in one region, 8
// pending Shoots either may take. The set chosen first (a, by name) asks
// for two seeds, and its new replica fails (status.pendingReplica
// ShootReconcileFailed): it is backed off, with that reason in its status
// and a warning, and the other set grows instead and takes every Shoot.
func TestAutoscalerFleetBacksOffAFailingSet(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace)
	ctx := context.Background()
	const a, b, perSeed, flood = "e2e-backoff-a", "e2e-backoff-b", 4, 16
	keys, players, shoots := st.floodTwoSets(t, a, b, perSeed, flood)
	players[0].FailNewReplicas("ShootReconcileFailed")
	st.createSeedAutoscaler(t, seedAutoscaler(a, a, 1, 10, 100, time.Minute))
	st.createSeedAutoscaler(t, seedAutoscaler(b, b, 1, 10, 100, time.Minute))
	eventually(t, 45*time.Second, func() error {
		if err := players[1].Err(); err != nil {
			return err
		}
		return allBound(t, shoots)
	}, "the pending Shoots are not all bound to the other set")
	sa := st.waitAutoscalerStatus(t, a, func(s autoscalingapi.SeedAutoscalerStatus) error {
		if s.Reason != "BackedOff" {
			return fmt.Errorf("reason %s: %s", s.Reason, s.Message)
		}
		return nil
	})
	assert.Contains(t, sa.Status.Message, a+"-1: ShootReconcileFailed")
	spec, _, err := st.scaleOf(ctx, keys[1])
	require.NoError(t, err)
	assert.Equal(t, int32(3), spec, "the other set grows by the 2 seeds 8 Shoots need")
	assert.Equal(t, []string{a + "-0"}, players[0].Created(), "the failing set registered nothing")
	for seed := range st.setUsage(t, shoots) {
		assert.Contains(t, []string{a + "-0", b + "-0", b + "-1", b + "-2"}, seed)
	}
}

// TestAutoscalerFleetSharedHeadroomSettles: two sets in one region, their
// seeds full, and one Headroom target on both (room for 4 more Shoots like
// an inline template either set may take). Decided together one set grows
// by the one seed the target needs, and over the following sync periods
// neither set's replicas change again: no flapping.
func TestAutoscalerFleetSharedHeadroomSettles(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace)
	ctx := context.Background()
	const a, b, perSeed = "e2e-headroom-a", "e2e-headroom-b", 4
	keys, players, _ := st.floodTwoSets(t, a, b, perSeed, 2*perSeed)
	like := newShoot(t.Name(), onSets(a, b), withName("like"))
	raw, err := like.MarshalJSON()
	require.NoError(t, err)
	for _, name := range []string{a, b} {
		sa := seedAutoscaler(name, name, 1, 5, 100, time.Minute)
		sa.Spec.Metrics = []autoscalingapi.MetricSpec{{Type: autoscalingapi.HeadroomMetricSourceType, Headroom: &autoscalingapi.HeadroomMetricSource{
			Shoot: &k8sruntime.RawExtension{Raw: raw}, MinShoots: perSeed,
		}}}
		st.createSeedAutoscaler(t, sa)
	}
	var history [][2]int32
	eventually(t, 30*time.Second, func() error {
		var now [2]int32
		for i, k := range keys {
			spec, _, err := st.scaleOf(ctx, k)
			if err != nil {
				return err
			}
			now[i] = spec
		}
		if len(history) == 0 || history[len(history)-1] != now {
			history = append(history, now)
		}
		if now[0]+now[1] != 3 {
			return fmt.Errorf("replicas %v: want one set grown by one seed", now)
		}
		return nil
	}, "the Headroom target is not met by one new seed")
	// Five sync periods more: nothing moves.
	settled := len(history)
	deadline := time.Now().Add(5 * autoscalerSyncPeriod)
	for time.Now().Before(deadline) {
		var now [2]int32
		for i, k := range keys {
			spec, _, err := st.scaleOf(ctx, k)
			require.NoError(t, err)
			now[i] = spec
		}
		if history[len(history)-1] != now {
			history = append(history, now)
		}
		time.Sleep(100 * time.Millisecond)
	}
	assert.Len(t, history, settled, "the replicas of (a, b) went %v: want one set at 2, and no change after", history)
	for _, h := range history {
		assert.LessOrEqual(t, h[0]+h[1], int32(3), "both sets grew at some point: %v", history)
	}
	require.NoError(t, players[0].Err())
	require.NoError(t, players[1].Err())
	assert.Len(t, append(players[0].Created(), players[1].Created()...), 3)
}

// TestAutoscalerFleetReplicasNeverReady: two sets in one region, 8 pending
// Shoots either may take, and the first set's new replicas register and
// never become ready. They count as room for the provisioning time (1m,
// the least spec.provisioningTimeout), then no longer: the status says
// ReplicasNotReady with the set's counts, one warning, the alert's gauge
// counts them, and the other set grows and takes the Shoots (the first
// set's recommendation falls to 1: its late replicas are not needed).
func TestAutoscalerFleetReplicasNeverReady(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace)
	ctx := context.Background()
	const a, b, perSeed, flood = "e2e-notready-a", "e2e-notready-b", 4, 16
	keys, players, shoots := st.floodTwoSets(t, a, b, perSeed, flood)
	players[0].NeverReady()
	sa := seedAutoscaler(a, a, 1, 10, 100, time.Minute)
	sa.Spec.ProvisioningTimeout = &metav1.Duration{Duration: autoscalingapi.MinProvisioningTimeout}
	st.createSeedAutoscaler(t, sa)
	eventually(t, 20*time.Second, func() error {
		if spec, _, err := st.scaleOf(ctx, keys[0]); err != nil || spec != 3 {
			return fmt.Errorf("replicas %d (%v), want 3", spec, err)
		}
		return nil
	}, "set %s does not grow for the pending Shoots", a)
	asked := time.Now()
	st.createSeedAutoscaler(t, seedAutoscaler(b, b, 1, 10, 100, time.Minute))
	// Within the provisioning time the replicas on their way are seats:
	// the other set does not grow.
	st.requireReplicasHeld(t, keys[1], 1, asked.Add(autoscalingapi.MinProvisioningTimeout-5*time.Second), "the replicas on their way are seats")

	got := st.waitAutoscalerStatus(t, a, func(s autoscalingapi.SeedAutoscalerStatus) error {
		if s.Reason != "ReplicasNotReady" {
			return fmt.Errorf("reason %s: %s", s.Reason, s.Message)
		}
		return nil
	})
	assert.Contains(t, got.Status.Message, "(spec.provisioningTimeout; 3 asked, 3 registered, 1 ready)")
	// Another set takes the Shoots, so the late replicas are not needed:
	// the recommendation is 1 (behavior's scale-down window holds it).
	st.requireScaleEvent(t, a, "ReplicasNotReady", 3, 1)
	eventually(t, 10*time.Second, func() error {
		return autoscalerGauges(st.metricsURL(), a, map[string]float64{"seedwarden_autoscaler_replicas_not_ready": 2})
	})
	eventually(t, 30*time.Second, func() error {
		if err := players[1].Err(); err != nil {
			return err
		}
		return allBound(t, shoots)
	}, "the other set does not take the pending Shoots")
	spec, _, err := st.scaleOf(ctx, keys[1])
	require.NoError(t, err)
	assert.Equal(t, int32(3), spec)
}
