package autoscaler

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
	"github.com/seedwarden/seedwarden/internal/testenv"
)

// On a real kube-apiserver, with the shipped SeedAutoscaler CRD and a
// ManagedSeedSet CRD that serves the scale subresource: the leader scales
// the set through it, reports in the status subresource and records the
// event through events.k8s.io.
func TestScalesThroughTheAPIServer(t *testing.T) {
	_, restCfg := testenv.Start(t, "../../deploy/manifests/crd-seedautoscalers.yaml", "testdata", "../../e2e/crds")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	scheme := cache.NewScheme()
	require.NoError(t, AddToScheme(scheme))
	c, err := client.New(restCfg, client.Options{Scheme: scheme})
	require.NoError(t, err)
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	set := managedSeedSet(3)
	require.NoError(t, c.Create(ctx, set))
	require.NoError(t, c.Create(ctx, seedAutoscaler(1, 10)))
	// Replica aws-1 is protected through its ManagedSeed.
	ms := &unstructured.Unstructured{}
	ms.SetGroupVersionKind(seedmanagement.SchemeGroupVersion.WithKind("ManagedSeed"))
	ms.SetNamespace(ns)
	ms.SetName("aws-1")
	ms.SetLabels(map[string]string{setLabel: setName})
	ms.SetAnnotations(map[string]string{seedmanagement.AnnotationProtectFromDeletion: "true"})
	require.NoError(t, c.Create(ctx, ms))

	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              "seedwarden-autoscaler-test",
		LeaderElectionNamespace:       "default",
		LeaderElectionReleaseOnCancel: true,
		Controller:                    crconfig.Controller{SkipNameValidation: ptr.To(true)},
		Logger:                        testr.NewWithOptions(t, testr.Options{Verbosity: 1}),
	})
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	r := &Reconciler{
		Metrics:    metrics.New(reg, metrics.GroupAutoscaler),
		Snapshot:   newLandscape(t, 3, 9).Snapshot,
		Options:    placement.Options{Strategy: placement.SameRegion},
		SyncPeriod: time.Second,
		SyncBudget: 10 * time.Second,
	}
	require.NoError(t, r.SetupWithManager(mgr))
	assert.True(t, r.NeedLeaderElection(), "only the leader scales")

	sel, err := set.Selector()
	require.NoError(t, err)
	protected, err := r.protected(ctx, ns, sel)
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"aws-1": true}, protected, "read from the ManagedSeeds' metadata")
	none, err := r.protected(ctx, ns, labels.SelectorFromSet(labels.Set{setLabel: "other"}))
	require.NoError(t, err)
	assert.Empty(t, none)

	testenv.StartManager(ctx, t, mgr)

	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		got := &seedmanagement.ManagedSeedSet{}
		if assert.NoError(ct, c.Get(ctx, client.ObjectKeyFromObject(set), got)) {
			assert.Equal(ct, int32(5), ptr.Deref(got.Spec.Replicas, 0))
		}
	}, time.Minute, 100*time.Millisecond, "spec.replicas written through the scale subresource")
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		sa := &autoscalingapi.SeedAutoscaler{}
		if !assert.NoError(ct, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: saName}, sa)) {
			return
		}
		assert.Equal(ct, int32(5), sa.Status.DesiredReplicas)
		assert.NotNil(ct, sa.Status.LastScaleTime)
		assert.True(ct, meta.IsStatusConditionTrue(sa.Status.Conditions, autoscalingapi.ConditionScalingActive))
	}, time.Minute, 100*time.Millisecond, "the status subresource")
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		evs := &eventsv1.EventList{}
		if !assert.NoError(ct, c.List(ctx, evs, client.InNamespace(ns))) {
			return
		}
		var scaled []string
		for _, e := range evs.Items {
			if e.Reason == ReasonScaledUp && e.Regarding.Name == saName {
				scaled = append(scaled, e.Note)
			}
		}
		assert.Equal(ct, []string{"set garden/aws: 3 -> 5, to keep the shoots utilization at most 60% (aws eu-west-1)"}, scaled)
	}, time.Minute, 100*time.Millisecond, "one ScaledUp event")
	v, ok := gauge(t, reg, metrics.AutoscalerScalesTotalName, metrics.AutoscalerDirectionLabel, metrics.ScaleUp)
	assert.True(t, ok)
	assert.Equal(t, 1.0, v, "scaled once: the next syncs see 5 and want 5")
}
