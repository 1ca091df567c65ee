package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/pending"
)

// The tests run in this order (source order) and each leaves the landscape
// as it found it: Shoots it created are deleted, Seeds restored, and the
// webhook's cache is awaited to agree with the API server before the next.

// TestPlacement: a Shoot created without spec.seedName gets the seed
// `webhook simulate` chooses for the same landscape, Shoot after Shoot (each
// placement changes the usage the next one sees).
func TestPlacement(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	st.waitSettled(t)
	ctx := context.Background()

	cases := []struct {
		name  string
		shoot *unstructured.Unstructured
		known string // the seed on the untouched example landscape (docs/commands.md), if any
	}{
		{"examples/shoot.yaml", shootFromFile(t, t.Name(), "examples/shoot.yaml"), "aws-eu2"},
		{"second eu-central-1 Shoot", newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1b")), "aws-eu2"},
		{"third eu-central-1 Shoot: usage tied, name decides", newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1c")), "aws-eu1"},
		{"gcp europe-west1 (Enforce zones)", newShoot(t.Name(), gcpShoot("europe-west1", "europe-west1-b")), "gcp-eu1"},
		{"purpose testing", newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"), withPurpose("testing")), ""},
	}
	for _, tc := range cases {
		want := st.simulate(t, tc.shoot)
		require.False(t, want.Unschedulable, "%s: simulate finds no seed: %s %v", tc.name, want.Message, want.Reasons)
		if tc.known != "" {
			assert.Equal(t, tc.known, want.Seed, "%s: simulate on the example landscape", tc.name)
		}
		require.NoError(t, st.c.Create(ctx, tc.shoot), tc.name)
		assert.Equal(t, want.Seed, admittedSeed(tc.shoot), "%s: the seed in the response (mode %s)", tc.name, placementMode)

		bound := st.placedSeed(t, tc.shoot)
		assert.Equal(t, want.Seed, bound, "%s: stored spec.seedName", tc.name)
		t.Logf("%s: %s/%s -> %s", tc.name, tc.shoot.GetNamespace(), tc.shoot.GetName(), bound)
	}
}

// TestUnschedulableWarning: a Shoot no seed fits is admitted unchanged, with
// an admission warning that says why, and stays without seed.
func TestUnschedulableWarning(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	ctx := context.Background()
	c, warns := st.clientAs(t, "")

	cases := []struct {
		name  string
		shoot *unstructured.Unstructured
	}{
		{"examples/shoot-unschedulable.yaml (only a tainted seed selected)", shootFromFile(t, t.Name(), "examples/shoot-unschedulable.yaml")},
		{"us-central1 gcp: the only seed there is full", newShoot(t.Name(), gcpShoot("us-central1", "us-central1-a"))},
		{"eu-west-1: its seed is tainted, and strategy SameRegion (the default) looks no further", newShoot(t.Name(), awsShoot("eu-west-1", "eu-west-1a"))},
	}
	for _, tc := range cases {
		sim := st.simulate(t, tc.shoot)
		require.True(t, sim.Unschedulable, "%s: simulate places it on %s", tc.name, sim.Seed)

		warns.take()
		require.NoError(t, c.Create(ctx, tc.shoot), tc.name)
		got := warns.take()
		assert.Empty(t, admittedSeed(tc.shoot), tc.name)
		var ours []string
		for _, w := range got {
			if strings.HasPrefix(w, handlers.UnschedulableWarningPrefix) {
				ours = append(ours, w)
			}
		}
		require.Len(t, ours, 1, "%s: want one seedwarden warning, got %q", tc.name, got)
		for seed := range sim.Reasons {
			assert.Contains(t, ours[0], seed, "%s: the warning names every seed's reason", tc.name)
		}
		t.Logf("%s: warning %q", tc.name, ours[0])

		stored := &unstructured.Unstructured{}
		stored.SetGroupVersionKind(shootGVK)
		require.NoError(t, st.c.Get(ctx, client.ObjectKeyFromObject(tc.shoot), stored))
		assert.Empty(t, seedName(stored), "%s: stored without spec.seedName", tc.name)
	}
}

// requireWebhook fails t when webhook name is not registered: every webhook
// is implemented, so a path the server does not serve is a regression.
func (st *suite) requireWebhook(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, ok := st.registered[n]; !ok {
			t.Fatalf("webhook %s is not registered: the server answers 404 on %s", n, st.skipped[n])
		}
	}
}

// requireDenied checks that err is an admission denial by one of the
// webhooks, or by the ShootValidator emulation when shootValidatorPolicyName
// is among them (it runs before the validating webhooks, as ShootValidator
// does in gardener-apiserver, so it answers first where both refuse); on the
// gardener target that name stands for gardener-apiserver's own refusal.
func requireDenied(t *testing.T, err error, webhooks ...string) {
	t.Helper()
	require.Error(t, err, "want a denial by %v", webhooks)
	msg := err.Error()
	for _, w := range webhooks {
		if w == shootValidatorPolicyName && (isPolicyDenial(err) || isGardenerRefusal(err)) {
			return
		}
		if strings.Contains(msg, fmt.Sprintf("admission webhook %q denied the request", w)) {
			return
		}
	}
	t.Fatalf("want a denial by one of %v, got: %v", webhooks, err)
}

// TestBindingRBAC: setting spec.seedName needs update on shoots/binding. A
// user who may create Shoots but not bind them cannot choose the seed, on
// CREATE or by an UPDATE (the ShootValidator emulation refuses first, the
// binding webhook would too); a user with the binding permission can. In
// placement mode binding, the webhook's own placement of that user's Shoot
// goes through (the retry controller binds it); mode patch cannot place it
// (TestPatchModeNeedsBindingPermission).
func TestBindingRBAC(t *testing.T) {
	st := need(t)
	st.requireWebhook(t, webhookBinding)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	ctx := context.Background()
	dev, op := st.projectUsers(t)

	if bindingMode() {
		placed := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"))
		want := st.simulate(t, placed)
		require.NoError(t, dev.c.Create(ctx, placed), "the webhook's own placement must pass the binding check")
		assert.Equal(t, want.Seed, st.placedSeed(t, placed))
	}

	// Choosing the seed needs update on shoots/binding.
	chosen := newShoot(t.Name(), withName("e2e-chosen-by-developer"), withSeed("aws-eu1"))
	err := dev.c.Create(ctx, chosen)
	requireDenied(t, err, webhookBinding, shootValidatorPolicyName)
	assert.True(t, apierrors.IsForbidden(err), "want 403 Forbidden, got %v", err)
	assert.True(t, apierrors.IsNotFound(st.c.Get(ctx, client.ObjectKeyFromObject(chosen), &api.Shoot{})), "the Shoot must not exist")
	t.Logf("developer setting spec.seedName: %v", err)

	bound := newShoot(t.Name(), withSeed("aws-eu1"))
	require.NoError(t, op.c.Create(ctx, bound), "a user with update on shoots/binding may choose the seed")
	assert.Equal(t, "aws-eu1", seedName(bound))

	// Nor may the developer set the seed of a pending Shoot by an update.
	// The retry controller writes the pending Shoot's status meanwhile, so
	// an update may first lose on the resourceVersion; it is sent again
	// until admission answers.
	pending := shootFromFile(t, t.Name(), "examples/shoot-unschedulable.yaml")
	require.NoError(t, dev.c.Create(ctx, pending))
	require.Empty(t, seedName(pending))
	err = retry.OnError(retry.DefaultRetry, apierrors.IsConflict, func() error {
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(shootGVK)
		if err := dev.c.Get(ctx, client.ObjectKeyFromObject(pending), cur); err != nil {
			return err
		}
		if err := unstructured.SetNestedField(cur.Object, "aws-eu1", "spec", "seedName"); err != nil {
			return err
		}
		return dev.c.Update(ctx, cur)
	})
	requireDenied(t, err, webhookBinding, shootValidatorPolicyName)
	t.Logf("developer setting spec.seedName by an update: %v", err)
}

// TestFullSeedRejectsManualPlacement: gcp-us1 of the example landscape holds
// 3 Shoots with allocatable 3; binding one more to it is denied (even for
// the admin, who may bind), while a seed with room takes it.
func TestFullSeedRejectsManualPlacement(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookCapacity)
	ctx := context.Background()

	usage, err := st.expectedUsage(ctx)
	require.NoError(t, err)
	var seed api.Seed
	require.NoError(t, st.c.Get(ctx, keyOf("", "gcp-us1"), &seed))
	alloc := seed.Status.Allocatable["shoots"]
	require.Equal(t, alloc.Value(), usage["gcp-us1"], "gcp-us1 should be exactly full")

	full := newShoot(t.Name(), gcpShoot("us-central1", "us-central1-a"), withName("e2e-onto-full-seed"), withSeed("gcp-us1"))
	err = st.c.Create(ctx, full)
	// The binding webhook checks the seed's capacity too; validating webhooks
	// run in parallel and the API server reports the first denial.
	requireDenied(t, err, webhookCapacity, webhookBinding)
	t.Logf("manual placement on the full seed: %v", err)
	assert.True(t, apierrors.IsNotFound(st.c.Get(ctx, client.ObjectKeyFromObject(full), &api.Shoot{})), "the Shoot must not exist")

	roomy := newShoot(t.Name(), gcpShoot("europe-west1", "europe-west1-b"), withSeed("gcp-eu1"))
	require.NoError(t, st.c.Create(ctx, roomy), "manual placement on a seed with room")
	assert.Equal(t, "gcp-eu1", seedName(roomy))
}

// TestOversizedShootRejected: with a Shoot size limit configured, a larger
// Shoot is denied and a smaller one admitted.
func TestOversizedShootRejected(t *testing.T) {
	st := need(t)
	st.requireWebhook(t, webhookSize)
	if st.sizeLimit == nil {
		t.Fatal("no resource-size configuration field that internal/config accepts (see sizeLimitCandidates in e2e/webhook_test.go)")
	}
	st.logOnFailure(t)
	st.cleanupShoots(t)
	ctx := context.Background()

	// us-east-1 goes to aws-us1, which has no capacity limit: a reservation
	// left by the refused Shoot cannot disturb other tests.
	big := newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"), withName("e2e-oversized"),
		withAnnotation("e2e.seedwarden.io/padding", strings.Repeat("x", int(2*st.sizeLimit.limit))))
	err := st.c.Create(ctx, big)
	requireDenied(t, err, webhookSize)
	t.Logf("oversized Shoot: %.200s", err)
	assert.True(t, apierrors.IsNotFound(st.c.Get(ctx, client.ObjectKeyFromObject(big), &api.Shoot{})), "the Shoot must not exist")

	small := newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"),
		withAnnotation("e2e.seedwarden.io/padding", strings.Repeat("x", int(st.sizeLimit.limit/2))))
	require.NoError(t, st.c.Create(ctx, small), "a Shoot below the limit")
}

// TestSeedNotReadyStopsPlacements: once a seed's GardenletReady turns False,
// new Shoots avoid it within a second.
func TestSeedNotReadyStopsPlacements(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	st.waitSettled(t)
	ctx := context.Background()

	shoot := func() *unstructured.Unstructured {
		return newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"))
	}
	target := st.simulate(t, shoot()).Seed
	require.NotEmpty(t, target)

	setReady := func(status string) {
		t.Helper()
		require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var seed api.Seed
			if err := st.c.Get(ctx, keyOf("", target), &seed); err != nil {
				return err
			}
			now := metav1.Now()
			found := false
			for i := range seed.Status.Conditions {
				if c := &seed.Status.Conditions[i]; c.Type == "GardenletReady" {
					c.Status, c.LastTransitionTime, c.LastUpdateTime, found = status, now, now, true
				}
			}
			if !found {
				return fmt.Errorf("seed %s has no GardenletReady condition", target)
			}
			return st.c.Status().Update(ctx, &seed)
		}))
	}
	setReady("False")
	changed := time.Now()
	t.Cleanup(func() {
		setReady("True")
		// Wait until the webhook places onto the seed again, so later tests
		// see the landscape as it was.
		eventually(t, 10*time.Second, func() error {
			sh := shoot()
			want := st.simulate(t, sh)
			if err := st.c.Create(context.Background(), sh, dryRunAll); err != nil {
				return err
			}
			if admittedSeed(sh) != want.Seed {
				return fmt.Errorf("placed on %q, simulate says %q", admittedSeed(sh), want.Seed)
			}
			return nil
		})
	})

	const bound = time.Second
	var avoided time.Duration = -1
	var onTarget int
	for time.Since(changed) < bound {
		sh := shoot()
		require.NoError(t, st.c.Create(ctx, sh))
		if got := admittedSeed(sh); got != target {
			require.NotEmpty(t, got, "the Shoot was not placed at all")
			avoided = time.Since(changed)
			break
		}
		onTarget++
	}
	require.GreaterOrEqual(t, avoided, time.Duration(0), "Shoots still land on %s %s after it turned NotReady", target, bound)
	t.Logf("%s NotReady: the first Shoot avoiding it was admitted %s after the status update (%d placed on it before)",
		target, avoided.Round(time.Millisecond), onTarget)
	for i := 0; i < 5; i++ {
		sh := shoot()
		require.NoError(t, st.c.Create(ctx, sh))
		assert.NotEqual(t, target, admittedSeed(sh))
		assert.NotEmpty(t, admittedSeed(sh))
	}
}

// TestPendingShootRetried: a Shoot that no seed can take (gcp-us1, the only
// seed for gcp us-central1, is full) is admitted without a seed and with a
// warning; the retry controller records why it waits (Warning event
// SchedulingFailed, status.lastOperation Create/Pending) and binds it within
// seconds of the seed's allocatable being raised. The controller backs off
// from 30s in this suite, so only the Seed event can have triggered that.
func TestPendingShootRetried(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace)
	ctx := context.Background()
	c, warns := st.clientAs(t, "")
	const seed = "gcp-us1"

	before, err := scrape(st.metricsURL())
	require.NoError(t, err)
	shoot := newShoot(t.Name(), gcpShoot("us-central1", "us-central1-a"))
	sim := st.simulate(t, shoot)
	require.True(t, sim.Unschedulable, "simulate places it on %s", sim.Seed)
	warns.take()
	require.NoError(t, c.Create(ctx, shoot))
	require.Empty(t, admittedSeed(shoot), "admitted without a seed")
	assert.True(t, slices.ContainsFunc(warns.take(), func(w string) bool {
		return strings.HasPrefix(w, handlers.UnschedulableWarningPrefix) && strings.Contains(w, seed)
	}), "the admission warning gives %s's reason", seed)
	key := client.ObjectKeyFromObject(shoot)

	// The Shoot goes before the seed is restored (cleanups run last first).
	var original resource.Quantity
	t.Cleanup(func() {
		ctx := context.Background()
		if err := st.deleteShoot(ctx, shoot); err != nil {
			t.Errorf("deleting %s: %v", key, err)
		}
		eventually(t, 10*time.Second, func() error {
			if err := st.c.Get(ctx, key, &api.Shoot{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("Shoot %s still there (%v)", key, err)
			}
			return nil
		})
		if !original.IsZero() {
			require.NoError(t, st.setAllocatable(ctx, seed, original))
		}
	})

	// Pending: the controller says why.
	var pendingSince time.Time
	eventually(t, 15*time.Second, func() error {
		var s api.Shoot
		if err := st.c.Get(ctx, key, &s); err != nil {
			return err
		}
		op := s.Status.LastOperation
		if op == nil || op.Type != "Create" || op.State != "Pending" {
			return fmt.Errorf("status.lastOperation = %+v, want Create/Pending", op)
		}
		if !strings.Contains(op.Description, seed) {
			return fmt.Errorf("status.lastOperation.description %q does not name %s", op.Description, seed)
		}
		evs, err := st.shootEvents(ctx, key, corev1.EventTypeWarning, pending.ReasonSchedulingFailed)
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			return fmt.Errorf("no %s event yet", pending.ReasonSchedulingFailed)
		}
		pendingSince = time.Now()
		t.Logf("pending: lastOperation %q; event %s: %q", op.Description, evs[0].Reason, evs[0].Note)
		return nil
	}, "the retry controller does not report the pending Shoot")
	assert.Empty(t, seedNameOf(t, key), "still without a seed")

	// Room on the seed: bound within seconds, by the controller.
	var sd api.Seed
	require.NoError(t, st.c.Get(ctx, keyOf("", seed), &sd))
	original = sd.Status.Allocatable[api.ResourceShoots]
	raised := original.DeepCopy()
	raised.Add(resource.MustParse("1"))
	require.NoError(t, st.setAllocatable(ctx, seed, raised))
	raisedAt := time.Now()
	var boundAfter time.Duration
	eventually(t, 10*time.Second, func() error {
		if got := seedNameOf(t, key); got != seed {
			return fmt.Errorf("spec.seedName = %q, want %s", got, seed)
		}
		boundAfter = time.Since(raisedAt)
		return nil
	}, "the pending Shoot is not bound after %s's allocatable was raised", seed)
	t.Logf("bound to %s %s after its allocatable went from %s to %s (pending for %s before)",
		seed, boundAfter.Round(time.Millisecond), original.String(), raised.String(), raisedAt.Sub(pendingSince).Round(time.Millisecond))
	assert.Less(t, boundAfter, 5*time.Second, "bound within seconds")

	eventually(t, 10*time.Second, func() error {
		evs, err := st.shootEvents(ctx, key, corev1.EventTypeNormal, pending.ReasonSchedulingSuccessful)
		if err != nil {
			return err
		}
		if len(evs) != 1 || !strings.Contains(evs[0].Note, seed) {
			return fmt.Errorf("%s events: %+v", pending.ReasonSchedulingSuccessful, evs)
		}
		var s api.Shoot
		if err := st.c.Get(ctx, key, &s); err != nil {
			return err
		}
		if s.Status.LastOperation != nil {
			return fmt.Errorf("status.lastOperation %+v: the controller removes its Create/Pending after binding", s.Status.LastOperation)
		}
		return nil
	})
	after, err := scrape(st.metricsURL())
	require.NoError(t, err)
	scheduled := func(l map[string]string) bool { return l["result"] == "scheduled" }
	assert.Equal(t, 1.0, counterSum(after, "seedwarden_scheduling_retries_total", scheduled)-
		counterSum(before, "seedwarden_scheduling_retries_total", scheduled), "seedwarden_scheduling_retries_total{result=scheduled}")
	st.waitSettled(t)
}

// TestSeedUnchangedUpdatesSkipShootGuards: the binding and capacity webhooks
// are only called for requests that can choose a seed (their
// matchConditions): an update that leaves spec.seedName alone does not reach
// them, one that changes it does (and is denied).
func TestSeedUnchangedUpdatesSkipShootGuards(t *testing.T) {
	st := need(t)
	st.requireWebhook(t, webhookBinding, webhookCapacity)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	ctx := context.Background()

	shoot := newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"))
	require.NoError(t, st.c.Create(ctx, shoot))
	st.placedSeed(t, shoot)
	guards := func() (binding, capacity float64) {
		samples, err := scrape(st.metricsURL())
		require.NoError(t, err)
		of := func(w string) func(map[string]string) bool {
			return func(l map[string]string) bool { return l["webhook"] == w }
		}
		return counterSum(samples, "seedwarden_validations_total", of(handlers.WebhookBinding)),
			counterSum(samples, "seedwarden_validations_total", of(handlers.WebhookCapacity))
	}

	b0, c0 := guards()
	for i := 0; i < 3; i++ {
		patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"labels":{"e2e.seedwarden.io/round":"%d"}}}`, i)))
		require.NoError(t, st.c.Patch(ctx, shoot, patch))
	}
	b1, c1 := guards()
	assert.Equal(t, b0, b1, "label updates reached the binding webhook")
	assert.Equal(t, c0, c1, "label updates reached the capacity webhook")

	// Changing the seed through the main resource reaches it. The e2e API
	// server serves Shoots from a CRD, so seedwarden runs with bindMode
	// update and judges the change as a binding; the admin may bind (so the
	// ShootValidator policy, which runs first, lets it through), but not to
	// a seed that does not exist.
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"seedName":"no-such-seed"}}`))
	err := st.c.Patch(ctx, shoot, patch)
	requireDenied(t, err, webhookBinding, webhookCapacity)
	b2, _ := guards()
	assert.Greater(t, b2, b1, "a seed change is sent to the binding webhook")
	t.Logf("3 label updates: binding webhook called %.0f times, capacity %.0f; seed change: %v", b1-b0, c1-c0, err)
}

// TestKubeconfigSecret: a Secret whose kubeconfig runs a command (exec) is
// denied, also when the kubeconfig arrives by an update through stringData;
// a token-only kubeconfig is admitted; Secrets without a kubeconfig never
// reach the webhook (matchConditions).
func TestKubeconfigSecret(t *testing.T) {
	st := need(t)
	st.requireWebhook(t, webhookKubeconfig)
	st.logOnFailure(t)
	ctx := context.Background()
	secret := func(name string, data map[string][]byte) *corev1.Secret {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: projectNamespace, Labels: map[string]string{testLabel: labelValue(t.Name())}},
			Data:       data,
		}
		t.Cleanup(func() { _ = st.c.Delete(context.Background(), s) })
		return s
	}
	calls := func() float64 {
		samples, err := scrape(st.metricsURL())
		require.NoError(t, err)
		return counterSum(samples, "seedwarden_validations_total", func(l map[string]string) bool { return l["webhook"] == "kubeconfig-secret" })
	}
	n0 := calls()

	err := st.c.Create(ctx, secret("e2e-kubeconfig-exec", map[string][]byte{"kubeconfig": []byte(execKubeconfig)}))
	requireDenied(t, err, webhookKubeconfig)
	assert.True(t, apierrors.IsForbidden(err), "want 403, got %v", err)
	assert.Contains(t, err.Error(), `user "admin" uses field "exec", which is not allowed`)
	t.Logf("exec kubeconfig: %v", err)

	err = st.c.Create(ctx, secret("e2e-kubeconfig-garbage", map[string][]byte{"kubeconfig": []byte("users: [")}))
	requireDenied(t, err, webhookKubeconfig)
	assert.Contains(t, err.Error(), "kubeconfig: cannot be parsed")

	ok := secret("e2e-kubeconfig-token", map[string][]byte{"kubeconfig": []byte(tokenKubeconfig)})
	require.NoError(t, st.c.Create(ctx, ok), "a token-only kubeconfig")
	// An update that swaps in an exec user through stringData (folded into
	// data before admission) is denied too.
	ok.StringData = map[string]string{"kubeconfig": execKubeconfig}
	err = st.c.Update(ctx, ok)
	requireDenied(t, err, webhookKubeconfig)
	n1 := calls()
	assert.Equal(t, 4.0, n1-n0, "the webhook answered the four kubeconfig Secrets")

	plain := secret("e2e-no-kubeconfig", map[string][]byte{"password": []byte("x")})
	require.NoError(t, st.c.Create(ctx, plain))
	assert.Equal(t, n1, calls(), "a Secret without data.kubeconfig is not sent to the webhook")
}

// Kubeconfigs of the kubeconfig Secret test.
const (
	tokenKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: garden, cluster: {server: "https://api.example.com", certificate-authority-data: Zm9v}}]
users: [{name: robot, user: {token: abc}}]
contexts: [{name: garden, context: {cluster: garden, user: robot}}]
current-context: garden
`
	execKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: garden, cluster: {server: "https://api.example.com"}}]
users: [{name: admin, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: ["-c", "id"]}}}]
contexts: [{name: garden, context: {cluster: garden, user: admin}}]
current-context: garden
`
)

// TestNamespaceDeletion: a namespace that still holds a Shoot, or that
// belongs to a live Project, cannot be deleted; once its Shoot is gone, an
// ordinary namespace can. The refusals are checked with dry-run deletions
// (admission runs, nothing is deleted), so a wrong answer cannot remove a
// namespace the suite needs.
func TestNamespaceDeletion(t *testing.T) {
	st := need(t)
	st.requireWebhook(t, webhookNamespaces)
	st.logOnFailure(t)
	ctx := context.Background()

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e2e-ns-%d", time.Now().UnixNano()%1e9)}}
	require.NoError(t, st.c.Create(ctx, ns))
	shoot := newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"))
	shoot.SetNamespace(ns.Name)
	require.NoError(t, st.c.Create(ctx, shoot))
	t.Cleanup(func() {
		_ = st.c.Delete(context.Background(), shoot)
		st.waitSettled(t)
	})
	// Denied once the webhook's cache has seen the Shoot (a dry run that
	// is still allowed deletes nothing).
	var err error
	eventually(t, 10*time.Second, func() error {
		if err = st.c.Delete(ctx, ns.DeepCopy(), client.DryRunAll); err == nil {
			return fmt.Errorf("deleting namespace %s (dry run) is allowed", ns.Name)
		}
		return nil
	})
	requireDenied(t, err, webhookNamespaces)
	assert.Contains(t, err.Error(), fmt.Sprintf(`deletion of namespace %q is not permitted: it still contains 1 Shoot(s)`, ns.Name))
	t.Logf("namespace with a Shoot: %v", err)

	err = st.c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: projectNamespace}}, client.DryRunAll)
	requireDenied(t, err, webhookNamespaces)
	assert.Contains(t, err.Error(), `it belongs to project "dev", which is not being deleted`)

	// The Shoot goes; the namespace, empty and no project's, may go too.
	require.NoError(t, st.c.Delete(ctx, shoot))
	eventually(t, 10*time.Second, func() error {
		return st.c.Delete(ctx, ns.DeepCopy(), client.DryRunAll)
	}, "the empty namespace still may not be deleted")
	require.NoError(t, st.c.Delete(ctx, ns.DeepCopy()))
	var got corev1.Namespace
	require.NoError(t, st.c.Get(ctx, keyOf("", ns.Name), &got))
	// No namespace controller runs here: it stays Terminating.
	assert.NotNil(t, got.DeletionTimestamp, "namespace %s is being deleted", ns.Name)
}

// TestSecondReplica: a second webhook process on the same cluster and Lease
// serves every webhook from its own synced cache while the first keeps the
// leadership (only the leader runs the retry controller); stopping it leaves
// the Lease alone.
func TestSecondReplica(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	ctx := context.Background()
	leaseKey := keyOf(seedwardenNamespace, "seedwarden-pending-shoots")

	var lease coordinationv1.Lease
	eventually(t, 20*time.Second, func() error {
		if err := st.c.Get(ctx, leaseKey, &lease); err != nil {
			return err
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return fmt.Errorf("Lease %s has no holder", leaseKey)
		}
		return nil
	}, "the first webhook holds no Lease")
	leader := *lease.Spec.HolderIdentity
	first, err := scrape(st.metricsURL())
	require.NoError(t, err)
	assert.Equal(t, 1.0, leaderStatus(first), "leader_election_master_status of the first webhook")

	var p ports
	for _, port := range []*int{&p.webhook, &p.metrics, &p.health} {
		*port, err = freePort()
		require.NoError(t, err)
	}
	cfg, _, err := webhookConfig(p, st.certDir, st.work)
	require.NoError(t, err)
	cfgPath := filepath.Join(st.work, "config-replica-2.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o644))
	logPath := filepath.Join(st.work, "webhook-replica-2.log")
	proc, err := st.startProcess(cfgPath, logPath)
	require.NoError(t, err)
	t.Cleanup(func() {
		if !proc.exited() {
			_ = proc.kill()
		}
		if t.Failed() {
			if lines, err := readLines(logPath, 0); err == nil {
				t.Logf("second replica's log:\n  | %s", strings.Join(lines, "\n  | "))
			}
		}
	})
	health := fmt.Sprintf("http://127.0.0.1:%d", p.health)
	eventually(t, 60*time.Second, func() error {
		if proc.exited() {
			return fmt.Errorf("second replica exited: %v", describeExit(proc.err))
		}
		if code, body := httpStatus(health + "/readyz"); code != http.StatusOK {
			return fmt.Errorf("/readyz: %d %s", code, body)
		}
		return nil
	}, "the second replica does not become ready")

	// It answers admissions from its own cache: a namespace deletion
	// (project namespace: denied) and a placement.
	hc, err := st.tlsClient(st.caBundle)
	require.NoError(t, err)
	base := fmt.Sprintf("https://127.0.0.1:%d", p.webhook)
	resp := review(t, hc, base+"/validate-namespace-deletion", &admissionv1.AdmissionRequest{
		UID:       "replica-2-ns",
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Namespace"},
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "namespaces"},
		Name:      projectNamespace,
		Operation: admissionv1.Delete,
		OldObject: k8sruntime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + projectNamespace + `"}}`)},
	})
	assert.False(t, resp.Allowed, "the second replica lets %s be deleted", projectNamespace)
	replicaShoot := newShoot(t.Name(), withName("e2e-replica-2"))
	resp = review(t, hc, base+"/mutate-shoots", shootCreate(t, "replica-2-shoot", replicaShoot))
	assert.True(t, resp.Allowed)
	assert.NotEmpty(t, patchedSeed(t, replicaShoot, resp.Patch), "the second replica places Shoots")

	// It waits for the Lease: past a few retry periods the first still holds it.
	time.Sleep(3 * time.Second)
	require.NoError(t, st.c.Get(ctx, leaseKey, &lease))
	assert.Equal(t, leader, deref(lease.Spec.HolderIdentity), "the Lease changed hands")
	second, err := scrape(fmt.Sprintf("http://127.0.0.1:%d/metrics", p.metrics))
	require.NoError(t, err)
	assert.Zero(t, leaderStatus(second), "the second replica reports itself leader")
	assert.Zero(t, counterSum(second, "seedwarden_pending_shoots", nil), "the second replica tracks pending Shoots")

	code, took, err := proc.terminate(15 * time.Second)
	require.NoError(t, err)
	assert.Equal(t, 0, code, "exit code of the second replica")
	t.Logf("second replica: ready, served, not leader; stopped in %s", took.Round(time.Millisecond))
	require.NoError(t, st.c.Get(ctx, leaseKey, &lease))
	assert.Equal(t, leader, deref(lease.Spec.HolderIdentity), "stopping a replica that does not lead leaves the Lease")
}

// TestCertificateRotation: while Shoots are being created, a new CA and
// serving certificate replace the old (CA bundle with both CAs first, as
// cert-manager's CA injector has it during a rotation; then the files,
// each replaced atomically). No request may fail, every Shoot must be
// placed (the mutating webhook fails open, so a TLS failure there would
// only show as a Shoot without seed), and the server must present the new
// certificate afterwards.
func TestCertificateRotation(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	ctx := context.Background()

	oldCA := st.caBundle
	oldLeaf, err := st.servedCertificate(st.webhookAddr())
	require.NoError(t, err)
	newDir := t.TempDir()
	require.NoError(t, certgen.Generate(newDir, servingHosts, time.Now()))
	newCA, err := os.ReadFile(filepath.Join(newDir, certgen.CAFile))
	require.NoError(t, err)
	newCertPEM, err := os.ReadFile(filepath.Join(newDir, certgen.CertFile))
	require.NoError(t, err)
	newKeyPEM, err := os.ReadFile(filepath.Join(newDir, certgen.KeyFile))
	require.NoError(t, err)
	blk, _ := pem.Decode(newCertPEM)
	require.NotNil(t, blk)
	newLeaf, err := x509.ParseCertificate(blk.Bytes)
	require.NoError(t, err)
	require.NotEqual(t, oldLeaf.Raw, newLeaf.Raw)

	before, err := st.apiserverMetrics(ctx)
	require.NoError(t, err)

	// Load: about 40 Shoot creations a second from 4 clients, at least 200,
	// and on until a second after the new certificate is served.
	const rate, minShoots, workers = 40, 200, 4
	var (
		rotatedAt atomic.Int64 // unix nanos when the new certificate was first served
		created   atomic.Int64
		mu        sync.Mutex
		failures  []string
		unplaced  []string
	)
	tokens := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(tokens)
		tick := time.NewTicker(time.Second / rate)
		defer tick.Stop()
		for n := 0; ; n++ {
			r := rotatedAt.Load()
			if n >= minShoots && r != 0 && time.Since(time.Unix(0, r)) > time.Second {
				return
			}
			if time.Since(start) > 40*time.Second {
				return
			}
			<-tick.C
			tokens <- struct{}{}
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range tokens {
				sh := newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"))
				cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
				err := st.c.Create(cctx, sh)
				cancel()
				mu.Lock()
				switch {
				case err != nil:
					failures = append(failures, fmt.Sprintf("%s: %v", time.Since(start).Round(time.Millisecond), err))
				case admittedSeed(sh) == "":
					unplaced = append(unplaced, fmt.Sprintf("%s: %s", time.Since(start).Round(time.Millisecond), sh.GetName()))
				default:
					created.Add(1)
				}
				mu.Unlock()
			}
		}()
	}

	// 1s in: the CA bundle holds both CAs.
	time.Sleep(time.Second)
	bundle := append(append([]byte{}, oldCA...), newCA...)
	require.NoError(t, st.setCABundle(ctx, bundle))
	bundleAt := time.Since(start)
	// 1s later (the API server has long picked up the bundle): new key and
	// certificate into the certificate directory.
	time.Sleep(time.Second)
	require.NoError(t, replaceFile(st.certDir, certgen.KeyFile, newKeyPEM))
	require.NoError(t, replaceFile(st.certDir, certgen.CertFile, newCertPEM))
	filesAt := time.Since(start)
	var servedAfter time.Duration
	err = poll(ctx, 20*time.Second, 20*time.Millisecond, func() error {
		leaf, err := st.servedCertificate(st.webhookAddr())
		if err != nil {
			return err
		}
		if !leaf.Equal(newLeaf) {
			return fmt.Errorf("still serving the certificate with serial %s", leaf.SerialNumber)
		}
		return nil
	})
	if err == nil {
		servedAfter = time.Since(start) - filesAt
		rotatedAt.Store(time.Now().UnixNano())
	}
	wg.Wait()
	require.NoError(t, err, "the server does not present the new certificate")
	elapsed := time.Since(start)

	mu.Lock()
	defer mu.Unlock()
	t.Logf("rotation: CA bundle (old+new) at %s, files replaced at %s, new certificate served %s later; %d Shoots created in %s, %d failed, %d unplaced",
		bundleAt.Round(time.Millisecond), filesAt.Round(time.Millisecond), servedAfter.Round(time.Millisecond),
		created.Load(), elapsed.Round(time.Millisecond), len(failures), len(unplaced))
	assert.Empty(t, failures, "failed Shoot creations during the rotation")
	assert.Empty(t, unplaced, "Shoots admitted without seed during the rotation (mutating webhook failed open)")
	assert.GreaterOrEqual(t, created.Load(), int64(minShoots))

	// The API server saw no webhook call fail.
	after, err := st.apiserverMetrics(ctx)
	require.NoError(t, err)
	ours := func(l map[string]string) bool { _, ok := st.registered[l["name"]]; return ok }
	failOpen := counterSum(after, "apiserver_admission_webhook_fail_open_count", ours) -
		counterSum(before, "apiserver_admission_webhook_fail_open_count", ours)
	assert.Zero(t, failOpen, "apiserver_admission_webhook_fail_open_count rose during the rotation")
	notOK := func(l map[string]string) bool { return ours(l) && l["code"] != "200" }
	errs := counterSum(after, "apiserver_admission_webhook_request_total", notOK) -
		counterSum(before, "apiserver_admission_webhook_request_total", notOK)
	assert.Zero(t, errs, "webhook calls answered other than 200 during the rotation")

	// The rotation completes: only the new CA remains, and Shoots are still placed.
	require.NoError(t, st.setCABundle(ctx, newCA))
	for i := 0; i < 10; i++ {
		sh := newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"))
		require.NoError(t, st.c.Create(ctx, sh))
		assert.NotEmpty(t, admittedSeed(sh), "placed with only the new CA in the bundle")
		time.Sleep(50 * time.Millisecond)
	}
}

// servedCertificate is the leaf certificate the webhook presents.
func (st *suite) servedCertificate(addr string) (*x509.Certificate, error) {
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, Certificates: st.clientCerts}) //nolint:gosec // only reads the certificate
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	certs := conn.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return nil, fmt.Errorf("no certificate presented")
	}
	return certs[0], nil
}

// replaceFile writes data to dir/name atomically (temporary file, rename).
func replaceFile(dir, name string, data []byte) error {
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}

// TestRestart: SIGTERM stops the webhook gracefully (exit 0 within seconds);
// started again, it reports ready only once its caches have synced, and
// places Shoots again.
func TestRestart(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	st.waitSettled(t)
	ctx := context.Background()

	code, took, err := st.process().terminate(15 * time.Second)
	require.NoError(t, err)
	t.Logf("SIGTERM: exited with %d after %s", code, took.Round(time.Millisecond))
	assert.Equal(t, 0, code, "exit code after SIGTERM")
	assert.Less(t, took, 5*time.Second, "graceful shutdown took too long")

	// While it is down, the failure policies of deploy/manifests apply.
	sh := newShoot(t.Name())
	err = st.c.Create(ctx, sh)
	if failClosed := st.failClosedShootWebhooks(); len(failClosed) > 0 {
		assert.Error(t, err, "with the webhook down, %v (failurePolicy Fail) must refuse Shoots", failClosed)
		t.Logf("webhook down: Shoot refused: %.300v", err)
	} else {
		require.NoError(t, err, "with the webhook down, the mutating webhook (failurePolicy Ignore) admits")
		assert.Empty(t, admittedSeed(sh))
	}

	held := st.proxy != nil
	if held {
		// The webhook's reads of Gardener objects wait at the proxy: its
		// caches cannot sync until Release.
		st.proxy.Hold()
		defer st.proxy.Release()
	}
	restarted := time.Now()
	require.NoError(t, st.startWebhook())
	p := st.process()

	eventually(t, 30*time.Second, func() error {
		if p.exited() {
			return fmt.Errorf("webhook exited: %v", describeExit(p.err))
		}
		if code, body := httpStatus(st.healthURL("/healthz")); code != http.StatusOK {
			return fmt.Errorf("/healthz: %d %s", code, body)
		}
		return nil
	}, "the restarted webhook does not answer /healthz")

	if held {
		eventually(t, 10*time.Second, func() error {
			if st.proxy.Held() == 0 {
				return fmt.Errorf("no request of the webhook is held at the proxy yet")
			}
			return nil
		})
		// Up and serving, caches not synced: not ready, for as long as that lasts.
		notReadyUntil := time.Now().Add(time.Second)
		var polls int
		for time.Now().Before(notReadyUntil) {
			code, body := httpStatus(st.healthURL("/readyz"))
			require.NotEqual(t, http.StatusOK, code, "/readyz is 200 while the webhook's caches cannot have synced: %s", body)
			polls++
			time.Sleep(50 * time.Millisecond)
		}
		code, body := httpStatus(st.healthURL("/readyz?verbose"))
		t.Logf("caches held back: /readyz answered %d in %d polls over 1s; last:\n%s", code, polls, strings.TrimSpace(body))
		st.proxy.Release()
	}

	// Ready exactly when synced: the first 200 must come with a full cache.
	var readyAfter time.Duration
	eventually(t, 60*time.Second, func() error {
		if p.exited() {
			return fmt.Errorf("webhook exited: %v", describeExit(p.err))
		}
		code, body := httpStatus(st.healthURL("/readyz"))
		if code != http.StatusOK {
			return fmt.Errorf("/readyz: %d %s", code, body)
		}
		readyAfter = time.Since(restarted)
		return nil
	}, "the restarted webhook does not become ready")
	require.NoError(t, st.cacheMatches(ctx), "ready, but the cache is not synced")
	t.Logf("restarted webhook ready %s after start", readyAfter.Round(time.Millisecond))

	// And it places again.
	placed := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1b"))
	want := st.simulate(t, placed)
	require.NoError(t, st.c.Create(ctx, placed))
	assert.Equal(t, want.Seed, admittedSeed(placed))
	assert.Equal(t, want.Seed, st.placedSeed(t, placed))
}

// failClosedShootWebhooks are the registered webhooks with failurePolicy
// Fail that see Shoot CREATE.
func (st *suite) failClosedShootWebhooks() []string {
	var out []string
	for _, n := range []string{webhookBinding, webhookCapacity, webhookSize} {
		if _, ok := st.registered[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// TestCapacityAcrossReplicas: three webhook processes behind one address (a
// round-robin TCP load balancer standing in for the Service), all reserving
// seed capacity through the API server (capacity.coordination apiserver).
// Four seeds with 25 free places each, 300 concurrent Shoot CREATEs that only
// these seeds can take: at most 25 Shoots per seed, 100 in all, end up with
// spec.seedName on them, counted from the API server. The rest are denied
// by the capacity webhook or admitted without a seed (a replica's mutating
// webhook saw the seeds full). Then the single-replica registration is
// restored.
func TestCapacityAcrossReplicas(t *testing.T) {
	st := need(t)
	st.requireWebhook(t, webhookPlace, webhookCapacity)
	if b, err := os.ReadFile(st.configPath); err != nil || !strings.Contains(string(b), "coordination: apiserver") {
		t.Fatalf("the webhook does not reserve through the API server (capacity.coordination in %s): %v", st.configPath, err)
	}
	st.logOnFailure(t)
	st.cleanupShoots(t)
	st.waitSettled(t)
	ctx := context.Background()
	began := time.Now()

	const (
		seeds    = 4
		perSeed  = 25
		requests = 300
		label    = "e2e.seedwarden.io/capacity-test"
	)

	// Two more replicas, each with its own ports and a certificate of its
	// own CA; the main one keeps its certificate.
	ca, err := newReplicaCA()
	require.NoError(t, err)
	extra := []*replica{st.startReplica(t, "replica-2", ca), st.startReplica(t, "replica-3", ca)}

	// Seeds that only this test's Shoots select (spec.seedSelector), copies
	// of aws-eu2 with room for 25 Shoots each.
	sizes := map[string]int64{}
	var seedNames []string
	for i := range seeds {
		name := fmt.Sprintf("e2e-capacity-%d", i)
		seedNames = append(seedNames, name)
		sizes[name] = perSeed
	}
	st.createSeedsLike(t, "aws-eu2", label, sizes)

	for _, r := range extra {
		require.NoError(t, waitReplicaReady(r, 60*time.Second))
	}
	// Every replica must know the new seeds before the load (the extra
	// replicas were starting while they were created): each one's metrics
	// list them.
	for _, url := range []string{st.metricsURL(), extra[0].metricsURL(), extra[1].metricsURL()} {
		eventually(t, 10*time.Second, func() error { return knowsSeeds(url, sizes) })
	}
	startedIn := time.Since(began)

	// One address for the three, like a Service; the CA bundle trusts both CAs.
	lb, err := startRoundRobin([]string{st.webhookAddr(), extra[0].webhookAddr(), extra[1].webhookAddr()})
	require.NoError(t, err)
	restore := st.routeWebhooks(t, lb.Addr(), append(slices.Clone(st.caBundle), ca.CertPEM...), func() error {
		if conns := lb.Connections(); slices.Min(conns) == 0 {
			// A dry run makes two webhook calls in parallel at most, over
			// kept-alive connections: concurrent ones open more, until
			// every replica has one.
			st.concurrentDryRuns(t, 4)
			return fmt.Errorf("connections per replica through the load balancer: %v", conns)
		}
		return nil
	})
	defer lb.Close()

	before := make([]float64, 3)
	urls := []string{st.metricsURL(), extra[0].metricsURL(), extra[1].metricsURL()}
	webhookRequests := func(url string) float64 {
		samples, err := scrape(url)
		require.NoError(t, err)
		return counterSum(samples, "controller_runtime_webhook_requests_total", nil)
	}
	for i, u := range urls {
		before[i] = webhookRequests(u)
	}

	// The load: 300 CREATEs at once (through a client that collects the
	// unschedulable warnings instead of logging them).
	c, _ := st.clientAs(t, "")
	type result struct {
		took time.Duration
		seed string
		err  error
	}
	results := make([]result, requests)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Named, as Shoots are in practice: the mutating webhook can then
			// reserve the place across replicas under the key the capacity
			// webhook uses (with generateName only it could not).
			sh := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), func(u *unstructured.Unstructured) {
				must(unstructured.SetNestedStringMap(u.Object, map[string]string{label: "true"}, "spec", "seedSelector", "matchLabels"))
				u.SetGenerateName("")
				u.SetName(fmt.Sprintf("e2e-capacity-%03d", i))
			})
			<-gate
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			t0 := time.Now()
			err := c.Create(cctx, sh)
			results[i] = result{took: time.Since(t0), seed: admittedSeed(sh), err: err}
		}()
	}
	burst := time.Now()
	close(gate)
	wg.Wait()
	wall := time.Since(burst)

	var placed, unplaced, denied int
	var other []string
	var lat []time.Duration
	perSeedAdmitted := map[string]int{}
	for _, r := range results {
		lat = append(lat, r.took)
		switch {
		case r.err != nil && strings.Contains(r.err.Error(), fmt.Sprintf("admission webhook %q denied the request", webhookCapacity)):
			denied++
		case r.err != nil:
			other = append(other, r.err.Error())
		case r.seed == "":
			unplaced++
		default:
			placed++
			perSeedAdmitted[r.seed]++
		}
	}
	slices.Sort(lat)
	q := func(p float64) time.Duration {
		return lat[min(len(lat)-1, int(p*float64(len(lat))))].Round(time.Millisecond)
	}

	// What the API server holds, after the retry controller (the leader)
	// has had a moment for the Shoots admitted without a seed.
	count := func() (map[string]int, int) {
		var list api.ShootList
		require.NoError(t, st.c.List(ctx, &list, client.InNamespace(projectNamespace), client.MatchingLabels{testLabel: labelValue(t.Name())}))
		on, total := map[string]int{}, 0
		for _, sh := range list.Items {
			if sh.Spec.SeedName != nil && slices.Contains(seedNames, *sh.Spec.SeedName) {
				on[*sh.Spec.SeedName]++
				total++
			}
		}
		return on, total
	}
	onSeeds, total := count()
	if bindingMode() {
		// The announced Shoots are bound by the leader's retry controller,
		// one reconcile each. The mutating webhooks reserved each announced
		// place across replicas, so no more were announced than fit. Wait
		// until every announced Shoot is bound: well within one
		// pendingShoots.backoffBase (30s), so no announced Shoot may need a
		// second, backed-off attempt (the leader retries an announced seed
		// that looks full in its own view shortly, not after a backoff).
		want := min(placed, seeds*perSeed)
		eventually(t, 30*time.Second, func() error {
			if onSeeds, total = count(); total < want {
				return fmt.Errorf("%d of the %d announced Shoots bound (%d places)", total, placed, seeds*perSeed)
			}
			return nil
		}, "the retry controller does not bind the announced Shoots")
		t.Logf("announced Shoots bound %s after the burst: %d of %d announced (%d announced beyond the places, left pending)",
			(time.Since(burst) - wall).Round(time.Millisecond), total, placed, placed-total)
	}
	time.Sleep(2 * time.Second)
	onSeedsLater, totalLater := count()

	served := make([]float64, 3)
	var conflicts float64
	for i, u := range urls {
		served[i] = webhookRequests(u) - before[i]
		samples, err := scrape(u)
		require.NoError(t, err)
		conflicts += counterSum(samples, "seedwarden_capacity_reservation_conflicts_total", nil)
	}

	t.Logf("3 replicas, %d seeds x %d free places, %d concurrent Shoot CREATEs in %s: %d admitted onto (mode binding: announced for) a seed, %d denied (seed full), %d admitted without a seed, %d other errors",
		seeds, perSeed, requests, wall.Round(time.Millisecond), placed, denied, unplaced, len(other))
	t.Logf("create latency: p50 %s, p90 %s, p99 %s, max %s", q(.5), q(.9), q(.99), lat[len(lat)-1].Round(time.Millisecond))
	t.Logf("on the seeds (API server): %d %v right after the burst, %d %v 2s later (the retry controller binds what fits)", total, onSeeds, totalLater, onSeedsLater)
	t.Logf("webhook requests served per replica: %v; connections through the load balancer: %v; reservation conflicts between replicas: %.0f",
		served, lb.Connections(), conflicts)
	t.Logf("replicas ready in %s", startedIn.Round(time.Millisecond))
	fmt.Printf("e2e: capacity across 3 replicas: %d/%d placed (at most %d), %d denied, %d unplaced; create p50 %s p99 %s\n",
		totalLater, requests, seeds*perSeed, denied, unplaced, q(.5), q(.99))

	for _, on := range []map[string]int{onSeeds, onSeedsLater} {
		for seed, n := range on {
			assert.LessOrEqual(t, n, perSeed, "seed %s overfilled", seed)
		}
	}
	assert.LessOrEqual(t, total, seeds*perSeed)
	assert.LessOrEqual(t, placed, seeds*perSeed, "more Shoots placed (or announced) than the seeds have places")
	assert.LessOrEqual(t, totalLater, seeds*perSeed)
	assert.Equal(t, requests, placed+denied+unplaced+len(other))
	if !bindingMode() {
		assert.GreaterOrEqual(t, total, placed, "Shoots admitted onto a seed that the API server does not hold there")
	}
	// The mutating webhooks reserve across replicas before they answer, so
	// the capacity webhook refuses one of their placements only when its
	// CREATE took longer than reservationTTL (5s here) and the place lapsed
	// meanwhile; on an idle machine none is refused. The Shoots beyond the
	// places are admitted without a seed instead.
	if denied > 0 {
		t.Logf("%d placements refused by the capacity webhook (CREATE p99 %s, reservationTTL 5s)", denied, q(.99))
	}
	assert.Empty(t, other, "requests that failed other than by a capacity denial")
	for i, n := range served {
		assert.Positive(t, n, "replica %d served no webhook request", i+1)
	}

	restore()
	assert.Less(t, time.Since(began), 60*time.Second, "the test took too long")
}

// TestAdmissionLatency records what the API server measured for our
// webhooks (apiserver_admission_webhook_admission_duration_seconds), and the
// webhook's own decision time. Run last: it summarises the whole suite.
func TestAdmissionLatency(t *testing.T) {
	st := need(t)
	ctx := context.Background()
	samples, err := st.apiserverMetrics(ctx)
	require.NoError(t, err)

	type key struct{ name, typ, op, rejected string }
	sums, counts := map[key]float64{}, map[key]float64{}
	for _, smp := range samples {
		if _, ok := st.registered[smp.labels["name"]]; !ok {
			continue
		}
		k := key{smp.labels["name"], smp.labels["type"], smp.labels["operation"], smp.labels["rejected"]}
		switch smp.name {
		case "apiserver_admission_webhook_admission_duration_seconds_sum":
			sums[k] += smp.value
		case "apiserver_admission_webhook_admission_duration_seconds_count":
			counts[k] += smp.value
		}
	}
	require.NotEmpty(t, counts, "no apiserver_admission_webhook_admission_duration_seconds for our webhooks")
	keys := make([]key, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return fmt.Sprint(a) < fmt.Sprint(b)
	})
	var b strings.Builder
	fmt.Fprintf(&b, "apiserver_admission_webhook_admission_duration_seconds (as the API server measured it):\n")
	fmt.Fprintf(&b, "  %-32s %-10s %-9s %-8s %7s %10s %12s\n", "webhook", "type", "operation", "rejected", "count", "sum (s)", "mean")
	for _, k := range keys {
		n := counts[k]
		mean := time.Duration(sums[k] / n * float64(time.Second))
		fmt.Fprintf(&b, "  %-32s %-10s %-9s %-8s %7.0f %10.3f %12s\n", k.name, k.typ, k.op, k.rejected, n, sums[k], mean.Round(time.Microsecond))
	}
	if own, err := scrape(st.metricsURL()); err == nil {
		sum := counterSum(own, metrics.DurationName+"_sum", nil)
		n := counterSum(own, metrics.DurationName+"_count", nil)
		if n > 0 {
			fmt.Fprintf(&b, "%s (the webhook's own decision time, since its last start): %0.f decisions, mean %s\n",
				metrics.DurationName, n, time.Duration(sum/n*float64(time.Second)).Round(time.Microsecond))
		}
	}
	t.Log(b.String())
	fmt.Print(b.String())
}
