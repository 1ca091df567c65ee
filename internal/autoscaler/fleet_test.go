package autoscaler

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
	"github.com/seedwarden/seedwarden/internal/seedscale"
)

// twoSets is a landscape of sets aws (seed aws-0) and gcp-like b (seed
// b-0) in one region, each seed full (10 of 10), and their
// SeedAutoscalers aws-eu and b-eu, utilization 100%.
func twoSets(t *testing.T) (*cache.Store, []client.Object) {
	t.Helper()
	objs := landscapeBase()
	for _, set := range []string{setName, "b"} {
		seed := seedObj(set+"-0", 10, false)
		seed.Labels[setLabel] = set
		objs = append(objs, seed)
		for j := range 10 {
			objs = append(objs, shootObj(fmt.Sprintf("%s-shoot-%d", seed.Name, j), seed.Name))
		}
	}
	store := cache.NewStore(cache.Options{})
	store.Load(objs)

	a := seedAutoscaler(1, 10)
	a.Spec.Metrics[0].Resource.Target.AverageUtilization = ptr.To[int32](100)
	bsa := a.DeepCopy()
	bsa.Name, bsa.UID, bsa.Spec.ScaleTargetRef.Name = "b-eu", "uid-2", "b"
	bset := managedSeedSet(1)
	bset.Name = "b"
	bset.Spec.Selector.MatchLabels = map[string]string{setLabel: "b"}
	return store, []client.Object{managedSeedSet(1), bset, a, bsa}
}

func syncNamed(t *testing.T, f *fixture, name string) *autoscalingapi.SeedAutoscaler {
	t.Helper()
	_, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}})
	require.NoError(t, err)
	sa := &autoscalingapi.SeedAutoscaler{}
	require.NoError(t, f.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, sa))
	return sa
}

func replicasOf(t *testing.T, f *fixture, set string) int32 {
	t.Helper()
	m := &seedmanagement.ManagedSeedSet{}
	require.NoError(t, f.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: set}, m))
	return ptr.Deref(m.Spec.Replicas, 1)
}

// Two sets in one region, 20 pending Shoots either could take: one
// decision for both, and exactly one set grows, by the two seeds needed;
// the next period, with that set's replicas on their way, neither grows.
func TestFleetOneSetGrows(t *testing.T) {
	store, objs := twoSets(t)
	f := newFixture(t, store, nil, objs...)
	f.r.Pending = pendingShoots(20)
	syncNamed(t, f, saName)
	b := syncNamed(t, f, "b-eu")
	assert.Equal(t, int32(3), replicasOf(t, f, setName))
	assert.Equal(t, int32(1), replicasOf(t, f, "b"), b.Status.Message)
	assert.Equal(t, seedscale.ReasonSteady, b.Status.Reason)

	f.now = f.now.Add(time.Minute)
	syncNamed(t, f, "b-eu")
	syncNamed(t, f, saName)
	assert.Equal(t, []int32{3, 1}, []int32{replicasOf(t, f, setName), replicasOf(t, f, "b")}, "settled")
}

// With its pending replica failing, the set that would grow is backed off
// (the reason in its status) and the other grows instead.
func TestFleetBacksOffAFailingSet(t *testing.T) {
	store, objs := twoSets(t)
	aset := objs[0].(*seedmanagement.ManagedSeedSet)
	aset.Spec.Replicas = ptr.To[int32](2)
	aset.Status.PendingReplica = &seedmanagement.PendingReplica{Name: "aws-1", Reason: seedmanagement.PendingReasonShootReconcileFailed,
		Since: metav1.NewTime(time.Date(2026, 1, 1, 11, 50, 0, 0, time.UTC))}
	f := newFixture(t, store, nil, objs...)
	f.r.Pending = pendingShoots(8)
	a := syncNamed(t, f, saName)
	syncNamed(t, f, "b-eu")
	assert.Equal(t, seedscale.ReasonBackedOff, a.Status.Reason)
	assert.Contains(t, a.Status.Message, "aws-1: ShootReconcileFailed")
	assert.Equal(t, int32(2), replicasOf(t, f, "b"), "the other set grows")
	assert.Equal(t, int32(2), replicasOf(t, f, setName), "not asked for more")
	assert.Contains(t, reasons(f.events.take()), "Warning "+seedscale.ReasonBackedOff)
}

// One decision per sync period: the first sync of a period decides every
// set, and the others' syncs in that period take their part of it; a sync
// a period later decides anew.
func TestFleetDecidedOncePerPeriod(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	store, objs := twoSets(t)
	f := newFixture(t, store, metrics.New(reg, metrics.GroupAutoscaler), objs...)
	f.r.Pending = pendingShoots(4)
	result := func(name, r string) float64 {
		mfs, err := reg.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() != metrics.AutoscalerRecommendationsTotalName {
				continue
			}
			for _, m := range mf.GetMetric() {
				l := map[string]string{}
				for _, p := range m.GetLabel() {
					l[p.GetName()] = p.GetValue()
				}
				if l[metrics.AutoscalerNameLabel] == name && l[metrics.AutoscalerResultLabel] == r {
					return m.GetCounter().GetValue()
				}
			}
		}
		return 0
	}
	syncNamed(t, f, saName)
	syncNamed(t, f, "b-eu")
	assert.Equal(t, 1.0, result(saName, metrics.RecommendationComputed))
	assert.Equal(t, 1.0, result("b-eu", metrics.RecommendationReused), "b takes its part of a's decision")

	f.now = f.now.Add(f.r.SyncPeriod)
	syncNamed(t, f, "b-eu")
	assert.Equal(t, 1.0, result("b-eu", metrics.RecommendationComputed), "a period later, decided anew")
}
