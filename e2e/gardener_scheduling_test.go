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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/pending"
)

// Scheduling tests written for the gardener target; those that
// call need rather than needGardener mean the same on the CRD target and run
// there too.

var seedGVK = shootGVK.GroupVersion().WithKind("Seed")

// createSeedLike creates Seed name as a copy of seed template (as the API
// server holds it) with extra labels, its own ingress and DNS domains, and
// room for allocatable Shoots; opts change it further before it is created.
// When t ends, the Shoots of t go first, then the Seed.
func (st *suite) createSeedLike(t *testing.T, template, name string, labels map[string]string, allocatable int64, opts ...func(*unstructured.Unstructured)) {
	t.Helper()
	ctx := context.Background()
	tmpl := &unstructured.Unstructured{}
	tmpl.SetGroupVersionKind(seedGVK)
	require.NoError(t, st.c.Get(ctx, keyOf("", template), tmpl))
	sd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": tmpl.GetAPIVersion(), "kind": tmpl.GetKind(),
		"spec": tmpl.Object["spec"], "status": tmpl.Object["status"],
	}}
	sd.SetName(name)
	l := map[string]string{testLabel: labelValue(t.Name())}
	for k, v := range tmpl.GetLabels() {
		l[k] = v
	}
	for k, v := range labels {
		l[k] = v
	}
	sd.SetLabels(l)
	// Domains of its own: ShootDNS names Shoots after the default domain.
	if _, ok, _ := unstructured.NestedMap(sd.Object, "spec", "ingress"); ok {
		must(unstructured.SetNestedField(sd.Object, "ingress."+name+".example.com", "spec", "ingress", "domain"))
	}
	if _, ok, _ := unstructured.NestedMap(sd.Object, "spec", "dns", "internal"); ok {
		must(unstructured.SetNestedField(sd.Object, "internal."+name+".example.com", "spec", "dns", "internal", "domain"))
	}
	if defaults, _, _ := unstructured.NestedSlice(sd.Object, "spec", "dns", "defaults"); len(defaults) > 0 {
		defaults[0].(map[string]any)["domain"] = name + ".dev.example.com"
		must(unstructured.SetNestedSlice(sd.Object, defaults[:1], "spec", "dns", "defaults"))
	}
	must(unstructured.SetNestedField(sd.Object, fmt.Sprint(allocatable), "status", "allocatable", "shoots"))
	for _, o := range opts {
		o(sd)
	}
	require.NoError(t, createUnstructuredWithStatus(ctx, st.c, sd))
	t.Cleanup(func() {
		ctx := context.Background()
		// A Seed that Shoots still name cannot go (Gardener refuses).
		if err := st.deleteTestShoots(ctx, t.Name()); err != nil {
			t.Errorf("deleting the Shoots of %s: %v", t.Name(), err)
		}
		if err := poll(ctx, 15*time.Second, 100*time.Millisecond, func() error {
			var l unstructured.UnstructuredList
			l.SetGroupVersionKind(shootGVK.GroupVersion().WithKind("ShootList"))
			if err := st.c.List(ctx, &l, client.MatchingLabels{testLabel: labelValue(t.Name())}); err != nil {
				return err
			}
			if len(l.Items) > 0 {
				return fmt.Errorf("%d Shoots of the test left", len(l.Items))
			}
			return nil
		}); err != nil {
			t.Errorf("before deleting seed %s: %v", name, err)
		}
		if err := st.c.Delete(ctx, sd); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting seed %s: %v", name, err)
		}
	})
}

// boundTo counts the Shoots of test bound to seed, and those without a seed.
func (st *suite) boundTo(ctx context.Context, test, seed string) (bound, unbound int, err error) {
	var l unstructured.UnstructuredList
	l.SetGroupVersionKind(shootGVK.GroupVersion().WithKind("ShootList"))
	if err := st.c.List(ctx, &l, client.MatchingLabels{testLabel: labelValue(test)}); err != nil {
		return 0, 0, err
	}
	for i := range l.Items {
		switch seedName(&l.Items[i]) {
		case seed:
			bound++
		case "":
			unbound++
		}
	}
	return bound, unbound, nil
}

// TestPendingShootBoundWhenSeedAppears: a project member's Shoot that no
// seed fits (its seedSelector matches none) is admitted without one and
// reported pending; once a fitting Seed is created, the retry controller
// binds it there within seconds (on the gardener target through
// shoots/binding, with ShootDNS's domain of the new seed).
func TestPendingShootBoundWhenSeedAppears(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace)
	ctx := context.Background()
	dev, _ := st.projectUsers(t)
	const label, name = "e2e.seedwarden.io/new-seed", "e2e-new-seed"

	shoot := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), withSeedSelector(label))
	require.True(t, st.simulate(t, shoot).Unschedulable, "no seed carries %s yet", label)
	require.NoError(t, dev.c.Create(ctx, shoot))
	require.Empty(t, admittedSeed(shoot), "admitted without a seed")
	key := client.ObjectKeyFromObject(shoot)
	eventually(t, 15*time.Second, func() error {
		evs, err := st.shootEvents(ctx, key, corev1.EventTypeWarning, pending.ReasonSchedulingFailed)
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			return fmt.Errorf("no %s event yet", pending.ReasonSchedulingFailed)
		}
		return nil
	}, "the retry controller does not report the pending Shoot")
	require.Empty(t, seedNameOf(t, key), "bound before any seed fits")

	created := time.Now()
	st.createSeedLike(t, "aws-eu2", name, map[string]string{label: "true"}, 10)
	eventually(t, 15*time.Second, func() error {
		if got := seedNameOf(t, key); got != name {
			return fmt.Errorf("spec.seedName = %q, want %s", got, name)
		}
		return nil
	}, "the pending Shoot is not bound to the new seed")
	t.Logf("pending Shoot %s bound to the new seed %s %s after it was created", key, name, time.Since(created).Round(time.Millisecond))
	st.waitScheduledEvent(t, key, name)
	if onGardener() {
		st.requireShootDNSDomain(t, key, name)
	}
}

// TestConcurrentCreatesNeverOverfill: 12 Shoots that only a 5-place seed
// fits are created at once; exactly 5 end up bound to it (through
// shoots/binding on the gardener target, in placement mode binding), the
// others stay without a seed, and at no point are more than 5 bound.
func TestConcurrentCreatesNeverOverfill(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace, webhookSeed)
	ctx := context.Background()
	const (
		label, name     = "e2e.seedwarden.io/small-seed", "e2e-small"
		places, creates = 5, 12
	)
	selective := func() *unstructured.Unstructured {
		return newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), withSeedSelector(label))
	}
	st.createSeedLike(t, "aws-eu2", name, map[string]string{label: "true"}, places)
	require.NoError(t, st.dryRunUntil(ctx, 10*time.Second, eventuallyInterval, selective, onSeed(name)),
		"the webhook does not place onto the new seed %s", name)

	var wg sync.WaitGroup
	errs := make([]error, creates)
	for i := range creates {
		wg.Go(func() { errs[i] = st.c.Create(ctx, selective()) })
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "CREATE %d", i)
	}
	// The retry controller binds within milliseconds: watch until the seed
	// is full (at most 10 s), then 3 s longer for an overfill.
	most := 0
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		bound, _, err := st.boundTo(ctx, t.Name(), name)
		require.NoError(t, err)
		require.LessOrEqual(t, bound, places, "seed %s overfilled", name)
		if bound == places && most < places {
			deadline = time.Now().Add(3 * time.Second)
		}
		most = max(most, bound)
		time.Sleep(100 * time.Millisecond)
	}
	bound, unbound, err := st.boundTo(ctx, t.Name(), name)
	require.NoError(t, err)
	assert.Equal(t, places, bound, "Shoots bound to %s", name)
	assert.Equal(t, creates-places, unbound, "Shoots left without a seed")
	t.Logf("%d concurrent CREATEs for a %d-place seed: %d bound, %d pending (most bound at any time: %d)", creates, places, bound, unbound, most)
}

// TestGardenerFullSeedBindingRefused: gcp-us1 holds 3 Shoots with
// allocatable 3. A CREATE naming it and a manual binding of a pending Shoot
// to it through shoots/binding are both refused (by whichever of
// gardener-apiserver's ShootValidator and seedwarden's webhooks answers
// first: the outcome is tested, not the message), the Shoot stays unbound,
// and a seed with room takes a Shoot named for it.
func TestGardenerFullSeedBindingRefused(t *testing.T) {
	st := needGardener(t)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	st.waitSettled(t)
	ctx := context.Background()
	const full = "gcp-us1"

	usage, err := st.expectedUsage(ctx)
	require.NoError(t, err)
	alloc := st.seedAllocatable(t, full)
	require.Equal(t, alloc, usage[full], "%s should be exactly full", full)

	named := newShoot(t.Name(), gcpShoot("us-central1", "us-central1-a"), withName("e2e-onto-full-seed"), withSeed(full))
	err = st.c.Create(ctx, named)
	require.Error(t, err, "a CREATE naming the full seed %s", full)
	t.Logf("CREATE naming the full seed: %v", err)
	assert.True(t, apierrors.IsNotFound(st.c.Get(ctx, client.ObjectKeyFromObject(named), named.DeepCopy())), "the Shoot must not exist")

	pend := newShoot(t.Name(), gcpShoot("us-central1", "us-central1-a"))
	require.NoError(t, st.c.Create(ctx, pend))
	require.Empty(t, seedName(pend), "no seed fits: admitted without one")
	err = st.bind(ctx, client.ObjectKeyFromObject(pend), full)
	require.Error(t, err, "a binding to the full seed %s", full)
	t.Logf("binding to the full seed: %v", err)
	assert.Empty(t, seedNameOf(t, client.ObjectKeyFromObject(pend)), "the pending Shoot stays unbound")

	roomy := newShoot(t.Name(), gcpShoot("europe-west1", "europe-west1-b"), withSeed("gcp-eu1"))
	require.NoError(t, st.c.Create(ctx, roomy), "a CREATE naming a seed with room")
	assert.Equal(t, "gcp-eu1", seedNameOf(t, client.ObjectKeyFromObject(roomy)))
}

// seedAllocatable is status.allocatable.shoots of a seed.
func (st *suite) seedAllocatable(t *testing.T, seed string) int64 {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(seedGVK)
	require.NoError(t, st.c.Get(context.Background(), keyOf("", seed), u))
	v, _, _ := unstructured.NestedString(u.Object, "status", "allocatable", "shoots")
	var n int64
	_, err := fmt.Sscan(v, &n)
	require.NoError(t, err, "status.allocatable.shoots %q of %s", v, seed)
	return n
}

// TestGardenerSelfHostedShootNeverBound: a self-hosted Shoot (a control-plane
// pool, min = max = 1, in namespace garden: what gardener-apiserver admits)
// is admitted without a seed and the retry controller never binds it,
// though seeds have room.
func TestGardenerSelfHostedShootNeverBound(t *testing.T) {
	st := needGardener(t)
	st.startTest(t, webhookPlace)
	ctx := context.Background()

	ordinary := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"))
	require.False(t, st.simulate(t, ordinary).Unschedulable, "an ordinary Shoot like it must have a seed")
	shoot := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), func(u *unstructured.Unstructured) {
		u.SetNamespace(gardenNamespace)
		workers, _, err := unstructured.NestedSlice(u.Object, "spec", "provider", "workers")
		must(err)
		w := workers[0].(map[string]any)
		w["controlPlane"], w["minimum"], w["maximum"] = map[string]any{}, int64(1), int64(1)
		must(unstructured.SetNestedSlice(u.Object, workers, "spec", "provider", "workers"))
	})
	require.NoError(t, st.c.Create(ctx, shoot))
	st.requireNeverBound(t, shoot, "a self-hosted Shoot")
}

// failedCalling says whether err is the API server applying a webhook's
// failurePolicy Fail because it could not call it.
func failedCalling(err error, webhook string) bool {
	return err != nil && strings.Contains(err.Error(), fmt.Sprintf("failed calling webhook %q", webhook))
}

// bind sets spec.seedName of a stored Shoot through shoots/binding, as an
// operator would; a conflict with a concurrent status write is retried.
func (st *suite) bind(ctx context.Context, key client.ObjectKey, seed string) error {
	var err error
	for range 5 {
		sh := &unstructured.Unstructured{}
		sh.SetGroupVersionKind(shootGVK)
		if err = st.c.Get(ctx, key, sh); err != nil {
			return err
		}
		must(unstructured.SetNestedField(sh.Object, seed, "spec", "seedName"))
		if err = st.c.SubResource("binding").Update(ctx, sh); !apierrors.IsConflict(err) {
			return err
		}
	}
	return err
}
