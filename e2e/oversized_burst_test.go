package e2e

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// withProviderConfigPadding pads spec.provider.infrastructureConfig, which
// both targets keep as sent (a RawExtension in Gardener's Shoot, a field
// the CRD preserves), with a string of n bytes.
func withProviderConfigPadding(n int) shootOpt {
	return func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedMap(u.Object, map[string]any{
			"apiVersion": "aws.provider.extensions.gardener.cloud/v1alpha1",
			"kind":       "InfrastructureConfig",
			"padding":    strings.Repeat("p", n),
		}, "spec", "provider", "infrastructureConfig")
	}
}

// TestOversizedBurstStoresNone: a tenant's burst of 16 concurrent CREATEs of
// 1.2 MB Shoots against the 8 KiB limit. Every review is 1.2 MB on the
// mutating and the size webhook (and in mode patch on the binding and
// capacity webhooks, which then see the seed), far past the request
// budget's 3 MiB for large requests; the size webhook measures what the
// budget does not hold as it arrives, so each CREATE is denied and none is
// stored. On the CRD target the API server counts no fail-open call of the
// size webhook. (A user who may bind, so that in mode patch the placed
// CREATE passes the ShootValidator emulation and a webhook refuses it.)
func TestOversizedBurstStoresNone(t *testing.T) {
	st := need(t)
	st.requireWebhook(t, webhookShootSize)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	ctx := context.Background()
	_, op := st.projectUsers(t)
	logOffset := fileSize(st.logPath)

	var before []sample
	if !onGardener() {
		var err error
		before, err = st.apiserverMetrics(ctx)
		require.NoError(t, err)
	}

	const burst = 16
	errs := make([]error, burst)
	var wg sync.WaitGroup
	for i := range burst {
		// us-east-1 goes to aws-us1, which has no capacity limit: the
		// reservations of refused CREATEs disturb no other test.
		sh := newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"), withProviderConfigPadding(1_200_000))
		wg.Go(func() { errs[i] = op.c.Create(ctx, sh) })
	}
	wg.Wait()

	byWebhook := map[string]int{}
	for i, err := range errs {
		if !assert.Error(t, err, "CREATE %d was admitted", i) {
			continue
		}
		denied := ""
		for _, w := range []string{webhookShootSize, webhookBinding, webhookCapacity} {
			if strings.Contains(err.Error(), `admission webhook "`+w+`" denied the request`) {
				denied = w
			}
		}
		if !assert.NotEmpty(t, denied, "CREATE %d: not a denial by a validating webhook: %.300s", i, err) {
			continue
		}
		byWebhook[denied]++
		if denied == webhookShootSize {
			assert.ErrorContains(t, err, "exceeds the limit of 8Ki (8192 bytes)")
		}
	}
	t.Logf("denials by webhook: %v; first: %.300s", byWebhook, errs[0])
	assert.Positive(t, byWebhook[webhookShootSize], "the size webhook judged the burst")

	var stored unstructured.UnstructuredList
	stored.SetGroupVersionKind(shootGVK.GroupVersion().WithKind("ShootList"))
	require.NoError(t, st.c.List(ctx, &stored, client.InNamespace(projectNamespace), client.MatchingLabels{testLabel: labelValue(t.Name())}))
	assert.Empty(t, stored.Items, "oversized Shoots stored")

	if lines, err := readLines(st.logPath, logOffset); err == nil && strings.Contains(strings.Join(lines, "\n"), "leader election lost") {
		t.Log("the webhook's log says: leader election lost")
	}
	if onGardener() {
		return // gardener-apiserver calls the Shoot webhooks; its metrics are not reachable
	}
	after, err := st.apiserverMetrics(ctx)
	require.NoError(t, err)
	for _, w := range []string{webhookShootSize, webhookPlace} {
		is := func(l map[string]string) bool { return l["name"] == w }
		failOpen := counterSum(after, "apiserver_admission_webhook_fail_open_count", is) - counterSum(before, "apiserver_admission_webhook_fail_open_count", is)
		t.Logf("%s: %v calls failed open", w, failOpen)
		if w == webhookShootSize {
			assert.Zero(t, failOpen, "the size webhook failed open")
		}
	}
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
