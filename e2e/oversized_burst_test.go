package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

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
// capacity webhooks, which then see the seed), past the request budget's
// 3 MiB for large requests; the size webhook measures what the budget does
// not hold as it arrives, so each CREATE is denied and none is stored.
// The burst runs twice: as it comes, and while two stalled connections
// (what a client without client authentication could do, or a burst on a
// slower machine) keep the budget's large share taken throughout, which
// made every size review fail open before. On the CRD target the API
// server counts no fail-open call of the size webhook. (A user who may
// bind, so that in mode patch the placed CREATE passes the ShootValidator
// emulation and a webhook refuses it.)
func TestOversizedBurstStoresNone(t *testing.T) {
	st := need(t)
	st.requireWebhook(t, webhookShootSize)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	_, op := st.projectUsers(t)
	test := t.Name() // the label of the Shoots, which cleanupShoots deletes
	t.Run("burst", func(t *testing.T) { st.oversizedBurst(t, test, op) })
	t.Run("burst while the budget is held", func(t *testing.T) {
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		for range 2 {
			go st.keepStalled(ctx, 1_500_000)
		}
		require.Eventually(t, func() bool {
			samples, err := scrape(st.metricsURL())
			return err == nil && counterSum(samples, "seedwarden_webhook_request_bytes_in_flight", func(map[string]string) bool { return true }) >= 3_000_000
		}, 10*time.Second, 20*time.Millisecond, "the stalled connections hold the budget")
		st.oversizedBurst(t, test, op)
	})
}

// oversizedBurst sends the burst as op, the Shoots labelled for test, and
// checks that none is stored.
func (st *suite) oversizedBurst(t *testing.T, test string, op projectUser) {
	ctx := context.Background()
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
	start := time.Now()
	for i := range burst {
		// us-east-1 goes to aws-us1, which has no capacity limit: the
		// reservations of refused CREATEs disturb no other test.
		sh := newShoot(test, awsShoot("us-east-1", "us-east-1a"), withProviderConfigPadding(1_200_000))
		wg.Go(func() { errs[i] = op.c.Create(ctx, sh) })
	}
	wg.Wait()
	took := time.Since(start)

	byWebhook := map[string]int{}
	for i, err := range errs {
		if !assert.Error(t, err, "CREATE %d was admitted", i) {
			continue
		}
		denied := ""
		for _, w := range []string{webhookShootSize, webhookSeed} {
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
	t.Logf("burst of %d in %s; denials by webhook: %v; first: %.300s", burst, took.Round(time.Millisecond), byWebhook, errs[0])
	assert.Positive(t, byWebhook[webhookShootSize], "the size webhook judged the burst")

	var stored unstructured.UnstructuredList
	stored.SetGroupVersionKind(shootGVK.GroupVersion().WithKind("ShootList"))
	require.NoError(t, st.c.List(ctx, &stored, client.InNamespace(projectNamespace), client.MatchingLabels{testLabel: labelValue(test)}))
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
		byCode := map[string]float64{}
		for _, smp := range after {
			if smp.name == "apiserver_admission_webhook_request_total" && is(smp.labels) {
				byCode[smp.labels["code"]] += smp.value
			}
		}
		for _, smp := range before {
			if smp.name == "apiserver_admission_webhook_request_total" && is(smp.labels) {
				byCode[smp.labels["code"]] -= smp.value
			}
		}
		took := counterSum(after, "apiserver_admission_webhook_admission_duration_seconds_sum", is) - counterSum(before, "apiserver_admission_webhook_admission_duration_seconds_sum", is)
		t.Logf("%s: %v calls failed open; calls by HTTP status: %v; %.3f s per call on average", w, failOpen, byCode, took/float64(burst))
		if w == webhookShootSize {
			assert.Zero(t, failOpen, "the size webhook failed open")
		}
	}
}

// keepStalled keeps one connection to the webhook that has sent the
// headers of a review of n bytes to the kubeconfig-Secret path (which the
// request budget holds) and nothing more, opening another when the server
// cuts it off (server.readTimeout), until ctx ends.
func (st *suite) keepStalled(ctx context.Context, n int) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(st.caBundle)
	for ctx.Err() == nil {
		conn, err := tls.Dial("tcp", st.webhookAddr(), &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12, Certificates: st.clientCerts})
		if err != nil {
			return // the test sees the budget not held
		}
		_, err = fmt.Fprintf(conn, "POST /validate-kubeconfig-secret HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", st.webhookAddr(), n)
		if err == nil {
			go func() { <-ctx.Done(); _ = conn.Close() }()
			_, _ = io.Copy(io.Discard, conn) // until the server answers and closes it
		}
		_ = conn.Close()
	}
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
