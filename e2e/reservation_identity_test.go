package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/config"
)

// A reservation is confirmed only by the Shoot it was taken for, and ends
// when that Shoot is deleted (docs/design.md, "Provisional reservations").
// The suite's webhook runs a reservationTTL as short as the confirm window,
// where a confirmed reservation ends with the window anyway: these tests
// send their Shoots through a replica with the default TTL (30 s).

// defaultReservationTTL is the configuration's default reservationTTL.
var defaultReservationTTL = config.DefaultReservationTTL.String()

// TestRecreatesOfPendingNamesHoldNoPlaces: through a replica with the default
// reservationTTL, a tenant with two pending Shoots sends CREATEs of the same
// names, aimed at a 2-place seed (refused at
// storage: AlreadyExists, after the webhooks). Each round used to hold the
// seed's places across replicas for the whole reservationTTL (30 s), the
// older pending Shoot of the name "confirming" the entry; now the names the
// cache holds reserve nothing across replicas, and what the capacity webhook
// reserves for a seed set at CREATE is confirmed by nothing. Another user's
// Shoot is placed on the seed within the confirm window (+3 s) of the last
// round, and once that window has passed, every place takes another user's
// real CREATE (in mode patch, admitted by the capacity webhook).
func TestRecreatesOfPendingNamesHoldNoPlaces(t *testing.T) {
	st := need(t)
	st.requireWebhook(t, webhookPlace, webhookSeed)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	st.waitSettled(t)
	ctx := context.Background()
	const (
		label   = "e2e.seedwarden.io/recreate-test"
		nowhere = "e2e.seedwarden.io/recreate-test-nowhere" // no seed has it
		seed    = "e2e-recreate"
		places  = 2
		rounds  = 3
	)
	st.routedReplicaWithSeed(t, "default-ttl", label, seed, places)
	_, victim := st.projectUsers(t)
	aimed := func(opts ...shootOpt) *unstructured.Unstructured {
		return newShoot(t.Name(), append([]shootOpt{awsShoot("eu-central-1", "eu-central-1a")}, opts...)...)
	}
	require.NoError(t, st.dryRunUntil(ctx, 10*time.Second, 100*time.Millisecond, func() *unstructured.Unstructured {
		return aimed(withSeedSelector(label))
	}, onSeed(seed)))

	// The tenant's two pending Shoots: nothing fits them.
	names := []string{"e2e-recreate-a", "e2e-recreate-b"}
	for _, name := range names {
		sh := aimed(withSeedSelector(nowhere), withName(name))
		require.NoError(t, st.c.Create(ctx, sh))
		require.Empty(t, admittedSeed(sh), "%s fits no seed", name)
	}
	eventually(t, 10*time.Second, func() error {
		for _, name := range names {
			var u unstructured.Unstructured
			u.SetGroupVersionKind(shootGVK)
			if err := st.c.Get(ctx, keyOf(projectNamespace, name), &u); err != nil {
				return err
			}
		}
		return st.cacheMatches(ctx)
	})

	// Rounds of CREATEs of those names, aimed at the seed.
	var lastRound time.Time
	for round := range rounds {
		for _, name := range names {
			err := st.c.Create(ctx, aimed(withSeedSelector(label), withName(name)))
			require.True(t, apierrors.IsAlreadyExists(err) || isGardenerRefusal(err), "round %d, %s: %v", round, name, err)
		}
		lastRound = time.Now()
		time.Sleep(time.Second)
	}

	// Another user's Shoot: placed on the seed within the confirm window.
	// Named, as the finding's were: a Shoot with only generateName is
	// placed from the replica's own view, the cluster-wide entries are
	// checked only when it is bound (binding) or by the capacity webhook.
	probes := 0
	named := func() *unstructured.Unstructured {
		probes++
		// Short: gardener-apiserver bounds project and Shoot name to 21.
		return aimed(withSeedSelector(label), withName(fmt.Sprintf("e2e-rc-v%d", probes)))
	}
	var lastErr error
	require.NoError(t, st.dryRunUntil(ctx, floodConfirmWindow+3*time.Second, 100*time.Millisecond, named, func(sh *unstructured.Unstructured) error {
		lastErr = onSeed(seed)(sh)
		return lastErr
	}), "the re-CREATEs hold the seed: %v", lastErr)
	delay := time.Since(lastRound)
	assert.Less(t, delay, floodConfirmWindow+3*time.Second)
	// Once the window of the last round has passed, nothing of the
	// re-CREATEs holds a place (a refused CREATE holds its place that long,
	// like any other): both places take another user's Shoots.
	time.Sleep(time.Until(lastRound.Add(floodConfirmWindow)))
	for i := range places {
		sh := named()
		require.NoError(t, victim.c.Create(ctx, sh))
		assert.Equal(t, seed, admittedSeed(sh), "Shoot %d of another user: placed on the seed the re-CREATEs aimed at", i+1)
		assert.Equal(t, seed, st.placedSeed(t, sh), "and bound there")
	}
	t.Logf("%d rounds of re-CREATEs of %d pending names: another user's Shoot placed %s after the last (confirm window %s; it was the 30 s TTL)",
		rounds, len(names), delay.Round(time.Millisecond), floodConfirmWindow)
}

// TestDeletedShootsHoldNoPlacesOnAFollower: three create+delete pairs on a
// 3-place seed through a replica that does not lead (default reservationTTL) (no retry controller:
// in mode binding its Shoots wait for the leader's bind). Once the replica
// has seen the deletes, it holds no place for them, in memory
// (seedwarden_seed_charged_shoots) or across replicas: three Shoots of
// another user through it are placed on the seed at once. It used to keep
// "usage 3, allocatable 3" for the 30 s TTL.
func TestDeletedShootsHoldNoPlacesOnAFollower(t *testing.T) {
	st := need(t)
	st.requireWebhook(t, webhookPlace, webhookSeed)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	st.waitSettled(t)
	ctx := context.Background()
	const (
		label  = "e2e.seedwarden.io/deleted-test"
		seed   = "e2e-deleted"
		places = 3
	)
	follower := st.routedReplicaWithSeed(t, "follower", label, seed, places)
	_, victim := st.projectUsers(t)
	aimed := func() *unstructured.Unstructured {
		return newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), withSeedSelector(label))
	}
	require.NoError(t, st.dryRunUntil(ctx, 10*time.Second, 100*time.Millisecond, aimed, onSeed(seed)))

	began := time.Now()
	for i := range places {
		sh := aimed()
		require.NoError(t, st.c.Create(ctx, sh))
		require.Equal(t, seed, admittedSeed(sh), "pair %d: placed through the follower", i+1)
		require.NoError(t, st.deleteShoot(ctx, sh))
		eventually(t, 10*time.Second, func() error {
			var u unstructured.Unstructured
			u.SetGroupVersionKind(shootGVK)
			err := st.c.Get(ctx, client.ObjectKeyFromObject(sh), &u)
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("pair %d: Shoot %s not gone: %v", i+1, sh.GetName(), err)
		})
	}
	deleted := time.Now()
	eventually(t, 5*time.Second, func() error {
		charged, err := seedGauge(follower.metricsURL(), "seedwarden_seed_charged_shoots", seed)
		if err != nil {
			return err
		}
		if charged != 0 {
			return fmt.Errorf("the follower charges %v to %s after the deletes", charged, seed)
		}
		return nil
	}, "the follower still holds places of deleted Shoots")
	freed := time.Since(deleted)
	for i := range places {
		sh := aimed()
		require.NoError(t, victim.c.Create(ctx, sh))
		assert.Equal(t, seed, admittedSeed(sh), "Shoot %d of another user through the follower", i+1)
	}
	t.Logf("%d create+delete pairs through the follower in %s; its places free %s after the last delete (it was the 30 s TTL)",
		places, deleted.Sub(began).Round(time.Millisecond), freed.Round(time.Millisecond))
}

// seedGauge is the value of the gauge name for seed at metricsURL.
func seedGauge(metricsURL, name, seed string) (float64, error) {
	samples, err := scrape(metricsURL)
	if err != nil {
		return 0, err
	}
	for _, smp := range samples {
		if smp.name == name && smp.labels["seed"] == seed {
			return smp.value, nil
		}
	}
	return 0, fmt.Errorf("%s has no %s for seed %s", metricsURL, name, seed)
}

// routedReplicaWithSeed starts a replica of its own (the default
// reservation TTL, so a hold that lasts it shows), creates a seed labelled
// label with places, waits until both the suite's webhook and the replica
// know it, and routes every webhook to the replica.
func (st *suite) routedReplicaWithSeed(t *testing.T, name, label, seed string, places int64) *replica {
	t.Helper()
	ca, err := newReplicaCA()
	require.NoError(t, err)
	r := st.startReplicaWith(t, name, ca, replicaOptions{reservationTTL: defaultReservationTTL})
	sizes := map[string]int64{seed: places}
	st.createSeedLike(t, "aws-eu2", seed, map[string]string{label: "true"}, places)
	require.NoError(t, waitReplicaReady(r, 60*time.Second))
	for _, url := range []string{st.metricsURL(), r.metricsURL()} {
		eventually(t, 10*time.Second, func() error { return knowsSeeds(url, sizes) })
	}
	st.routeWebhooks(t, r.webhookAddr(), append(slices.Clone(st.caBundle), ca.CertPEM...), nil)
	return r
}
