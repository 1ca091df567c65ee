package autoscaler

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
)

const (
	ns       = "garden"
	setName  = "aws"
	saName   = "aws-eu"
	setLabel = "seedwarden.io/set"
)

// event is one recorded event.
type event struct{ typ, reason, note string }

// recorder keeps the events in order.
type recorder struct {
	mu     sync.Mutex
	events []event
}

func (r *recorder) Eventf(_ runtime.Object, _ runtime.Object, typ, reason, _, note string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event{typ, reason, fmt.Sprintf(note, args...)})
}

// take returns the events recorded since the last take.
func (r *recorder) take() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

func reasons(es []event) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.typ + " " + e.reason
	}
	return out
}

// seedObj is a ready aws eu-west-1 seed with allocatable alloc, in the set
// when member.
func seedObj(name string, alloc int64, member bool) *api.Seed {
	s := &api.Seed{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Seed"},
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1", Labels: map[string]string{}},
		Spec: api.SeedSpec{
			Provider: api.SeedProvider{Type: "aws", Region: "eu-west-1"},
			Networks: api.SeedNetworks{Pods: "100.96.0.0/11", Services: "100.64.0.0/13"},
		},
		Status: api.SeedStatus{
			LastOperation: &api.LastOperation{Type: "Reconcile", State: "Succeeded"},
			Conditions:    []api.Condition{{Type: api.ConditionGardenletReady, Status: api.ConditionTrue}},
			Allocatable:   corev1.ResourceList{api.ResourceShoots: *resource.NewQuantity(alloc, resource.DecimalSI)},
		},
	}
	if member {
		s.Labels[setLabel] = setName
	}
	return s
}

// shootObj is an aws eu-west-1 Shoot on seed ("": pending).
func shootObj(name, seed string) *api.Shoot {
	s := &api.Shoot{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Shoot"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "garden-dev", ResourceVersion: "1"},
		Spec: api.ShootSpec{
			CloudProfile: &api.CloudProfileReference{Kind: api.KindCloudProfile, Name: "aws"},
			Region:       "eu-west-1",
			Provider:     api.ShootProvider{Type: "aws", Workers: []api.Worker{{Name: "pool"}}},
		},
	}
	if seed != "" {
		s.Spec.SeedName = ptr.To(seed)
		s.Status.SeedName = ptr.To(seed)
	}
	return s
}

// landscapeBase is the cloud profile and project every test landscape's
// seeds and Shoots need.
func landscapeBase() []client.Object {
	return []client.Object{
		&api.CloudProfile{
			TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "CloudProfile"},
			ObjectMeta: metav1.ObjectMeta{Name: "aws", ResourceVersion: "1"},
			Spec:       api.CloudProfileSpec{Type: "aws"},
		},
		&api.Project{
			TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Project"},
			ObjectMeta: metav1.ObjectMeta{Name: "dev", ResourceVersion: "1"},
			Spec:       api.ProjectSpec{Namespace: ptr.To("garden-dev")},
		},
	}
}

// newLandscape is a Store holding the set's n seeds aws-0 ... (allocatable 10,
// used Shoots each) and the cloud profile and project they need.
func newLandscape(t *testing.T, n int, used int) *cache.Store {
	t.Helper()
	store := cache.NewStore(cache.Options{})
	objs := landscapeBase()
	for i := range n {
		seed := seedmanagement.ReplicaName(setName, int32(i))
		objs = append(objs, seedObj(seed, 10, true))
		for j := range used {
			objs = append(objs, shootObj(fmt.Sprintf("%s-shoot-%d", seed, j), seed))
		}
	}
	store.Load(objs)
	return store
}

// managedSeedSet has replicas and selects the seeds of the set; its
// template has no seedConfig, so new replicas are modelled on a seed.
func managedSeedSet(replicas int32) *seedmanagement.ManagedSeedSet {
	return &seedmanagement.ManagedSeedSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: seedmanagement.SchemeGroupVersion.String(), Kind: seedmanagement.KindManagedSeedSet},
		ObjectMeta: metav1.ObjectMeta{Name: setName, Namespace: ns},
		Spec: seedmanagement.ManagedSeedSetSpec{
			Replicas: ptr.To(replicas),
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{setLabel: setName}},
		},
		Status: seedmanagement.ManagedSeedSetStatus{Replicas: replicas, NextReplicaNumber: replicas},
	}
}

// seedAutoscaler targets the set with a 60% shoots utilization target.
func seedAutoscaler(minR, maxR int32) *autoscalingapi.SeedAutoscaler {
	return &autoscalingapi.SeedAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: autoscalingapi.SchemeGroupVersion.String(), Kind: "SeedAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: saName, Namespace: ns, UID: "uid-1", Generation: 1},
		Spec: autoscalingapi.SeedAutoscalerSpec{
			ScaleTargetRef: autoscalingapi.CrossVersionObjectReference{
				APIVersion: seedmanagement.SchemeGroupVersion.String(), Kind: seedmanagement.KindManagedSeedSet, Name: setName,
			},
			MinReplicas: ptr.To(minR),
			MaxReplicas: maxR,
			Metrics: []autoscalingapi.MetricSpec{{Type: autoscalingapi.ResourceMetricSourceType, Resource: &autoscalingapi.ResourceMetricSource{
				Name: autoscalingapi.ResourceShoots, Target: autoscalingapi.MetricTarget{Type: autoscalingapi.UtilizationMetricType, AverageUtilization: ptr.To[int32](60)},
			}}},
		},
	}
}

// scaleWrites counts the writes through the scale subresource.
// fail, when set, is what every write returns.
type scaleWrites struct {
	mu   sync.Mutex
	n    int
	fail error
}

// scaleSubresource serves a ManagedSeedSet's scale subresource as the API
// server serves a CRD's (specReplicasPath .spec.replicas,
// statusReplicasPath .status.replicas), which the fake client does not.
func scaleSubresource(writes *scaleWrites) interceptor.Funcs {
	return interceptor.Funcs{
		SubResourceGet: func(ctx context.Context, c client.Client, sub string, obj, out client.Object, _ ...client.SubResourceGetOption) error {
			set, ok := obj.(*seedmanagement.ManagedSeedSet)
			if sub != "scale" || !ok {
				return fmt.Errorf("unexpected subresource %s of %T", sub, obj)
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(set), set); err != nil {
				return err
			}
			scale := out.(*autoscalingv1.Scale)
			*scale = autoscalingv1.Scale{
				ObjectMeta: metav1.ObjectMeta{Name: set.Name, Namespace: set.Namespace, ResourceVersion: set.ResourceVersion},
				Spec:       autoscalingv1.ScaleSpec{Replicas: ptr.Deref(set.Spec.Replicas, 1)},
				Status:     autoscalingv1.ScaleStatus{Replicas: set.Status.Replicas},
			}
			return nil
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			set, ok := obj.(*seedmanagement.ManagedSeedSet)
			if sub != "scale" || !ok {
				return fmt.Errorf("unexpected subresource %s of %T", sub, obj)
			}
			writes.mu.Lock()
			fail := writes.fail
			writes.mu.Unlock()
			if fail != nil {
				return fail
			}
			var o client.SubResourceUpdateOptions
			o.ApplyOptions(opts)
			scale := o.SubResourceBody.(*autoscalingv1.Scale)
			if err := c.Get(ctx, client.ObjectKeyFromObject(set), set); err != nil {
				return err
			}
			set.Spec.Replicas = ptr.To(scale.Spec.Replicas)
			writes.mu.Lock()
			writes.n++
			writes.mu.Unlock()
			return c.Update(ctx, set)
		},
	}
}

// fixture is a reconciler on a fake API server and a landscape.
type fixture struct {
	r      *Reconciler
	c      client.Client
	events *recorder
	writes *scaleWrites
	now    time.Time
}

func newFixture(t *testing.T, store *cache.Store, m *metrics.Recorder, objs ...client.Object) *fixture {
	t.Helper()
	scheme := cache.NewScheme()
	require.NoError(t, AddToScheme(scheme))
	f := &fixture{events: &recorder{}, writes: &scaleWrites{}, now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	f.c = fake.NewClientBuilder().WithScheme(scheme).
		WithStatusSubresource(&autoscalingapi.SeedAutoscaler{}).
		WithObjects(objs...).
		WithInterceptorFuncs(scaleSubresource(f.writes)).
		Build()
	f.r = &Reconciler{
		Client: f.c, APIReader: f.c, Recorder: f.events, Metrics: m,
		Snapshot:   store.Snapshot,
		Options:    placement.Options{Strategy: placement.SameRegion},
		SyncPeriod: 30 * time.Second,
		SyncBudget: 10 * time.Second,
		Now:        func() time.Time { return f.now },
	}
	return f
}

// sync reconciles the SeedAutoscaler once and returns it as stored.
func (f *fixture) sync(t *testing.T) (*autoscalingapi.SeedAutoscaler, ctrl.Result, error) {
	t.Helper()
	res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: saName}})
	sa := &autoscalingapi.SeedAutoscaler{}
	require.NoError(t, f.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: saName}, sa))
	return sa, res, err
}

// replicas is the set's spec.replicas as stored.
func (f *fixture) replicas(t *testing.T) int32 {
	t.Helper()
	set := &seedmanagement.ManagedSeedSet{}
	require.NoError(t, f.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: setName}, set))
	return ptr.Deref(set.Spec.Replicas, 1)
}
