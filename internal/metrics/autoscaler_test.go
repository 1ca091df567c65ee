package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAutoscaler(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg, GroupAutoscaler)
	m.SetAutoscaler("garden", "aws", 3, 5, true)
	m.SetAutoscaler("garden", "gcp", 2, 2, false)
	m.CountAutoscalerScale("garden", "aws", ScaleUp)
	m.CountAutoscalerScale("garden", "gcp", ScaleDown)
	m.CountAutoscalerError("garden", "aws")
	m.SetAutoscalerNotReady("garden", "aws", 2)
	m.SetAutoscalerNotReady("garden", "gcp", 0)

	want := `
# HELP seedwarden_autoscaler_short 1 while the SeedAutoscaler is at maxReplicas and a metric is still not met, else 0.
# TYPE seedwarden_autoscaler_short gauge
seedwarden_autoscaler_short{autoscaler="aws",autoscaler_namespace="garden"} 1
seedwarden_autoscaler_short{autoscaler="gcp",autoscaler_namespace="garden"} 0
# HELP seedwarden_autoscaler_scales_total Changes of the scale target's replicas the SeedAutoscaler wrote, by direction (up, down).
# TYPE seedwarden_autoscaler_scales_total counter
seedwarden_autoscaler_scales_total{autoscaler="aws",autoscaler_namespace="garden",direction="up"} 1
seedwarden_autoscaler_scales_total{autoscaler="gcp",autoscaler_namespace="garden",direction="down"} 1
# HELP seedwarden_autoscaler_replicas_not_ready Replicas of the SeedAutoscaler's ManagedSeedSet asked for or registered and not ready past the provisioning time (spec.provisioningTimeout): they no longer count as room (status reason ReplicasNotReady).
# TYPE seedwarden_autoscaler_replicas_not_ready gauge
seedwarden_autoscaler_replicas_not_ready{autoscaler="aws",autoscaler_namespace="garden"} 2
seedwarden_autoscaler_replicas_not_ready{autoscaler="gcp",autoscaler_namespace="garden"} 0
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), AutoscalerShortName, AutoscalerScalesTotalName, AutoscalerReplicasNotReadyName))
	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems)

	// A deleted SeedAutoscaler leaves no series behind; the others stay.
	m.DeleteAutoscaler("garden", "aws")
	for _, c := range []prometheus.Collector{m.autoscaler.current, m.autoscaler.desired, m.autoscaler.short, m.autoscaler.late, m.autoscaler.scales} {
		assert.Equal(t, 1, testutil.CollectAndCount(c), "gcp's series only")
	}
	assert.Equal(t, 0, testutil.CollectAndCount(m.autoscaler.errors))

	var none *Recorder
	assert.NotPanics(t, func() {
		none.SetAutoscaler("a", "b", 1, 1, false)
		none.CountAutoscalerScale("a", "b", ScaleUp)
		none.CountAutoscalerError("a", "b")
		none.DeleteAutoscaler("a", "b")
	})
}

func TestAutoscalerGroupOnRequest(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	New(reg).SetAutoscaler("garden", "aws", 1, 1, false)
	n, err := testutil.GatherAndCount(reg, AutoscalerCurrentReplicasName)
	require.NoError(t, err)
	assert.Zero(t, n, "not registered without GroupAutoscaler")
}
