package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/handlers"
)

// The validating webhooks' guards, as the API server calls them: who may
// choose a seed, full seeds, the size limit, which updates reach the Shoot
// guards at all, kubeconfig Secrets and namespace deletion.

// TestBindingRBAC: setting spec.seedName needs update on shoots/binding. A
// user who may create Shoots but not bind them cannot choose the seed, on
// CREATE or by an UPDATE (the ShootValidator emulation refuses first, the
// binding webhook would too); a user with the binding permission can. In
// placement mode binding, the webhook's own placement of that user's Shoot
// goes through (the retry controller binds it); mode patch cannot place it
// (TestPatchModeNeedsBindingPermission).
func TestBindingRBAC(t *testing.T) {
	st := need(t)
	st.requireWebhook(t, webhookSeed)
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
	requireDenied(t, err, webhookSeed, shootValidatorPolicyName)
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
	requireDenied(t, err, webhookSeed, shootValidatorPolicyName)
	t.Logf("developer setting spec.seedName by an update: %v", err)
}

// TestFullSeedRejectsManualPlacement: gcp-us1 of the example landscape holds
// 3 Shoots with allocatable 3; binding one more to it is denied (even for
// the admin, who may bind), while a seed with room takes it.
func TestFullSeedRejectsManualPlacement(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookSeed)
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
	requireDenied(t, err, webhookSeed)
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
	st.requireWebhook(t, webhookShootSize)
	if st.sizeLimit == nil {
		t.Fatal("no resource-size configuration field that internal/config accepts (see sizeLimitCandidates in e2e/webhook_config_test.go)")
	}
	st.logOnFailure(t)
	st.cleanupShoots(t)
	ctx := context.Background()

	// us-east-1 goes to aws-us1, which has no capacity limit: a reservation
	// left by the refused Shoot cannot disturb other tests.
	big := newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"), withName("e2e-oversized"),
		withAnnotation("e2e.seedwarden.io/padding", strings.Repeat("x", int(2*st.sizeLimit.limit))))
	err := st.c.Create(ctx, big)
	requireDenied(t, err, webhookShootSize)
	t.Logf("oversized Shoot: %.200s", err)
	assert.True(t, apierrors.IsNotFound(st.c.Get(ctx, client.ObjectKeyFromObject(big), &api.Shoot{})), "the Shoot must not exist")

	small := newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"),
		withAnnotation("e2e.seedwarden.io/padding", strings.Repeat("x", int(st.sizeLimit.limit/2))))
	require.NoError(t, st.c.Create(ctx, small), "a Shoot below the limit")
}

// TestSeedUnchangedUpdatesSkipShootGuards: the binding and capacity webhooks
// are only called for requests that can choose a seed (their
// matchConditions): an update that leaves spec.seedName alone does not reach
// them, one that changes it does (and is denied).
func TestSeedUnchangedUpdatesSkipShootGuards(t *testing.T) {
	st := need(t)
	st.requireWebhook(t, webhookSeed)
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
	requireDenied(t, err, webhookSeed)
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
