package pending

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	crconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/testenv"
)

const (
	testNamespace = "garden-dev"
	testSeed      = "aws-eu1"
)

// TestControllerAgainstAPIServer runs the controller in a manager (with
// leader election) against a real kube-apiserver serving the Gardener CRDs,
// in update mode:
//
//  1. a Shoot created while the only seed is full stays pending, with a
//     SchedulingFailed event, a Create/Pending lastOperation and its reason
//     codes in an annotation (removed by the bind) and the metric;
//  2. raising the seed's allocatable binds it within seconds — the backoff
//     base is a minute, so only the Seed event can have triggered that;
//  3. a second pending Shoot is bound when a bound Shoot is deleted, through
//     a real 409 conflict (the Shoot is changed between read and bind), which
//     is retried without a Warning event.
func TestControllerAgainstAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver and etcd")
	}
	assets := testenv.Assets()
	if assets == "" {
		t.Skip("no kube-apiserver/etcd: set KUBEBUILDER_ASSETS or run hack/e2e-tools.sh (builds them into .cache/e2e-tools/bin)")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{"../../e2e/crds"},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	restCfg, err := env.Start()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, env.Stop()) })

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	scheme := cache.NewScheme()
	c, err := client.New(restCfg, client.Options{Scheme: scheme})
	require.NoError(t, err)

	// The landscape: one aws seed with room for one Shoot, which is taken.
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNamespace}}))
	require.NoError(t, c.Create(ctx, &api.CloudProfile{ObjectMeta: metav1.ObjectMeta{Name: "aws"}, Spec: api.CloudProfileSpec{Type: "aws"}}))
	require.NoError(t, c.Create(ctx, &api.Project{ObjectMeta: metav1.ObjectMeta{Name: "dev"}, Spec: api.ProjectSpec{Namespace: ptr.To(testNamespace)}}))
	seed := &api.Seed{
		ObjectMeta: metav1.ObjectMeta{Name: testSeed},
		Spec: api.SeedSpec{
			Provider: api.SeedProvider{Type: "aws", Region: "eu-west-1", Zones: []string{"eu-west-1a", "eu-west-1b", "eu-west-1c"}},
			Networks: api.SeedNetworks{Pods: "100.96.0.0/11", Services: "100.64.0.0/13"},
		},
	}
	require.NoError(t, c.Create(ctx, seed))
	seed.Status = api.SeedStatus{
		LastOperation: &api.LastOperation{Type: "Reconcile", State: "Succeeded", LastUpdateTime: metav1.Now()},
		Conditions:    []api.Condition{{Type: api.ConditionGardenletReady, Status: api.ConditionTrue, LastTransitionTime: metav1.Now(), LastUpdateTime: metav1.Now()}},
		Allocatable:   corev1.ResourceList{api.ResourceShoots: resource.MustParse("1")},
	}
	require.NoError(t, c.Status().Update(ctx, seed))
	require.NoError(t, c.Create(ctx, testShoot("existing", testSeed)))

	// The manager, as serve.go builds it, plus the controller, which
	// decides from the watch's copies of pending Shoots.
	cacheOpts := cache.InformerOptions("garden")
	watched := cache.NewPendingShoots(DefaultSchedulerName)
	watched.Configure(&cacheOpts)
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                        scheme,
		Cache:                         cacheOpts,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              "seedwarden-pending-test",
		LeaderElectionNamespace:       "default",
		LeaderElectionReleaseOnCancel: true,
		Controller:                    crconfig.Controller{SkipNameValidation: ptr.To(true)},
		Logger:                        testr.NewWithOptions(t, testr.Options{Verbosity: 1}),
	})
	require.NoError(t, err)
	store := cache.NewStore(cache.Options{})
	synced, err := cache.Register(ctx, mgr.GetCache(), store)
	require.NoError(t, err)

	// Writes go through a client that can make the next bind of a Shoot
	// conflict for real: it changes the Shoot first, so the bind's
	// resourceVersion is stale.
	writer, err := client.NewWithWatch(restCfg, client.Options{Scheme: scheme})
	require.NoError(t, err)
	var (
		mu         sync.Mutex
		conflictOn = map[string]bool{}
	)
	reg := prometheus.NewRegistry()
	r := &Reconciler{
		Config:  Config{Mode: BindThroughUpdate, BackoffBase: time.Minute, BackoffMax: 5 * time.Minute, ConflictBackoffMax: 5 * time.Second, Workers: 5},
		Store:   store,
		Watched: watched,
		Options: placement.Options{Strategy: placement.MinimalDistance, NetworkMode: placement.Disjoint},
		Client: interceptor.NewClient(writer, interceptor.Funcs{
			Patch: func(ctx context.Context, w client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
				mu.Lock()
				bump := conflictOn[obj.GetName()]
				delete(conflictOn, obj.GetName())
				mu.Unlock()
				if bump {
					change := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"changed-under-the-controller":"true"}}}`))
					assert.NoError(t, c.Patch(ctx, &api.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: obj.GetName()}}, change))
				}
				return w.Patch(ctx, obj, p, opts...)
			},
		}),
		Metrics: metrics.New(reg, metrics.GroupPending),
		Synced:  synced,
	}
	require.NoError(t, r.SetupWithManager(mgr))
	assert.True(t, r.NeedLeaderElection(), "only the leader binds")

	testenv.StartManager(ctx, t, mgr)
	select {
	case <-mgr.Elected():
	case <-time.After(30 * time.Second):
		t.Fatal("not elected leader")
	}
	require.Eventually(t, func() bool { return gathered(reg, metrics.RetryControllerLeaderName, "") == 1 }, 10*time.Second, 20*time.Millisecond,
		"the leader reports that it runs the retry controller")
	require.Eventually(t, func() bool { return synced() && store.Usage(testSeed) == 1 }, 30*time.Second, 20*time.Millisecond, "the Store sees the full seed")

	// 1. Pending while the seed is full.
	require.NoError(t, c.Create(ctx, testShoot("pending-1", "")))
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		s := getShoot(ctx, ct, c, "pending-1")
		if assert.NotNil(ct, s.Status.LastOperation) {
			assert.Equal(ct, "Create", s.Status.LastOperation.Type)
			assert.Equal(ct, "Pending", s.Status.LastOperation.State)
			assert.Contains(ct, s.Status.LastOperation.Description, "0/1 seeds eligible: "+testSeed+": ")
			assert.False(ct, s.Status.LastOperation.LastUpdateTime.IsZero())
		}
		assert.Equal(ct, `{"step":"Candidates","seeds":1,"counts":{"SeedFull":1}}`, s.Annotations[api.AnnotationUnschedulableReasons])
		assert.NotEmpty(ct, events(ctx, ct, c, "pending-1", corev1.EventTypeWarning, ReasonSchedulingFailed))
	}, 15*time.Second, 50*time.Millisecond)
	assert.Equal(t, map[metrics.PendingReasonKey]int{{Reason: "SeedFull", Provider: "aws", Region: "eu-west-1"}: 1}, r.reasonCounts())
	assert.Nil(t, getShoot(ctx, t, c, "pending-1").Spec.SeedName)
	assert.Equal(t, 1.0, gathered(reg, metrics.PendingShootsName, ""))
	assert.Positive(t, gathered(reg, metrics.PendingOldestAgeName, ""))
	assert.GreaterOrEqual(t, gathered(reg, metrics.SchedulingRetriesName, metrics.ResultUnschedulable), 1.0)
	warning := events(ctx, t, c, "pending-1", corev1.EventTypeWarning, ReasonSchedulingFailed)[0]
	assert.Contains(t, warning.Note, "0/1 seeds eligible: "+testSeed+": ")
	assert.Equal(t, EventRecorderName, warning.ReportingController)

	// 2. Capacity raised: bound within seconds, not after the minute of backoff.
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(seed), seed))
	seed.Status.Allocatable[api.ResourceShoots] = resource.MustParse("2")
	require.NoError(t, c.Status().Update(ctx, seed))
	raised := time.Now()
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.Equal(ct, ptr.To(testSeed), getShoot(ctx, ct, c, "pending-1").Spec.SeedName)
	}, 10*time.Second, 20*time.Millisecond)
	t.Logf("bound %s after the seed's allocatable was raised", time.Since(raised).Round(time.Millisecond))

	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		s := getShoot(ctx, ct, c, "pending-1")
		assert.Nil(ct, s.Status.LastOperation, "the controller's Create/Pending is removed, as the binding strategy would")
		assert.NotContains(ct, s.Annotations, api.AnnotationUnschedulableReasons, "the bind removed the reasons")
		scheduled := events(ctx, ct, c, "pending-1", corev1.EventTypeNormal, ReasonSchedulingSuccessful)
		if assert.Len(ct, scheduled, 1) {
			assert.Equal(ct, `Scheduled to seed "`+testSeed+`"`, scheduled[0].Note)
		}
		// The bound Shoot ended the reservation: exactly two Shoots count.
		assert.Equal(ct, int64(2), store.Usage(testSeed))
		// The controller counts after the API server answered the bind,
		// which the test may see first.
		assert.Equal(ct, 0.0, gathered(reg, metrics.PendingShootsName, ""))
		assert.Equal(ct, 1.0, gathered(reg, metrics.SchedulingRetriesName, metrics.ResultScheduled))
	}, 10*time.Second, 50*time.Millisecond)

	// 3. Capacity freed by a deletion; the bind conflicts once.
	require.NoError(t, c.Create(ctx, testShoot("pending-2", "")))
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.NotEmpty(ct, events(ctx, ct, c, "pending-2", corev1.EventTypeWarning, ReasonSchedulingFailed))
		// Written before the conflict is armed: that is for the bind.
		assert.Contains(ct, getShoot(ctx, ct, c, "pending-2").Annotations, api.AnnotationUnschedulableReasons)
	}, 15*time.Second, 50*time.Millisecond)
	assert.Equal(t, 1.0, gathered(reg, metrics.PendingShootsName, ""))
	mu.Lock()
	conflictOn["pending-2"] = true
	mu.Unlock()
	require.NoError(t, c.Delete(ctx, testShoot("existing", "")))
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		s := getShoot(ctx, ct, c, "pending-2")
		assert.Equal(ct, ptr.To(testSeed), s.Spec.SeedName)
		assert.Equal(ct, "true", s.Labels["changed-under-the-controller"], "the conflict was provoked")
		assert.Equal(ct, 1.0, gathered(reg, metrics.SchedulingRetriesName, metrics.ResultConflict))
		assert.Equal(ct, 2.0, gathered(reg, metrics.SchedulingRetriesName, metrics.ResultScheduled))
	}, 10*time.Second, 20*time.Millisecond)
	for _, e := range events(ctx, t, c, "pending-2", corev1.EventTypeWarning, ReasonSchedulingFailed) {
		assert.Equal(t, "Schedule", e.Action, "only the unschedulable attempt warned; the conflict was quiet: %s", e.Note)
	}
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.Len(ct, events(ctx, ct, c, "pending-2", corev1.EventTypeNormal, ReasonSchedulingSuccessful), 1)
		assert.Equal(ct, int64(2), store.Usage(testSeed))
	}, 10*time.Second, 50*time.Millisecond)
	assert.Equal(t, 0.0, gathered(reg, metrics.PendingShootsName, ""))
}

// testShoot is a Shoot that fits the test seed; seedName "" leaves it pending.
func testShoot(name, seedName string) *api.Shoot {
	s := &api.Shoot{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: name},
		Spec: api.ShootSpec{
			CloudProfile: &api.CloudProfileReference{Kind: api.KindCloudProfile, Name: "aws"},
			Region:       "eu-west-1",
			Provider:     api.ShootProvider{Type: "aws", Workers: []api.Worker{{Name: "worker", Zones: []string{"eu-west-1a"}}}},
		},
	}
	if seedName != "" {
		s.Spec.SeedName = ptr.To(seedName)
	}
	return s
}

func getShoot(ctx context.Context, t require.TestingT, c client.Client, name string) *api.Shoot {
	s := &api.Shoot{}
	require.NoError(t, c.Get(ctx, types.NamespacedName{Namespace: testNamespace, Name: name}, s))
	return s
}

// events lists the events.k8s.io/v1 Events about a Shoot of a type and reason.
func events(ctx context.Context, t require.TestingT, c client.Client, shoot, eventType, reason string) []eventsv1.Event {
	var list eventsv1.EventList
	require.NoError(t, c.List(ctx, &list, client.InNamespace(testNamespace)))
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == shoot && e.Regarding.Kind == "Shoot" && e.Type == eventType && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}
