package seeddrain

import (
	"context"
	"fmt"

	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	ops "github.com/seedwarden/seedwarden/internal/operationsapi"
	"github.com/seedwarden/seedwarden/internal/pending"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// seed is a ready aws seed in eu-west-1 with backup and room for alloc.
func seed(name string, alloc int64) *api.Seed {
	return &api.Seed{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Seed"},
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec: api.SeedSpec{
			Provider: api.SeedProvider{Type: "aws", Region: "eu-west-1"},
			Networks: api.SeedNetworks{Pods: "100.96.0.0/11", Services: "100.64.0.0/13"},
			Backup:   &api.SeedBackup{Provider: "aws"},
		},
		Status: api.SeedStatus{
			LastOperation: &api.LastOperation{Type: "Reconcile", State: "Succeeded"},
			Conditions: []api.Condition{
				{Type: api.ConditionGardenletReady, Status: api.ConditionTrue},
				{Type: api.ConditionBackupBucketsReady, Status: api.ConditionTrue},
			},
			Allocatable: corev1.ResourceList{api.ResourceShoots: *resource.NewQuantity(alloc, resource.DecimalSI)},
		},
	}
}

// shoot is an aws Shoot in eu-west-1 of namespace garden-dev on seed.
func shoot(name, seed string) *api.Shoot {
	return &api.Shoot{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Shoot"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "garden-dev", UID: types.UID("uid-" + name)},
		Spec: api.ShootSpec{
			CloudProfile: &api.CloudProfileReference{Kind: api.KindCloudProfile, Name: "aws"},
			Region:       "eu-west-1",
			Provider:     api.ShootProvider{Type: "aws", Workers: []api.Worker{{Name: "pool"}}},
			SeedName:     ptr.To(seed),
		},
		Status: api.ShootStatus{SeedName: ptr.To(seed), LastOperation: &api.LastOperation{Type: "Reconcile", State: "Succeeded"}},
	}
}

func shootsOn(prefix, seed string, n int) []*api.Shoot {
	out := make([]*api.Shoot, n)
	for i := range out {
		out[i] = shoot(fmt.Sprintf("%s-%d", prefix, i), seed)
	}
	return out
}

type event struct{ reason, note string }

type recorder struct {
	mu     sync.Mutex
	events []event
}

func (r *recorder) Eventf(_ runtime.Object, _ runtime.Object, _, reason, _, note string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event{reason, fmt.Sprintf(note, args...)})
}

func (r *recorder) reasons() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.events))
	for i, e := range r.events {
		out[i] = e.reason
	}
	return out
}

// env is a garden in a fake client, the Store the webhooks would decide
// from (fed from the client after every change, as the watch would) and
// the controller.
type env struct {
	t     *testing.T
	c     client.Client
	store *cache.Store
	r     *Reconciler
	rec   *recorder
	now   time.Time
	// fail names the Shoots whose migration the gardenlet stand-in fails.
	fail map[string]bool
}

func newEnv(t *testing.T, seeds []*api.Seed, shoots []*api.Shoot, drain *ops.SeedDrain) *env {
	t.Helper()
	objs := []client.Object{drain}
	for _, s := range shoots {
		objs = append(objs, s)
	}
	byField := func(get func(*api.Shoot) *string) client.IndexerFunc {
		return func(o client.Object) []string { return []string{ptr.Deref(get(o.(*api.Shoot)), "")} }
	}
	c := fake.NewClientBuilder().WithScheme(cache.NewScheme()).WithObjects(objs...).
		WithStatusSubresource(&ops.SeedDrain{}, &api.Shoot{}).
		WithIndex(&api.Shoot{}, "spec.seedName", byField(func(s *api.Shoot) *string { return s.Spec.SeedName })).
		WithIndex(&api.Shoot{}, "status.seedName", byField(func(s *api.Shoot) *string { return s.Status.SeedName })).
		Build()
	store := cache.NewStore(cache.Options{})
	store.Apply(&api.CloudProfile{ObjectMeta: metav1.ObjectMeta{Name: "aws"}, Spec: api.CloudProfileSpec{Type: "aws"}})
	store.Apply(&api.Project{ObjectMeta: metav1.ObjectMeta{Name: "dev"}, Spec: api.ProjectSpec{Namespace: ptr.To("garden-dev")}})
	for _, s := range seeds {
		store.Apply(s)
	}
	store.Apply(drain)
	e := &env{t: t, c: c, store: store, rec: &recorder{}, now: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC), fail: map[string]bool{}}
	e.r = &Reconciler{Client: c, APIReader: c, Recorder: e.rec, Store: store, Options: placement.Options{Strategy: placement.SameRegion},
		BindMode: pending.BindThroughUpdate, SyncPeriod: time.Second, Now: func() time.Time { return e.now }}
	require.NoError(t, e.r.check())
	e.feed()
	return e
}

// feed applies every Shoot of the client to the Store, as the watch does.
func (e *env) feed() {
	l := &api.ShootList{}
	require.NoError(e.t, e.c.List(context.Background(), l))
	for i := range l.Items {
		e.store.Apply(&l.Items[i])
	}
}

// sync runs one Reconcile of the drain and returns it as stored after.
func (e *env) sync(name string) *ops.SeedDrain {
	e.t.Helper()
	_, err := e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: name}})
	require.NoError(e.t, err)
	e.feed()
	d := &ops.SeedDrain{}
	require.NoError(e.t, e.c.Get(context.Background(), types.NamespacedName{Name: name}, d))
	return d
}

// gardenlet moves every migrating Shoot one step: Migrate Processing,
// then (or Migrate Failed for the Shoots of fail) status.seedName to the
// new seed with Restore Succeeded.
func (e *env) gardenlet() {
	ctx := context.Background()
	l := &api.ShootList{}
	require.NoError(e.t, e.c.List(ctx, l))
	for i := range l.Items {
		s := &l.Items[i]
		spec, status := ptr.Deref(s.Spec.SeedName, ""), ptr.Deref(s.Status.SeedName, "")
		if spec == status {
			continue
		}
		op := s.Status.LastOperation
		switch {
		case op == nil || op.Type != opMigrate:
			s.Status.LastOperation = &api.LastOperation{Type: opMigrate, State: "Processing"}
		case op.State == "Processing" && e.fail[s.Name]:
			s.Status.LastOperation = &api.LastOperation{Type: opMigrate, State: opFailed, Description: "backup entry not reachable"}
		case op.State == "Processing":
			s.Status.SeedName = ptr.To(spec)
			s.Status.LastOperation = &api.LastOperation{Type: opRestore, State: opSucceeded}
		default:
			continue
		}
		require.NoError(e.t, e.c.Status().Update(ctx, s))
	}
	e.feed()
}

// migrating counts the Shoots of the client whose spec and status seeds
// differ: migrations really in flight.
func (e *env) migrating() int {
	l := &api.ShootList{}
	require.NoError(e.t, e.c.List(context.Background(), l))
	n := 0
	for _, s := range l.Items {
		if ptr.Deref(s.Spec.SeedName, "") != ptr.Deref(s.Status.SeedName, "") {
			if op := s.Status.LastOperation; op == nil || op.State != opFailed {
				n++
			}
		}
	}
	return n
}

// seedsOf returns each Shoot's spec.seedName and resourceVersion.
func (e *env) seedsOf() (seeds, versions map[string]string) {
	l := &api.ShootList{}
	require.NoError(e.t, e.c.List(context.Background(), l))
	seeds, versions = map[string]string{}, map[string]string{}
	for _, s := range l.Items {
		seeds[s.Name] = ptr.Deref(s.Spec.SeedName, "")
		versions[s.Name] = s.ResourceVersion
	}
	return seeds, versions
}

func drainOf(name, seed string, maxInFlight int32) *ops.SeedDrain {
	return &ops.SeedDrain{
		ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1},
		Spec:       ops.SeedDrainSpec{SeedName: seed, Budget: ops.Budget{MaxInFlight: ptr.To(maxInFlight)}},
	}
}
