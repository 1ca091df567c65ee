package autoscaler

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedscale"
)

// A metric more seeds would not help names why in words and by the reason
// code a pending Shoot carries.
func TestMetricStatusesCarryTheReasonCode(t *testing.T) {
	got := metricStatuses([]seedscale.MetricResult{{Type: "Headroom", Name: "small", Current: "0 more Shoots placeable", Replicas: 3,
		WouldNotHelp: "shoot does not tolerate the seed's taints", WouldNotHelpCode: placement.TaintNotTolerated}})
	assert.Equal(t, []autoscalingapi.MetricStatus{{Type: "Headroom", Name: "small", Current: "0 more Shoots placeable", DesiredReplicas: 3,
		Reason: "shoot does not tolerate the seed's taints", ReasonCode: "TaintNotTolerated"}}, got)
}
