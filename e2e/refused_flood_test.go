package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/config"
)

// floodConfirmWindow is the webhook's reservations.confirmWindow in the e2e
// configuration: the default, within its reservationTTL.
var floodConfirmWindow = min(config.DefaultConfirmWindow, 5*time.Second)

// TestRefusedCreatesHoldNoPlaces: one tenant sends 200 CREATEs within 10 s,
// each refused after the mutating webhook placed it (by the size webhook:
// too big; on the gardener target gardener-apiserver may refuse first). Places are held only until the confirm window ends, and at most
// reservations.maxPerUser of them at once, so another project's Shoot created
// during the flood is placed at once, and after the flood every place is
// free again within the confirm window.
func TestRefusedCreatesHoldNoPlaces(t *testing.T) {
	st := need(t)
	st.requireWebhook(t, webhookPlace, webhookShootSize)
	if st.sizeLimit == nil {
		t.Fatal("no resource-size limit configured (see sizeLimitCandidates in e2e/webhook_config_test.go)")
	}
	st.logOnFailure(t)
	st.cleanupShoots(t)
	st.waitSettled(t)
	ctx := context.Background()

	const (
		label    = "e2e.seedwarden.io/flood-test"
		seed     = "e2e-flood"
		free     = 25 // above reservations.maxPerUser (20): the flood cannot fill it
		requests = 200
		floodFor = 10 * time.Second
		tenantNS = "garden-flood"
	)
	sizes := map[string]int64{seed: free}
	st.createSeedLike(t, "aws-eu2", seed, map[string]string{label: "true"}, free)
	eventually(t, 10*time.Second, func() error { return knowsSeeds(st.metricsURL(), sizes) })

	// The tenant's project: its namespace labelled as Gardener labels
	// project namespaces (the size webhook selects them).
	tenantNamespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenantNS,
		Labels: map[string]string{"gardener.cloud/role": "project", "project.gardener.cloud/name": "flood"}}}
	require.NoError(t, st.c.Create(ctx, tenantNamespace))
	t.Cleanup(func() { _ = st.c.Delete(context.Background(), tenantNamespace) })
	st.createProject(t, "flood", tenantNS)
	// The operator may bind: in mode patch the placed CREATE needs it.
	_, victim := st.projectUsers(t)

	flooded := func(i int) *unstructured.Unstructured {
		sh := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), withSeedSelector(label),
			withName(fmt.Sprintf("e2e-flood-%03d", i)),
			withAnnotation("e2e.seedwarden.io/padding", strings.Repeat("x", int(2*st.sizeLimit.limit))))
		sh.SetNamespace(tenantNS)
		return sh
	}
	// Only the tenant's refused Shoots and the victim's select the seed.
	require.NoError(t, st.dryRunUntil(ctx, 10*time.Second, 100*time.Millisecond, func() *unstructured.Unstructured {
		return newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), withSeedSelector(label))
	}, onSeed(seed)))

	// The flood: 20 CREATEs a second for 10 s, as the suite's admin.
	var (
		wg                sync.WaitGroup
		mu                sync.Mutex
		refused, admitted int
		others            []string
	)
	tick := time.NewTicker(floodFor / requests)
	defer tick.Stop()
	victimAt := requests / 2
	var victimShoot *unstructured.Unstructured
	for i := range requests {
		<-tick.C
		if i == victimAt {
			// Another project's Shoot, in the middle of the flood.
			victimShoot = newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), withSeedSelector(label))
			require.NoError(t, victim.c.Create(ctx, victimShoot))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := st.c.Create(ctx, flooded(i))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				admitted++
			case strings.Contains(err.Error(), fmt.Sprintf("admission webhook %q denied the request", webhookShootSize)),
				// gardener-apiserver's own admission may refuse first (the
				// tenant's namespace has no credentials): also after the
				// mutating webhook.
				isGardenerRefusal(err):
				refused++
			default:
				others = append(others, err.Error())
			}
		}()
	}
	wg.Wait()
	floodEnded := time.Now()
	require.Empty(t, others, "every flooded CREATE is refused after the mutating webhook")
	require.Equal(t, requests, refused)
	require.Zero(t, admitted)

	// The victim's Shoot was placed at admission, not left pending.
	assert.Equal(t, seed, st.placedSeed(t, victimShoot), "another project's Shoot is placed during the flood")

	// Within the confirm window after the flood, every place but the
	// victim's is free: free-1 more Shoots, one after the other, all fit.
	time.Sleep(time.Until(floodEnded.Add(floodConfirmWindow)))
	for i := range free - 1 {
		sh := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), withSeedSelector(label))
		require.NoError(t, victim.c.Create(ctx, sh))
		require.Equal(t, seed, admittedSeed(sh), "Shoot %d after the flood: placed on the seed the flood held", i+1)
	}
	extra := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), withSeedSelector(label))
	require.NoError(t, victim.c.Create(ctx, extra, client.DryRunAll))
	assert.Empty(t, admittedSeed(extra), "and the seed is exactly full now")
	t.Logf("flood: %d refused in %s; places free again %s after it ended", refused, floodFor, time.Since(floodEnded).Round(time.Millisecond))
}

// TestRefusedCreateBlocksNoBindingBeyondConfirmWindow: in mode patch, a
// CREATE by a user without shoots/binding is placed by the mutating webhook,
// then refused (the seed is the user's choice to Gardener's ShootValidator).
// The place it held on a 1-place seed frees within the confirm window, so a
// legitimate binding onto that seed waits no longer. Gardener target: only
// gardener-apiserver serves shoots/binding.
func TestRefusedCreateBlocksNoBindingBeyondConfirmWindow(t *testing.T) {
	st := needGardener(t)
	if bindingMode() {
		t.Skipf("placement mode %q: the webhook sets no seed at CREATE, so the CREATE is not refused for it", placementMode)
	}
	st.requireWebhook(t, webhookPlace, webhookSeed)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	st.waitSettled(t)
	ctx := context.Background()
	const (
		label = "e2e.seedwarden.io/one-place-test"
		seed  = "e2e-one-place"
	)
	sizes := map[string]int64{seed: 1}
	st.createSeedLike(t, "aws-eu2", seed, map[string]string{label: "true"}, 1)
	eventually(t, 10*time.Second, func() error { return knowsSeeds(st.metricsURL(), sizes) })
	dev, op := st.projectUsers(t)
	selective := func() *unstructured.Unstructured {
		return newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), withSeedSelector(label))
	}
	require.NoError(t, st.dryRunUntil(ctx, 10*time.Second, 100*time.Millisecond, selective, onSeed(seed)))

	// An operator's Shoot waiting for its seed, bound by hand below.
	pending := selective()
	pending.SetAnnotations(nil)
	must(unstructured.SetNestedField(pending.Object, "e2e-no-scheduler", "spec", "schedulerName"))
	require.NoError(t, op.c.Create(ctx, pending))
	require.Empty(t, seedName(pending), "a Shoot of another scheduler is left alone")

	err := dev.c.Create(ctx, selective())
	requireDenied(t, err, shootValidatorPolicyName)
	refusedAt := time.Now()

	key := client.ObjectKeyFromObject(pending)
	var lastErr error
	eventually(t, floodConfirmWindow+3*time.Second, func() error {
		lastErr = st.bind(ctx, key, seed)
		return lastErr
	}, "the binding onto the seed the refused CREATE held")
	waited := time.Since(refusedAt)
	assert.Equal(t, seed, seedNameOf(t, key))
	assert.Less(t, waited, floodConfirmWindow+3*time.Second)
	t.Logf("binding onto the 1-place seed succeeded %s after the refused CREATE (confirm window %s)", waited.Round(time.Millisecond), floodConfirmWindow)
}
