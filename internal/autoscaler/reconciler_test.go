package autoscaler

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/seedscale"
)

// gauge is the value of the SeedAutoscaler's series of name (extra labels
// added), and whether it exists.
func gauge(t *testing.T, reg *prometheus.Registry, name string, extra ...string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	want := map[string]string{metrics.AutoscalerNamespaceLabel: ns, metrics.AutoscalerNameLabel: saName}
	for i := 0; i+1 < len(extra); i += 2 {
		want[extra[i]] = extra[i+1]
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if got[k] != v {
					continue next
				}
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue(), true
			}
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

func conditionOf(sa *autoscalingapi.SeedAutoscaler, typ string) metav1.Condition {
	c := meta.FindStatusCondition(sa.Status.Conditions, typ)
	if c == nil {
		return metav1.Condition{}
	}
	return *c
}

// 27 of 30 allocatable used, 60% wanted: the set goes from 3 to 5
// replicas through the scale subresource, once, and says so.
func TestScaleUpWritten(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	f := newFixture(t, newLandscape(t, 3, 9), metrics.New(reg, metrics.GroupAutoscaler), managedSeedSet(3), seedAutoscaler(1, 10))

	sa, res, err := f.sync(t)
	require.NoError(t, err)
	assert.Equal(t, ctrl.Result{RequeueAfter: 30 * time.Second}, res, "recomputed every sync period")
	assert.Equal(t, int32(5), f.replicas(t))
	st := sa.Status
	assert.Equal(t, int32(3), st.CurrentReplicas)
	assert.Equal(t, int32(5), st.DesiredReplicas)
	assert.Equal(t, ReasonScaledUp, st.Reason)
	assert.Equal(t, "set garden/aws: 3 -> 5, to keep the shoots utilization at most 60% (aws eu-west-1)", st.Message)
	assert.Equal(t, "existing seed aws-2 (the template has no seedConfig)", st.NewSeedModel)
	require.NotNil(t, st.LastScaleTime)
	assert.True(t, st.LastScaleTime.Time.Equal(f.now))
	assert.Equal(t, int64(1), st.ObservedGeneration)
	require.Len(t, st.CurrentMetrics, 1)
	assert.Equal(t, autoscalingapi.MetricStatus{Type: "Resource", Name: "shoots", Current: "90% (27 of 30 allocatable)", DesiredReplicas: 5, Met: true}, st.CurrentMetrics[0])
	assert.Equal(t, metav1.ConditionTrue, conditionOf(sa, autoscalingapi.ConditionAbleToScale).Status)
	assert.Equal(t, reasonSucceededRescale, conditionOf(sa, autoscalingapi.ConditionAbleToScale).Reason)
	assert.Equal(t, metav1.ConditionTrue, conditionOf(sa, autoscalingapi.ConditionScalingActive).Status)
	assert.Equal(t, "the replicas are computed from the one metric", conditionOf(sa, autoscalingapi.ConditionScalingActive).Message)
	assert.Equal(t, metav1.ConditionFalse, conditionOf(sa, autoscalingapi.ConditionScalingLimited).Status)
	assert.Equal(t, []event{{"Normal", ReasonScaledUp, st.Message}}, f.events.take())
	for name, want := range map[string]float64{metrics.AutoscalerCurrentReplicasName: 3, metrics.AutoscalerDesiredReplicasName: 5, metrics.AutoscalerShortName: 0} {
		v, ok := gauge(t, reg, name)
		assert.True(t, ok, name)
		assert.Equal(t, want, v, name)
	}
	v, _ := gauge(t, reg, metrics.AutoscalerScalesTotalName, metrics.AutoscalerDirectionLabel, metrics.ScaleUp)
	assert.Equal(t, 1.0, v)
	require.Len(t, f.r.entries[client.ObjectKey{Namespace: ns, Name: saName}].history.Scales, 1)

	// The new replicas are still starting (not registered yet): the next
	// sync wants the same 5 and writes nothing, records nothing.
	f.now = f.now.Add(30 * time.Second)
	sa, _, err = f.sync(t)
	require.NoError(t, err)
	assert.Equal(t, int32(5), sa.Status.CurrentReplicas)
	assert.Equal(t, int32(5), sa.Status.DesiredReplicas)
	assert.Equal(t, 1, f.writes.n)
	assert.Empty(t, f.events.take())
	v, _ = gauge(t, reg, metrics.AutoscalerScalesTotalName, metrics.AutoscalerDirectionLabel, metrics.ScaleUp)
	assert.Equal(t, 1.0, v)
}

// Dry run, from the configuration or the SeedAutoscaler's spec: the same
// status and one event, and the scale subresource is never written.
func TestDryRunWritesNothing(t *testing.T) {
	for _, tc := range []struct {
		name           string
		config, inSpec bool
	}{{"autoscaler.dryRun", true, false}, {"spec.dryRun", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			sa := seedAutoscaler(1, 10)
			sa.Spec.DryRun = tc.inSpec
			f := newFixture(t, newLandscape(t, 3, 9), metrics.New(reg, metrics.GroupAutoscaler), managedSeedSet(3), sa)
			f.r.DryRun = tc.config
			for range 3 {
				got, _, err := f.sync(t)
				require.NoError(t, err)
				sa = got
				f.now = f.now.Add(30 * time.Second)
			}
			assert.Equal(t, 0, f.writes.n)
			assert.Equal(t, int32(3), f.replicas(t))
			assert.Equal(t, int32(3), sa.Status.CurrentReplicas)
			assert.Equal(t, int32(5), sa.Status.DesiredReplicas)
			assert.Equal(t, "DryRunScaleUp", sa.Status.Reason)
			assert.Equal(t, "dry run, spec.replicas stays 3: set garden/aws: 3 -> 5, to keep the shoots utilization at most 60% (aws eu-west-1)", sa.Status.Message)
			assert.Nil(t, sa.Status.LastScaleTime)
			assert.Equal(t, []string{"Normal DryRunScaleUp"}, reasons(f.events.take()), "once, not every sync")
			v, _ := gauge(t, reg, metrics.AutoscalerDesiredReplicasName)
			assert.Equal(t, 5.0, v)
			_, counted := gauge(t, reg, metrics.AutoscalerScalesTotalName, metrics.AutoscalerDirectionLabel, metrics.ScaleUp)
			assert.False(t, counted, "no scale counted")
		})
	}
}

// At maxReplicas and still short: the set is scaled to the maximum, the
// status says why it stops there, the short gauge is 1 and the warning is
// recorded once.
func TestAtMaxReplicas(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	f := newFixture(t, newLandscape(t, 3, 10), metrics.New(reg, metrics.GroupAutoscaler), managedSeedSet(3), seedAutoscaler(1, 4))
	sa, _, err := f.sync(t)
	require.NoError(t, err)
	assert.Equal(t, int32(4), f.replicas(t))
	assert.Equal(t, ReasonScaledUp, sa.Status.Reason)
	limited := conditionOf(sa, autoscalingapi.ConditionScalingLimited)
	assert.Equal(t, metav1.ConditionTrue, limited.Status)
	assert.Equal(t, seedscale.ReasonAtMaxReplicas, limited.Reason)
	assert.Contains(t, limited.Message, "(maxReplicas) and still short")
	assert.Equal(t, []string{"Normal ScaledUp", "Warning AtMaxReplicas"}, reasons(f.events.take()))
	v, _ := gauge(t, reg, metrics.AutoscalerShortName)
	assert.Equal(t, 1.0, v)

	f.now = f.now.Add(30 * time.Second)
	sa, _, err = f.sync(t)
	require.NoError(t, err)
	assert.Equal(t, seedscale.ReasonAtMaxReplicas, sa.Status.Reason)
	assert.Empty(t, f.events.take(), "the warning is not repeated while it lasts")
}

// What stops a sync is reported in the status and conditions with the
// field and value at fault, warned once, counted, and changes no replicas.
func TestErrorsInStatus(t *testing.T) {
	badSelector := managedSeedSet(3)
	badSelector.Spec.Selector = metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: setLabel, Operator: "Near"}}}
	unknownProfile := seedAutoscaler(1, 10)
	unknownProfile.Spec.Metrics = []autoscalingapi.MetricSpec{{Type: autoscalingapi.HeadroomMetricSourceType,
		Headroom: &autoscalingapi.HeadroomMetricSource{Profile: "large", MinShoots: 20}}}
	otherKind := seedAutoscaler(1, 10)
	otherKind.Spec.ScaleTargetRef.Kind = "Deployment"
	for _, tc := range []struct {
		name      string
		objs      []client.Object
		reason    string
		message   string
		ableFalse bool
	}{
		{"no ManagedSeedSet", []client.Object{seedAutoscaler(1, 10)}, ReasonFailedGetScale,
			`spec.scaleTargetRef.name: ManagedSeedSet "aws" in namespace "garden": managedseedsets.seedmanagement.gardener.cloud "aws" not found`, true},
		{"unsupported target", []client.Object{managedSeedSet(3), otherKind}, ReasonFailedGetScale,
			"spec.scaleTargetRef: seedmanagement.gardener.cloud/v1alpha1 Deployment is not supported (want seedmanagement.gardener.cloud/v1alpha1 ManagedSeedSet)", true},
		{"bad selector", []client.Object{badSelector, seedAutoscaler(1, 10)}, ReasonInvalidSelector,
			`ManagedSeedSet garden/aws: spec.selector: "Near" is not a valid label selector operator`, false},
		{"unknown profile", []client.Object{managedSeedSet(3), unknownProfile}, ReasonFailedComputeReplicas,
			`spec.metrics[0].headroom.profile: "large" is not one of seedwarden's headroom profiles (headroom.profiles)`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			f := newFixture(t, newLandscape(t, 3, 9), metrics.New(reg, metrics.GroupAutoscaler), tc.objs...)
			sa, res, err := f.sync(t)
			require.NoError(t, err, "not retried faster than the sync period: it needs a change")
			assert.Equal(t, 30*time.Second, res.RequeueAfter)
			assert.Equal(t, tc.reason, sa.Status.Reason)
			assert.Equal(t, tc.message, sa.Status.Message)
			active := conditionOf(sa, autoscalingapi.ConditionScalingActive)
			assert.Equal(t, metav1.ConditionFalse, active.Status)
			assert.Equal(t, tc.reason, active.Reason)
			assert.Equal(t, tc.message, active.Message)
			able := conditionOf(sa, autoscalingapi.ConditionAbleToScale)
			assert.Equal(t, tc.ableFalse, able.Status == metav1.ConditionFalse, able.Reason)
			assert.Equal(t, []event{{"Warning", tc.reason, tc.message}}, f.events.take())
			assert.Equal(t, 0, f.writes.n)

			_, _, err = f.sync(t)
			require.NoError(t, err)
			assert.Empty(t, f.events.take(), "warned once")
			v, _ := gauge(t, reg, metrics.AutoscalerErrorsTotalName)
			assert.Equal(t, 2.0, v, "every failed sync counts")
		})
	}
}

// The API server failing a write: the error is retried with backoff, the
// status says so, and behavior's history records no scale.
func TestFailedWriteIsRetried(t *testing.T) {
	f := newFixture(t, newLandscape(t, 3, 9), nil, managedSeedSet(3), seedAutoscaler(1, 10))
	f.writes.fail = apierrors.NewServiceUnavailable("etcd is down")
	sa, _, err := f.sync(t)
	require.Error(t, err)
	assert.Equal(t, int32(3), f.replicas(t))
	assert.Equal(t, ReasonFailedUpdateScale, sa.Status.Reason)
	able := conditionOf(sa, autoscalingapi.ConditionAbleToScale)
	assert.Equal(t, metav1.ConditionFalse, able.Status)
	assert.Contains(t, able.Message, "writing spec.replicas 5 to the scale subresource of ManagedSeedSet garden/aws: etcd is down")
	assert.Empty(t, f.r.entries[client.ObjectKey{Namespace: ns, Name: saName}].history.Scales)
}

// While the landscape cannot be trusted (informers not synced, a stale
// cache), nothing is computed, written or reported.
func TestOutageChangesNothing(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	f := newFixture(t, newLandscape(t, 3, 9), metrics.New(reg, metrics.GroupAutoscaler), managedSeedSet(3), seedAutoscaler(1, 10))
	f.r.Ready = func() bool { return false }
	sa, res, err := f.sync(t)
	require.NoError(t, err)
	assert.Equal(t, 30*time.Second, res.RequeueAfter)
	assert.Equal(t, int32(3), f.replicas(t))
	assert.Equal(t, autoscalingapi.SeedAutoscalerStatus{}, sa.Status)
	assert.Empty(t, f.events.take())
	_, exported := gauge(t, reg, metrics.AutoscalerDesiredReplicasName)
	assert.False(t, exported)
}

// A deleted SeedAutoscaler's series and memory go.
func TestDeletedSeriesRemoved(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	f := newFixture(t, newLandscape(t, 3, 9), metrics.New(reg, metrics.GroupAutoscaler), managedSeedSet(3), seedAutoscaler(1, 10))
	_, _, err := f.sync(t)
	require.NoError(t, err)
	_, exported := gauge(t, reg, metrics.AutoscalerCurrentReplicasName)
	require.True(t, exported)

	require.NoError(t, f.c.Delete(context.Background(), seedAutoscaler(1, 10)))
	res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: saName}})
	require.NoError(t, err)
	assert.Equal(t, ctrl.Result{}, res)
	for _, name := range []string{metrics.AutoscalerCurrentReplicasName, metrics.AutoscalerDesiredReplicasName, metrics.AutoscalerShortName} {
		_, exported := gauge(t, reg, name)
		assert.False(t, exported, name)
	}
	_, exported = gauge(t, reg, metrics.AutoscalerScalesTotalName, metrics.AutoscalerDirectionLabel, metrics.ScaleUp)
	assert.False(t, exported)
	assert.Empty(t, f.r.entries)
}

// A replaced SeedAutoscaler (same name, new UID) starts with no history.
func TestReplacedStartsAfresh(t *testing.T) {
	f := newFixture(t, newLandscape(t, 3, 9), nil)
	key := client.ObjectKey{Namespace: ns, Name: saName}
	e := f.r.entry(key, "uid-1")
	e.history.Scales = append(e.history.Scales, seedscale.Scale{From: 1, To: 2})
	e.lastWarning = seedscale.ReasonAtMaxReplicas
	assert.Same(t, e, f.r.entry(key, "uid-1"))
	fresh := f.r.entry(key, "uid-2")
	assert.NotSame(t, e, fresh)
	assert.Empty(t, fresh.history.Scales)
	assert.Empty(t, fresh.lastWarning)
}

// The Shoots awaiting a seed count: a full set at a 100% target grows
// by the seeds they need.
func TestPendingShootsCount(t *testing.T) {
	sa := seedAutoscaler(1, 10)
	sa.Spec.Metrics[0].Resource.Target.AverageUtilization = ptr.To[int32](100)
	f := newFixture(t, newLandscape(t, 3, 10), nil, managedSeedSet(3), sa)
	var pending []*api.Shoot
	for _, name := range []string{"p-0", "p-1", "p-2", "p-3", "p-4", "p-5", "p-6", "p-7", "p-8", "p-9", "p-10", "p-11"} {
		pending = append(pending, shootObj(name, ""))
	}
	f.r.Pending = func() []*api.Shoot { return pending }
	got, _, err := f.sync(t)
	require.NoError(t, err)
	assert.Equal(t, int32(5), f.replicas(t), "12 pending Shoots need two seeds of 10")
	assert.Contains(t, got.Status.Message, "12 pending Shoots would go to the new seeds")
}

// Two of five seeds hold nothing: the scale-down waits out the
// stabilization window (saying so), then goes one seed per policy period.
func TestScaleDownAfterTheWindow(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	store := newLandscape(t, 3, 1)
	store.Apply(seedObj("aws-3", 10, true))
	store.Apply(seedObj("aws-4", 10, true))
	f := newFixture(t, store, metrics.New(reg, metrics.GroupAutoscaler), managedSeedSet(5), seedAutoscaler(1, 10))

	sa, _, err := f.sync(t)
	require.NoError(t, err)
	assert.Equal(t, int32(5), f.replicas(t))
	assert.Equal(t, int32(5), sa.Status.DesiredReplicas)
	assert.Equal(t, seedscale.ReasonScaleDown, sa.Status.Reason)
	assert.Contains(t, sa.Status.Message, "; held at 5 by the scale-down stabilization window of 30m0s")
	limited := conditionOf(sa, autoscalingapi.ConditionScalingLimited)
	assert.Equal(t, metav1.ConditionTrue, limited.Status)
	assert.Equal(t, reasonBehaviorLimited, limited.Reason)
	assert.Equal(t, "3 replicas recommended, 5 allowed by the scale-down stabilization window of 30m0s", limited.Message)
	assert.Empty(t, f.events.take(), "nothing done, nothing to record")

	// Nothing changed but the time: the recommendation is the last one,
	// and the window's end still takes effect.
	f.now = f.now.Add(31 * time.Minute)
	sa, _, err = f.sync(t)
	require.NoError(t, err)
	reused, _ := gauge(t, reg, metrics.AutoscalerRecommendationsTotalName, metrics.AutoscalerResultLabel, metrics.RecommendationReused)
	assert.Equal(t, 1.0, reused, "not recomputed")
	assert.Equal(t, int32(4), f.replicas(t), "one seed per period by default")
	assert.Equal(t, ReasonScaledDown, sa.Status.Reason)
	assert.Equal(t, []string{"Normal ScaledDown"}, reasons(f.events.take()))
	v, _ := gauge(t, reg, metrics.AutoscalerScalesTotalName, metrics.AutoscalerDirectionLabel, metrics.ScaleDown)
	assert.Equal(t, 1.0, v)
}
