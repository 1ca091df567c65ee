package handlers

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"

	"github.com/seedwarden/seedwarden/internal/metrics"
)

// Observed counts every answer of the kubeconfig Secret and
// namespace-deletion validators under the webhook's name, as it does the
// Shoot validators'.
func TestKubeconfigAndNamespaceValidatorMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)

	ks := Observed(WebhookKubeconfigSecret, m, ksValidator(t))
	ksServe(t, ks, ksReview{object: ksSecretJSON(map[string]string{"kubeconfig": ksKubeconfig("", "    tokenFile: /t\n")}, "")}.body())
	ksServe(t, ks, ksReview{object: ksSecretJSON(map[string]string{"token": "abc"}, "")}.body())
	ksServe(t, ks, ndDelete("x")) // not a Secret: error

	store := ndStore(map[string]int{"garden-dev": 1})
	nd := Observed(WebhookNamespaceDeletion, m, ndValidator(t, store))
	ksServe(t, nd, ndDelete("garden-dev"))
	ksServe(t, nd, ndDelete("garden-empty"))

	for _, tc := range []struct {
		webhook, result string
		want            float64
	}{
		{WebhookKubeconfigSecret, metrics.ValidationDenied, 1},
		{WebhookKubeconfigSecret, metrics.ValidationAllowed, 1},
		{WebhookKubeconfigSecret, metrics.ValidationError, 1},
		{WebhookNamespaceDeletion, metrics.ValidationDenied, 1},
		{WebhookNamespaceDeletion, metrics.ValidationAllowed, 1},
	} {
		assert.Equal(t, tc.want, vCounter(t, reg, metrics.ValidationsTotalName, map[string]string{"webhook": tc.webhook, "result": tc.result}), "%s %s", tc.webhook, tc.result)
	}
	assert.Equal(t, "kubeconfig-secret", WebhookKubeconfigSecret, "a label value dashboards use")
	assert.Equal(t, "namespace-deletion", WebhookNamespaceDeletion, "a label value dashboards use")
}
