package autoscaler

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/seedscale"
)

func pendingShoots(n int) func() []*api.Shoot {
	out := make([]*api.Shoot, n)
	for i := range out {
		out[i] = shootObj(fmt.Sprintf("pending-%02d", i), "")
	}
	return func() []*api.Shoot { return out }
}

// Pending Shoots are scaled for in one step: the default policies (at
// most max(2 seeds, 50%) per 5 minutes) would take a set of 1 to 3, and
// four periods to 6.
func TestPendingShootsScaledForInOneStep(t *testing.T) {
	f := newFixture(t, newLandscape(t, 1, 10), nil, managedSeedSet(1), seedAutoscaler(1, 10))
	f.r.Pending = pendingShoots(45)
	sa, _, err := f.sync(t)
	require.NoError(t, err)
	assert.Equal(t, int32(6), f.replicas(t), sa.Status.Message)
	assert.Equal(t, ReasonScaledUp, sa.Status.Reason)
}

// Replicas asked for and not come after the provisioning time: the status
// says ReplicasNotReady with the set's counts, one warning, the gauge, and
// the set is not asked for more.
func TestReplicasNotReadyReported(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	sa := seedAutoscaler(1, 10)
	sa.Spec.Metrics[0].Resource.Target.AverageUtilization = ptr.To[int32](100)
	// The fixture's clock starts at 12:00.
	sa.Status.LastScaleTime = &metav1.Time{Time: time.Date(2026, 1, 1, 11, 40, 0, 0, time.UTC)}
	f := newFixture(t, newLandscape(t, 3, 10), metrics.New(reg, metrics.GroupAutoscaler), managedSeedSet(4), sa)
	f.r.Pending = pendingShoots(6)

	got, _, err := f.sync(t)
	require.NoError(t, err)
	assert.Equal(t, seedscale.ReasonSteady, got.Status.Reason, "20 minutes: the asked-for replica still counts")

	f.now = f.now.Add(11 * time.Minute)
	got, _, err = f.sync(t)
	require.NoError(t, err)
	assert.Equal(t, seedscale.ReasonReplicasNotReady, got.Status.Reason)
	assert.Contains(t, got.Status.Message, "(spec.provisioningTimeout; 4 asked, 3 registered, 3 ready)")
	assert.Equal(t, int32(4), f.replicas(t), "not asked for more")
	assert.Equal(t, []string{"Warning " + seedscale.ReasonReplicasNotReady}, reasons(f.events.take()))
	c := conditionOf(got, autoscalingapi.ConditionScalingLimited)
	assert.Equal(t, metav1.ConditionTrue, c.Status)
	assert.Equal(t, seedscale.ReasonReplicasNotReady, c.Reason)
	v, ok := gauge(t, reg, metrics.AutoscalerReplicasNotReadyName)
	assert.True(t, ok)
	assert.Equal(t, 1.0, v)

	f.now = f.now.Add(30 * time.Second)
	_, _, err = f.sync(t)
	require.NoError(t, err)
	assert.Empty(t, f.events.take(), "the warning once while it lasts")
}
