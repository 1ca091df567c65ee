package handlers

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/seedwarden/seedwarden/internal/metrics"
)

// 2,000 forged reviews, each with a kind and namespace of
// its own, used to add 2,000 series to seedwarden_rejected_resources_total.
// Request-derived label values are now bounded.
func TestRejectedResourceLabelsAreBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	v := newSizeValidator(vLog(t), "block", reg)
	gvrConfigMaps := metaGVR("", "v1", "configmaps")
	for i := range 2000 {
		kind := fmt.Sprintf("Forged%d", i)
		r := vReview{kind: gvkFor(gvrConfigMaps, kind), resource: gvrConfigMaps, operation: admissionv1.Create,
			object: sized(t, kind, "obj", 200), name: "obj", namespace: fmt.Sprintf("ns-%d", i)}
		if i%2 == 1 {
			r.operation = admissionv1.Update
		}
		resp := vServe(t, v, r.body(t))
		require.False(t, resp.Allowed)
	}
	families, err := reg.Gather()
	require.NoError(t, err)
	values := map[string]map[string]bool{"operation": {}, "kind": {}, metrics.RejectedNamespaceLabel: {}}
	var total float64
	for _, f := range families {
		if f.GetName() != metrics.RejectedResourcesTotalName {
			continue
		}
		for _, m := range f.GetMetric() {
			total += m.GetCounter().GetValue()
			for _, l := range m.GetLabel() {
				if vals, ok := values[l.GetName()]; ok {
					vals[l.GetValue()] = true
				}
			}
		}
	}
	assert.Equal(t, float64(2000), total, "every rejection still counted")
	assert.Len(t, values["kind"], metrics.MaxRejectedKinds+1, "the first kinds, then other")
	assert.Len(t, values[metrics.RejectedNamespaceLabel], metrics.MaxRejectedNamespaces+1)
	// Only CREATE and UPDATE are measured, so operation is bounded already.
	assert.Equal(t, map[string]bool{"CREATE": true, "UPDATE": true}, values["operation"])
}
