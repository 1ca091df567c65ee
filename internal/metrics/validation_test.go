package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestObserveValidationAndRejections(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg)
	m.ObserveValidation("binding", ValidationAllowed)
	m.ObserveValidation("binding", ValidationDenied)
	m.ObserveValidation("binding", ValidationDenied)
	m.ObserveValidation("capacity", ValidationError)
	m.ObserveRejectedResource("CREATE", "Shoot", "garden-dev", RejectReasonSize)
	m.ObserveRejectedResource("CREATE", "Seed", "", RejectReasonCount)

	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP seedwarden_validations_total Admissions handled by the validating webhooks, by webhook (binding, capacity, resource-size) and result (allowed, denied, error).
# TYPE seedwarden_validations_total counter
seedwarden_validations_total{result="allowed",webhook="binding"} 1
seedwarden_validations_total{result="denied",webhook="binding"} 2
seedwarden_validations_total{result="error",webhook="capacity"} 1
# HELP seedwarden_rejected_resources_total Writes the resource-size webhook rejected, or would have rejected under enforcement warn or dryrun (operationMode log), by operation, kind, resource_namespace (the object's namespace) and reason (size, count).
# TYPE seedwarden_rejected_resources_total counter
seedwarden_rejected_resources_total{kind="Seed",operation="CREATE",reason="count",resource_namespace=""} 1
seedwarden_rejected_resources_total{kind="Shoot",operation="CREATE",reason="size",resource_namespace="garden-dev"} 1
`), ValidationsTotalName, RejectedResourcesTotalName))

	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems)

	var nilMetrics *Recorder
	assert.NotPanics(t, func() {
		nilMetrics.ObserveValidation("binding", ValidationAllowed)
		nilMetrics.ObserveRejectedResource("CREATE", "Shoot", "", RejectReasonSize)
		New(nil).ObserveRejectedResource("CREATE", "Shoot", "", RejectReasonSize)
	})
}
