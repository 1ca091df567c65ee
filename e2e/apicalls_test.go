package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/config"
)

// apiCallBudget bounds what one placed Shoot costs the API servers, by
// target and placement mode, so that the count cannot grow unnoticed:
// seedwarden's own API requests (its client's rest_client_requests_total)
// and the API server's calls of seedwarden's webhooks for the CREATE and the
// bind. Measured with TestAPICallsPerPlacedShoot (one replica, a seed with a
// capacity limit), with a quarter of a call per Shoot of headroom for a
// retried bind and half a request for the leader's lease renewals. The
// webhook calls are counted by the API server on the CRD target and, since
// gardener-apiserver's metrics are out of reach, as seedwarden's webhook
// server answered them on the gardener target.
var apiCallBudget = map[string]map[string]struct{ requests, webhookCalls float64 }{
	targetCRD: {
		// The Shoots have only generateName, so the mutating webhook
		// reserves nothing across replicas; the retry controller does,
		// before it binds: a PUT of the reservation ConfigMap decided on
		// the copy it last wrote (a GET on first use, or after another
		// replica wrote). Then the PATCH of spec.seedName (no
		// shoots/binding on CRDs), decided from the watch's copy of the
		// Shoot (no GET), and the event. Webhooks: place, size (CREATE);
		// none for the bind, which the controller checked itself
		// (matchCondition not-seedwardens-own-bind). Measured 3.10.
		config.PlacementViaBinding: {requests: 3.5, webhookCalls: 2.25},
		// Admission: the PUT of the ConfigMap; the success event.
		// Webhooks: place, seed (binding and capacity in one call), size
		// (CREATE). Measured 2.05.
		config.PlacementViaPatch: {requests: 2.5, webhookCalls: 3.25},
	},
	targetGardener: {
		// As on the CRD target; the bind is a PATCH of shoots/binding.
		config.PlacementViaBinding: {requests: 3.5, webhookCalls: 2.25},
		config.PlacementViaPatch:   {requests: 2.5, webhookCalls: 3.25},
	},
}

// TestAPICallsPerPlacedShoot counts, per placed Shoot, seedwarden's API
// requests: for Shoots placed one at a time (by method, and the calls of
// each of seedwarden's webhooks, within apiCallBudget), and for one user's
// burst onto seeds with a capacity limit (apiCallsInBurst: by method and
// resource, within burstRequestsPerShoot, capacity never exceeded).
func TestAPICallsPerPlacedShoot(t *testing.T) {
	st := need(t)
	st.requireWebhook(t, webhookPlace)
	st.logOnFailure(t)
	st.waitSettled(t)
	t.Run("one at a time", func(t *testing.T) { apiCallsOneAtATime(t, st) })
	t.Run("single-user burst", func(t *testing.T) { apiCallsInBurst(t, st) })
}

// apiCallsOneAtATime places Shoots with generateName one at a time.
func apiCallsOneAtATime(t *testing.T, st *suite) {
	st.cleanupShoots(t)
	ctx := context.Background()
	const (
		shoots = 20
		label  = "e2e.seedwarden.io/api-calls-test"
		seed   = "e2e-api-calls"
	)
	// A seed with a capacity limit, as production seeds have: its places
	// are reserved across replicas.
	sizes := map[string]int64{seed: 100}
	st.createSeedLike(t, "aws-eu2", seed, map[string]string{label: "true"}, 100)
	eventually(t, 10*time.Second, func() error { return knowsSeeds(st.metricsURL(), sizes) })

	requests := func() map[string]float64 {
		samples, err := scrape(st.metricsURL())
		require.NoError(t, err)
		out := map[string]float64{}
		for _, smp := range samples {
			if smp.name == "rest_client_requests_total" {
				out[smp.labels["method"]] += smp.value
			}
		}
		return out
	}
	webhookCalls := func() map[string]float64 {
		out := map[string]float64{}
		if onGardener() {
			// gardener-apiserver's metrics are out of reach: the calls
			// seedwarden's webhook server answered, by path.
			samples, err := scrape(st.metricsURL())
			require.NoError(t, err)
			for _, smp := range samples {
				if smp.name == "controller_runtime_webhook_requests_total" {
					out[smp.labels["webhook"]] += smp.value
				}
			}
			return out
		}
		samples, err := st.apiserverMetrics(ctx)
		require.NoError(t, err)
		for _, smp := range samples {
			if _, ours := st.registered[smp.labels["name"]]; ours && smp.name == "apiserver_admission_webhook_admission_duration_seconds_count" {
				out[smp.labels["name"]+" "+smp.labels["operation"]] += smp.value
			}
		}
		return out
	}

	reqBefore, callsBefore := requests(), webhookCalls()
	began := time.Now()
	for i := range shoots {
		sh := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), withSeedSelector(label))
		require.NoError(t, st.c.Create(ctx, sh), "Shoot %d", i)
		key := client.ObjectKeyFromObject(sh)
		eventually(t, bindTimeout, func() error {
			if seedNameOf(t, key) == "" {
				return fmt.Errorf("%s not placed yet", key)
			}
			return nil
		})
	}
	took := time.Since(began)
	// The retry controller's event and the last watch updates settle.
	time.Sleep(time.Second)
	reqAfter, callsAfter := requests(), webhookCalls()

	perShoot := func(before, after map[string]float64) (map[string]float64, float64) {
		out, total := map[string]float64{}, 0.0
		for k, v := range after {
			if d := v - before[k]; d > 0 {
				out[k] = d / shoots
				total += d / shoots
			}
		}
		return out, total
	}
	reqs, reqTotal := perShoot(reqBefore, reqAfter)
	calls, callTotal := perShoot(callsBefore, callsAfter)
	t.Logf("placement mode %s, %d Shoots placed one at a time in %s; per placed Shoot:", placementMode, shoots, took.Round(time.Millisecond))
	t.Logf("  seedwarden's API requests: %.2f (%s)", reqTotal, formatCounts(reqs))
	t.Logf("  webhook calls by the API server: %.2f (%s)", callTotal, formatCounts(calls))

	budget, ok := apiCallBudget[gardenTarget][placementMode]
	require.True(t, ok, "no budget for target %s, mode %s", gardenTarget, placementMode)
	assert.LessOrEqual(t, reqTotal, budget.requests, "seedwarden's API requests per placed Shoot")
	assert.LessOrEqual(t, callTotal, budget.webhookCalls, "webhook calls per placed Shoot")
}

// formatCounts lists counts in key order.
func formatCounts(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %.2f", k, m[k])
	}
	return strings.Join(parts, ", ")
}
