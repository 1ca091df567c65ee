package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	ops "github.com/seedwarden/seedwarden/internal/operationsapi"
)

// TestAutoscalerScaleInDrainsOneReplica: a set of one seed of room 2 and 8
// Shoots only it may take scales up to 4 (every seed full); then one Shoot
// of each seed is deleted, so 4 Shoots hold one per seed and the targets
// (100 % utilization, minReplicas 2) need 2. No replica is empty, so only
// a drain scales in: after the scale-down window exactly one replica gets
// a SeedDrain (scale-in-<seed>), its one Shoot moves to another seed of
// the set (a gardenlet stand-in plays Migrate and Restore), and spec.replicas
// drops to 3 only once that replica holds no Shoot. The second scale-in
// waits for the window again, and the set stops at 2, the floor.
func TestAutoscalerScaleInDrainsOneReplica(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace)
	ctx := context.Background()
	const set, perSeed, window = "e2e-scalein", 2, 8 * time.Second
	key, player, shoots := st.floodOneSeedSet(t, set, perSeed, 8)
	st.deleteScaleInDrains(t, set)
	st.createSeedAutoscaler(t, seedAutoscaler(set, set, 2, 6, 100, window))
	st.logAutoscalerDecisions(t, set)
	binds := st.waitBinds(t, shoots, 90*time.Second)
	st.reconciledOn(t, shoots)
	// One Shoot of each seed goes: 4 left, one on each of the 4 seeds.
	perSeedSeen, left := map[string]bool{}, []types.NamespacedName{}
	for _, k := range shoots {
		if perSeedSeen[binds[k].seed] {
			left = append(left, k)
			continue
		}
		perSeedSeen[binds[k].seed] = true
		require.NoError(t, st.deleteShoot(ctx, newShoot(t.Name(), withName(k.Name))))
	}
	require.Len(t, perSeedSeen, 4, "the 8 Shoots fill 4 seeds")
	gardenlet := st.startGardenletPlayer(t, set+"-")
	deleted := time.Now()

	first := st.waitScaleIn(t, key, 4, 3, "", 120*time.Second)
	assert.GreaterOrEqual(t, first.drainAt.Sub(deleted), window-autoscalerSyncPeriod-500*time.Millisecond,
		"the first scale-in's drain started within the %s window after the deletions", window)
	second := st.waitScaleIn(t, key, 3, 2, first.seed, 120*time.Second)
	assert.NotEqual(t, first.seed, second.seed)
	assert.GreaterOrEqual(t, second.drainAt.Sub(first.loweredAt), window-autoscalerSyncPeriod-500*time.Millisecond,
		"the second scale-in's drain started within the %s window after the first lowered the replicas", window)
	// Never below the floor (minReplicas 2, and the 4 Shoots fill 2 seeds).
	st.requireReplicasHeld(t, key, 2, time.Now().Add(window+3*time.Second), "scaled in below the floor")
	assert.ElementsMatch(t, []removal{{seed: first.seed}, {seed: second.seed}}, player.Removed(), "the removed replicas held no Shoots")
	assert.Empty(t, player.Blocked(), "the autoscaler asked for fewer replicas than it had emptied")
	maxSeen, err := gardenlet.result()
	require.NoError(t, err)
	assert.Equal(t, 1, maxSeen, "a scale-in's drain migrates one Shoot at a time")
	st.requireMovedOff(t, binds, left, first.seed, second.seed)
	usage := st.setUsage(t, left)
	assert.Len(t, usage, 2, "the 4 Shoots end on 2 seeds: %v", usage)
	for seed, n := range usage {
		assert.Equal(t, 2, n, "Shoots on %s", seed)
	}
}

// scaleInStep is one scale-in seen from outside: the replica drained, when
// its SeedDrain appeared, and when spec.replicas dropped.
type scaleInStep struct {
	seed               string
	drainAt, loweredAt time.Time
}

// waitScaleIn watches set (every 100 ms) while spec.replicas goes from to
// to: at most one scale-in SeedDrain of the set's seeds exists at a time
// besides that of before, the replica of the scale-in before (its SeedDrain
// keeps it cordoned until Gardener has deleted it),
// the drained replica's Shoots move elsewhere (each through Migrate and
// Restore), and spec.replicas is to only once the replica holds none.
func (st *suite) waitScaleIn(t *testing.T, set types.NamespacedName, from, to int32, before string, timeout time.Duration) scaleInStep {
	t.Helper()
	ctx := context.Background()
	var step scaleInStep
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		spec, _, err := st.scaleOf(ctx, set)
		require.NoError(t, err)
		require.Contains(t, []int32{from, to}, spec, "spec.replicas while scaling in from %d", from)
		var drains ops.SeedDrainList
		require.NoError(t, st.c.List(ctx, &drains))
		var seen []string
		for _, d := range drains.Items {
			if d.Name == "scale-in-"+d.Spec.SeedName && d.Spec.SeedName != before && strings.HasPrefix(d.Spec.SeedName, set.Name+"-") {
				seen = append(seen, d.Spec.SeedName)
			}
		}
		require.LessOrEqual(t, len(seen), 1, "scale-in drains at once: %v", seen)
		if step.seed == "" && len(seen) == 1 {
			step.seed, step.drainAt = seen[0], time.Now()
			t.Logf("scale-in %d -> %d drains %s", from, to, step.seed)
		}
		if spec == to {
			require.NotEmpty(t, step.seed, "spec.replicas %d without a drain", to)
			held, err := st.shootsPerSeed(ctx)
			require.NoError(t, err)
			require.Zero(t, held[step.seed], "spec.replicas %d while %s holds Shoots", to, step.seed)
			step.loweredAt = time.Now()
			t.Logf("scale-in %d -> %d lowered the replicas %s after the drain", from, to, step.loweredAt.Sub(step.drainAt).Round(100*time.Millisecond))
			return step
		}
		time.Sleep(100 * time.Millisecond)
	}
	sa := &autoscalingapi.SeedAutoscaler{}
	require.NoError(t, st.c.Get(ctx, set, sa))
	t.Fatalf("spec.replicas not %d within %s (drain: %q); status %s: %s, scaleIn %+v", to, timeout, step.seed, sa.Status.Reason, sa.Status.Message, sa.Status.ScaleIn)
	return step
}

// reconciledOn plays the gardenlets of the Shoots' seeds: status.seedName
// their spec.seedName and lastOperation Reconcile Succeeded, what a Shoot a
// drain may migrate has.
func (st *suite) reconciledOn(t *testing.T, keys []types.NamespacedName) {
	t.Helper()
	ctx := context.Background()
	for _, k := range keys {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(shootGVK)
		require.NoError(t, st.c.Get(ctx, k, u))
		seed, _, _ := unstructured.NestedString(u.Object, "spec", "seedName")
		must(unstructured.SetNestedField(u.Object, seed, "status", "seedName"))
		must(unstructured.SetNestedMap(u.Object, map[string]any{"type": "Reconcile", "state": "Succeeded", "progress": int64(100),
			"lastUpdateTime": time.Now().UTC().Format(time.RFC3339), "description": "reconciled"}, "status", "lastOperation"))
		require.NoError(t, st.c.Status().Update(ctx, u), "status of Shoot %s", k.Name)
	}
}

// deleteScaleInDrains deletes, when t ends (after its SeedAutoscaler, which
// leaves them: a SeedDrain cannot be owned by a namespaced object), the
// scale-in SeedDrains of set's seeds, so that no other test finds them.
func (st *suite) deleteScaleInDrains(t *testing.T, set string) {
	t.Cleanup(func() {
		ctx := context.Background()
		var drains ops.SeedDrainList
		if err := st.c.List(ctx, &drains); err != nil {
			t.Errorf("listing SeedDrains: %v", err)
			return
		}
		for i := range drains.Items {
			if d := &drains.Items[i]; strings.HasPrefix(d.Spec.SeedName, set+"-") {
				if err := st.c.Delete(ctx, d); err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("deleting SeedDrain %s: %v", d.Name, err)
				}
			}
		}
	})
}

// requireMovedOff requires that the Shoots of keys first bound (binds) to
// one of drained are on another seed now, their migration ended (status
// seedName the new seed, lastOperation Restore Succeeded).
func (st *suite) requireMovedOff(t *testing.T, binds map[types.NamespacedName]bind, keys []types.NamespacedName, drained ...string) {
	t.Helper()
	moved := 0
	for _, k := range keys {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(shootGVK)
		require.NoError(t, st.c.Get(context.Background(), k, u))
		spec, _, _ := unstructured.NestedString(u.Object, "spec", "seedName")
		assert.NotContains(t, drained, spec, "Shoot %s on a drained replica", k.Name)
		if !slices.Contains(drained, binds[k].seed) {
			continue
		}
		moved++
		status, _, _ := unstructured.NestedString(u.Object, "status", "seedName")
		typ, _, _ := unstructured.NestedString(u.Object, "status", "lastOperation", "type")
		state, _, _ := unstructured.NestedString(u.Object, "status", "lastOperation", "state")
		assert.Equal(t, []string{spec, "Restore", "Succeeded"}, []string{status, typ, state}, "Shoot %s's migration off %s", k.Name, binds[k].seed)
	}
	assert.Equal(t, len(drained), moved, "Shoots moved by the drains (one on each drained replica)")
}
