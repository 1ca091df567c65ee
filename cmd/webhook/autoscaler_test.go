package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
)

// The controller gets the configuration's dry run, sync period, the
// webhooks' placement options and every headroom profile by name.
func TestNewAutoscalerFromConfig(t *testing.T) {
	cfg, err := loadConfig(writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
strategy: MinimalDistance
autoscaler: {enabled: true, dryRun: true, syncPeriod: 2m}
headroom: {profiles: [{name: eu, shoot: %s}, {name: us, shoot: %s}]}
`, yamlToJSON(t, "../../examples/shoot.yaml"), yamlToJSON(t, "../../examples/shoot.yaml"))))
	require.NoError(t, err)
	synced := false
	r, err := newAutoscaler(cfg, autoscalerDeps{store: newStore(cfg, nil), synced: func() bool { return synced }, staleness: handlers.StalenessGuard{}}, nil)
	require.NoError(t, err)
	assert.True(t, r.DryRun)
	assert.Equal(t, 2*time.Minute, r.SyncPeriod)
	assert.Equal(t, placementOptions(cfg), r.Options)
	require.Len(t, r.Profiles, 2)
	require.NotNil(t, r.Profiles["eu"])
	assert.Equal(t, "Shoot", r.Profiles["eu"].Kind)
	snap, pending := r.View()
	assert.NotNil(t, snap)
	assert.Empty(t, pending, "no pending Shoots without the watch's copies")
	assert.False(t, r.Ready(), "not before the informers synced")
	synced = true
	assert.True(t, r.Ready())
	assert.NotNil(t, r.Snapshot())
}

// createSeedAutoscaler creates a ManagedSeedSet of one replica in namespace
// and a SeedAutoscaler of it (the CRDs of internal/autoscaler's envtest).
func createSeedAutoscaler(ctx context.Context, t *testing.T, c client.Client, namespace string) {
	t.Helper()
	require.NoError(t, c.Create(ctx, &seedmanagement.ManagedSeedSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "aws"},
		Spec: seedmanagement.ManagedSeedSetSpec{
			Replicas: ptr.To[int32](1),
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"set": "aws"}},
		},
	}))
	require.NoError(t, c.Create(ctx, &autoscalingapi.SeedAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "aws"},
		Spec: autoscalingapi.SeedAutoscalerSpec{
			ScaleTargetRef: autoscalingapi.CrossVersionObjectReference{
				APIVersion: seedmanagement.SchemeGroupVersion.String(), Kind: seedmanagement.KindManagedSeedSet, Name: "aws",
			},
			MaxReplicas: 3,
			Metrics: []autoscalingapi.MetricSpec{{Type: autoscalingapi.ResourceMetricSourceType, Resource: &autoscalingapi.ResourceMetricSource{
				Name: autoscalingapi.ResourceShoots, Target: autoscalingapi.MetricTarget{Type: autoscalingapi.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)},
			}}},
		},
	}))
}

// The autoscaler decides from the watch's pending Shoots less those a
// live reservation holds a place for (announced, or being bound), with the
// usage read at the same moment: a Shoot is counted on its seed or
// pending, never both.
func TestAutoscalerViewLeavesOutReserved(t *testing.T) {
	cfg, err := loadConfig(writeFile(t, "config.yaml", configHeader+"autoscaler: {enabled: true}\n"))
	require.NoError(t, err)
	store := cache.NewStore(cache.Options{})
	store.Apply(&api.Seed{ObjectMeta: metav1.ObjectMeta{Name: "a"}})
	watched := cache.NewPendingShoots(api.DefaultSchedulerName)
	var o crcache.Options
	watched.Configure(&o)
	shoot := func(name string) *api.Shoot {
		s := &api.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: "garden-dev", Name: name}}
		for _, by := range o.ByObject {
			_, err := by.Transform(s)
			require.NoError(t, err)
		}
		return s
	}
	shoot("bound")
	waiting := shoot("waiting")
	require.NoError(t, store.Reserve("a", cache.Claim{Key: cache.ManualReservationKey("garden-dev", "bound"), Namespace: "garden-dev", Name: "bound"}))
	r, err := newAutoscaler(cfg, autoscalerDeps{store: store, watched: watched, synced: func() bool { return true }}, nil)
	require.NoError(t, err)
	snap, pending := r.View()
	require.Len(t, pending, 1)
	assert.Equal(t, waiting.Name, pending[0].Name)
	sd, ok := store.Seed("a")
	require.True(t, ok)
	assert.Equal(t, int64(1), snap.Usage(sd), "the bound Shoot's place")
}
