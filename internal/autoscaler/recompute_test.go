package autoscaler

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/metrics"
)

// recommendations are the SeedAutoscaler's counts of
// seedwarden_autoscaler_recommendations_total by result.
func recommendations(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, r := range []string{metrics.RecommendationComputed, metrics.RecommendationReused, metrics.RecommendationOverBudget, metrics.RecommendationFailed} {
		if v, ok := gauge(t, reg, metrics.AutoscalerRecommendationsTotalName, metrics.AutoscalerResultLabel, r); ok {
			out[r] = v
		}
	}
	return out
}

// A spec that cannot be computed within the budget: the clock moves a
// second at every look, so the 10 s budget ends after a few simulations,
// whatever the machine's speed. The sync decides nothing and writes
// nothing, says so in the status (with the field to change), in one
// Warning event and in the metrics; a second sync with the same inputs
// does not try again.
func TestSyncStopsAtItsBudget(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	sa := seedAutoscaler(1, autoscalingapi.MaxReplicasLimit)
	for range autoscalingapi.MaxMetrics - 1 {
		sa.Spec.Metrics = append(sa.Spec.Metrics, autoscalingapi.MetricSpec{Type: autoscalingapi.HeadroomMetricSourceType,
			Headroom: &autoscalingapi.HeadroomMetricSource{Profile: "small", MinShoots: 100_000}})
	}
	f := newFixture(t, newLandscape(t, 3, 9), metrics.New(reg, metrics.GroupAutoscaler), managedSeedSet(3), sa)
	f.r.Profiles = map[string]*api.Shoot{"small": shootObj("like", "")}
	looks := 0
	f.r.Now = func() time.Time {
		looks++
		return f.now.Add(time.Duration(looks) * time.Second)
	}

	got, _, err := f.sync(t)
	require.NoError(t, err, "not retried with backoff: the next sync period tries again")
	assert.Equal(t, int32(3), f.replicas(t))
	assert.Zero(t, f.writes.n, "no half-decision written")
	st := got.Status
	assert.Equal(t, ReasonSyncBudgetExceeded, st.Reason)
	assert.Contains(t, st.Message, "the recommendation for ManagedSeedSet garden/aws stopped after ")
	assert.Contains(t, st.Message, "simulations and metric readings: its budget is spent (autoscaler.syncBudget 10s): spec.replicas is left as it is")
	assert.Zero(t, st.DesiredReplicas, "no desired replicas from a recommendation that was not made")
	active := conditionOf(got, autoscalingapi.ConditionScalingActive)
	assert.Equal(t, metav1.ConditionFalse, active.Status)
	assert.Equal(t, ReasonSyncBudgetExceeded, active.Reason)
	assert.Equal(t, []string{"Warning " + ReasonSyncBudgetExceeded}, reasons(f.events.take()))
	assert.Equal(t, map[string]float64{metrics.RecommendationOverBudget: 1}, recommendations(t, reg))
	errs, _ := gauge(t, reg, metrics.AutoscalerErrorsTotalName)
	assert.Equal(t, 1.0, errs)

	looks = 0
	f.now = f.now.Add(30 * time.Second)
	got, _, err = f.sync(t)
	require.NoError(t, err)
	assert.Equal(t, ReasonSyncBudgetExceeded, got.Status.Reason)
	assert.Empty(t, f.events.take(), "warned once")
	assert.Equal(t, map[string]float64{metrics.RecommendationOverBudget: 1, metrics.RecommendationReused: 1}, recommendations(t, reg),
		"the same inputs are not computed again")
	assert.Zero(t, f.writes.n)
}

// A sync whose inputs are the last one's reuses its recommendation; each
// input that changes brings a recomputation.
func TestSyncRecomputesOnlyWhenInputsChange(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	store := newLandscape(t, 3, 5)
	sa := seedAutoscaler(1, 10)
	sa.Spec.Metrics[0].Resource.Target.AverageUtilization = ptr.To[int32](90)
	f := newFixture(t, store, metrics.New(reg, metrics.GroupAutoscaler), managedSeedSet(3), sa)
	var pending []*api.Shoot
	f.r.Pending = func() []*api.Shoot { return pending }
	computed := 0.0
	step := func(what string, change func(), recompute bool) {
		t.Helper()
		change()
		f.now = f.now.Add(30 * time.Second)
		_, _, err := f.sync(t)
		require.NoError(t, err)
		if recompute {
			computed++
		}
		assert.Equal(t, computed, recommendations(t, reg)[metrics.RecommendationComputed], what)
	}
	step("the first sync", func() {}, true)
	step("nothing changed", func() {}, false)
	step("a Shoot arrived on a seed of the set", func() { store.Apply(shootObj("new", "aws-0")) }, true)
	step("a Shoot elsewhere, still nothing", func() {}, false)
	step("a Shoot is pending", func() { pending = []*api.Shoot{shootObj("p-0", "")} }, true)
	step("the pending Shoot changed", func() {
		p := shootObj("p-0", "")
		p.ResourceVersion = "2"
		pending = []*api.Shoot{p}
	}, true)
	step("a Seed changed", func() { store.Apply(seedObj("aws-9", 10, false)) }, true)
	step("the spec changed", func() {
		cur := &autoscalingapi.SeedAutoscaler{}
		require.NoError(t, f.c.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: saName}, cur))
		cur.Spec.MaxReplicas = 9
		cur.Generation++
		require.NoError(t, f.c.Update(t.Context(), cur))
	}, true)
	step("the set changed", func() {
		set := managedSeedSet(3)
		require.NoError(t, f.c.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: setName}, set))
		set.Status.NextReplicaNumber = 7
		require.NoError(t, f.c.Update(t.Context(), set))
	}, true)
	step("and then nothing again", func() {}, false)
	assert.Equal(t, 3.0, recommendations(t, reg)[metrics.RecommendationReused])
}

// Two SeedAutoscalers for one set (two CREATEs the webhook let through at
// once): the older scales it, the younger does nothing and says which one
// holds the set.
func TestYoungerOfTwoForASetDoesNothing(t *testing.T) {
	first := seedAutoscaler(1, 10)
	first.Name, first.UID = "first", "uid-0"
	first.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	second := seedAutoscaler(3, 3) // saName, the fixture's
	second.CreationTimestamp = metav1.NewTime(first.CreationTimestamp.Add(time.Second))
	f := newFixture(t, newLandscape(t, 1, 9), nil, managedSeedSet(1), first, second)

	got, _, err := f.sync(t)
	require.NoError(t, err)
	assert.Equal(t, int32(1), f.replicas(t), "the younger one wrote nothing")
	assert.Equal(t, ReasonAnotherAutoscaler, got.Status.Reason)
	assert.Equal(t, fmt.Sprintf("spec.scaleTargetRef.name: ManagedSeedSet %s/%s is scaled by SeedAutoscaler %s/first, which is older; this one does nothing while that one targets the set", ns, setName, ns), got.Status.Message)
	assert.Equal(t, []string{"Warning " + ReasonAnotherAutoscaler}, reasons(f.events.take()))

	// Once the older one is gone, the younger one scales.
	require.NoError(t, f.c.Delete(t.Context(), first))
	got, _, err = f.sync(t)
	require.NoError(t, err)
	assert.Equal(t, int32(3), f.replicas(t), "min=max=3")
	assert.Equal(t, ReasonScaledUp, got.Status.Reason)
}

// A recommendation that slow reads left less than half of the budget (here
// none) is not remembered as too costly: the next sync with the same inputs
// tries again.
func TestSyncShortOfBudgetTriesAgain(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	f := newFixture(t, newLandscape(t, 3, 9), metrics.New(reg, metrics.GroupAutoscaler), managedSeedSet(3), seedAutoscaler(1, 10))
	looks := 0
	f.r.Now = func() time.Time {
		looks++
		if looks == 1 {
			return f.now // the sync starts: the deadline is 10 s on
		}
		return f.now.Add(11 * time.Second) // the reads took 11 s
	}
	got, _, err := f.sync(t)
	require.NoError(t, err)
	assert.Equal(t, ReasonSyncBudgetExceeded, got.Status.Reason)
	assert.Equal(t, map[string]float64{metrics.RecommendationOverBudget: 1}, recommendations(t, reg))

	looks = 0
	f.r.Now = func() time.Time { return f.now }
	got, _, err = f.sync(t)
	require.NoError(t, err)
	assert.Equal(t, ReasonScaledUp, got.Status.Reason, "tried again, with the whole budget")
	assert.Equal(t, map[string]float64{metrics.RecommendationOverBudget: 1, metrics.RecommendationComputed: 1}, recommendations(t, reg))
}
