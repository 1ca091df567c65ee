package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
)

// The placement policies of issue 39 (docs/policies.md) against a real API
// server: an avoided seed, seats kept for zone-redundant Shoots, and a
// Required seed pool enforced on a seed chosen by hand.

// withSeedAnnotations sets annotations on a Seed createSeedLike makes.
func withSeedAnnotations(a map[string]string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) { u.SetAnnotations(a) }
}

// withSeedZones sets spec.provider.zones of a Seed createSeedLike makes.
func withSeedZones(zones ...string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		must(unstructured.SetNestedStringSlice(u.Object, zones, "spec", "provider", "zones"))
	}
}

// withZoneFailureTolerance makes a Shoot highly available across zones
// (spec.controlPlane.highAvailability.failureTolerance.type zone).
func withZoneFailureTolerance() shootOpt {
	return func(u *unstructured.Unstructured) {
		must(unstructured.SetNestedField(u.Object, "zone", "spec", "controlPlane", "highAvailability", "failureTolerance", "type"))
	}
}

// TestAvoidedSeedTakesShootsLast: two empty seeds only the test's Shoots
// select, one annotated seedwarden.io/avoid. Three Shoots created one after
// another all go to the other seed (Gardener's least-used rule would put
// the second on the avoided one); once the other seed is full, the next
// Shoot goes to the avoided seed, the only one that admits it. The
// annotation opts the seed in by itself: the suite's webhook runs without a
// policies block.
func TestAvoidedSeedTakesShootsLast(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace)
	ctx := context.Background()
	const label, avoided, other = "e2e.seedwarden.io/avoid-test", "e2e-avoided", "e2e-preferred"
	selective := func() *unstructured.Unstructured {
		return newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), withSeedSelector(label))
	}
	st.createSeedLike(t, "aws-eu2", avoided, map[string]string{label: "true"}, 10,
		withSeedAnnotations(map[string]string{api.AnnotationSeedAvoid: "e2e: to be retired"}))
	st.createSeedLike(t, "aws-eu2", other, map[string]string{label: "true"}, 10)
	// The Seed watch delivers the seeds in the order they were created: a
	// dry run placed on the preferred one means both are in the cache.
	require.NoError(t, st.dryRunUntil(ctx, 10*time.Second, eventuallyInterval, selective, onSeed(other)),
		"the webhook does not place onto %s", other)

	for i := range 3 {
		sh := selective()
		require.NoError(t, st.c.Create(ctx, sh), "CREATE %d", i)
		assert.Equal(t, other, st.placedSeed(t, sh), "Shoot %d: the avoided seed %s takes no Shoot while %s admits it", i, avoided, other)
	}

	// Fill the preferred seed: its allocatable down to the 3 it holds.
	require.NoError(t, st.setAllocatable(ctx, other, *resource.NewQuantity(3, resource.DecimalSI)))
	require.NoError(t, st.dryRunUntil(ctx, 10*time.Second, eventuallyInterval, selective, onSeed(avoided)),
		"with %s full the webhook does not place onto the avoided seed %s", other, avoided)
	last := selective()
	require.NoError(t, st.c.Create(ctx, last))
	assert.Equal(t, avoided, st.placedSeed(t, last), "the avoided seed takes a Shoot when it is the only one that admits it")
	onAvoided, _, err := st.boundTo(ctx, t.Name(), avoided)
	require.NoError(t, err)
	assert.Equal(t, 1, onAvoided, "Shoots of the test on %s", avoided)
}

// keptSeatsConfig keeps 2 seats on every multi-zonal seed for Shoots with
// failure tolerance zone.
const keptSeatsConfig = `policies:
  keptSeats: {seats: 2}
`

// TestKeptSeatsForZoneRedundantShoots: a replica keeping 2 seats per
// multi-zonal seed (policies.keptSeats.seats). Two seeds only the test's
// Shoots select: a three-zone seed with room for 6 and a one-zone seed
// with room for 10. A burst of 12 concurrent CREATEs of Shoots without
// zone failure tolerance leaves the 2 kept seats free (at most 4 of them
// on the three-zone seed; Gardener's least-used rule would fill it with 6);
// every one of them is placed. Then two Shoots with failure tolerance zone,
// which only the three-zone seed takes, find the kept seats.
func TestKeptSeatsForZoneRedundantShoots(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace, webhookSeed)
	ctx := context.Background()
	const (
		label, zonal, single  = "e2e.seedwarden.io/kept-seats-test", "e2e-three-zones", "e2e-one-zone"
		zonalRoom, singleRoom = 6, 10
		kept, burst           = 2, 12
	)
	shoot := func(opts ...shootOpt) *unstructured.Unstructured {
		return newShoot(t.Name(), append([]shootOpt{awsShoot("eu-central-1", "eu-central-1a"), withSeedSelector(label)}, opts...)...)
	}
	ca, err := newReplicaCA()
	require.NoError(t, err)
	keeper := st.startLeadingReplica(t, "kept-seats", ca, replicaOptions{config: keptSeatsConfig})
	sizes := map[string]int64{zonal: zonalRoom, single: singleRoom}
	st.createSeedLike(t, "aws-eu2", zonal, map[string]string{label: "true"}, zonalRoom,
		withSeedZones("eu-central-1a", "eu-central-1b", "eu-central-1c"))
	st.createSeedLike(t, "aws-eu2", single, map[string]string{label: "true"}, singleRoom, withSeedZones("eu-central-1a"))
	eventually(t, 10*time.Second, func() error { return knowsSeeds(keeper.metricsURL(), sizes) })
	st.routeWebhooks(t, keeper.webhookAddr(), append(slices.Clone(st.caBundle), ca.CertPEM...), nil)

	var wg sync.WaitGroup
	shoots := make([]*unstructured.Unstructured, burst)
	errs := make([]error, burst)
	for i := range burst {
		shoots[i] = shoot()
		wg.Go(func() { errs[i] = st.c.Create(ctx, shoots[i]) })
	}
	wg.Wait()
	placed := map[string]int{}
	for i, sh := range shoots {
		require.NoError(t, errs[i], "CREATE %d", i)
		placed[st.placedSeed(t, sh)]++
	}
	t.Logf("a burst of %d Shoots without zone failure tolerance: %v", burst, placed)
	assert.Equal(t, burst, placed[zonal]+placed[single], "every Shoot of the burst is placed on the test's seeds")
	assert.LessOrEqual(t, placed[zonal], zonalRoom-kept, "the burst leaves the %d kept seats of %s free", kept, zonal)

	for i := range kept {
		ha := shoot(withZoneFailureTolerance())
		require.NoError(t, st.c.Create(ctx, ha), "HA CREATE %d", i)
		assert.Equal(t, zonal, st.placedSeed(t, ha), "the Shoot with failure tolerance zone %d finds a kept seat", i)
	}
}

// poolConfig is a Required pool for the project dev: its Shoots go only to
// the seeds labelled e2e.seedwarden.io/pool-test, which take only its.
const poolConfig = `policies:
  pools:
  - name: e2e-pool
    mode: Required
    projects: [dev]
    seedSelector:
      matchLabels: {e2e.seedwarden.io/pool-test: "true"}
`

// TestRequiredPoolRefusesSeedOutsideIt: a replica with a Required pool for
// project dev (poolConfig) and one seed of the pool. The project's operator,
// who may bind, names aws-eu2 (outside the pool) in a CREATE: the binding
// webhook refuses it with a message naming the pool, and the Shoot is not
// stored; naming the pool's seed is admitted. On the gardener target a
// binding through shoots/binding to aws-eu2 is refused the same way.
func TestRequiredPoolRefusesSeedOutsideIt(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace, webhookSeed)
	ctx := context.Background()
	const label, poolSeed, outside, pool = "e2e.seedwarden.io/pool-test", "e2e-pool-seed", "aws-eu2", "e2e-pool"
	_, op := st.projectUsers(t)

	ca, err := newReplicaCA()
	require.NoError(t, err)
	pooled := st.startReplicaWith(t, "pool", ca, replicaOptions{config: poolConfig})
	st.createSeedLike(t, "aws-eu2", poolSeed, map[string]string{label: "true"}, 10)
	require.NoError(t, waitReplicaReady(pooled, 60*time.Second))
	eventually(t, 10*time.Second, func() error { return knowsSeeds(pooled.metricsURL(), map[string]int64{poolSeed: 10}) })
	st.routeWebhooks(t, pooled.webhookAddr(), append(slices.Clone(st.caBundle), ca.CertPEM...), nil)

	named := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), withName("e2e-pool-outside"), withSeed(outside))
	err = op.c.Create(ctx, named)
	requireDenied(t, err, webhookSeed)
	for _, want := range []string{fmt.Sprintf("%q", pool), fmt.Sprintf("%q", outside), "Required"} {
		assert.Contains(t, err.Error(), want, "the refusal names the pool, the seed and the mode")
	}
	t.Logf("CREATE naming %s: %v", outside, err)
	assert.True(t, apierrors.IsNotFound(st.c.Get(ctx, client.ObjectKeyFromObject(named), named.DeepCopy())), "the refused Shoot is not stored")

	inPool := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), withName("e2e-pool-inside"), withSeed(poolSeed))
	require.NoError(t, op.c.Create(ctx, inPool), "a CREATE naming the pool's seed")
	assert.Equal(t, poolSeed, seedNameOf(t, client.ObjectKeyFromObject(inPool)))

	if onGardener() {
		pend := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), withSeedSelector("e2e.seedwarden.io/no-such-seed"))
		require.NoError(t, st.c.Create(ctx, pend))
		key := client.ObjectKeyFromObject(pend)
		require.Empty(t, admittedSeed(pend), "no seed fits: admitted without one")
		// The selector leaves out every seed; a binding by hand checks the
		// pool before it, and the message names the pool either way.
		err := st.bind(ctx, key, outside)
		require.Error(t, err, "a binding to %s, outside the pool", outside)
		assert.True(t, strings.Contains(err.Error(), fmt.Sprintf("%q", pool)), "the binding's refusal names the pool: %v", err)
		assert.Empty(t, seedNameOf(t, key), "the refused binding sets no seed")
	}
}
