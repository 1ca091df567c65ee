package cache

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

// pendingShoot is a Shoot of scheduler seedwarden without a seed, as the
// watch delivers it (managedFields included).
func pendingShoot(name, rv string) *api.Shoot {
	s := shoot("garden-dev", name, "", "")
	s.ResourceVersion = rv
	s.Spec.SchedulerName = ptr.To("seedwarden")
	s.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	return s
}

// The Shoot informer, configured by PendingShoots, still hands the cache
// reduced Shoots, and keeps the latest full version of each Shoot that
// awaits a seed from its scheduler, until it stops waiting.
func TestPendingShootsFollowTheWatch(t *testing.T) {
	o := InformerOptions("garden")
	p := NewPendingShoots("seedwarden")
	p.Configure(&o)
	require.Len(t, o.ByObject, 2, "the Shoot entry is replaced, not added")
	var transform func(any) (any, error)
	for obj, by := range o.ByObject {
		if _, ok := obj.(*api.Shoot); ok {
			transform = by.Transform
		}
	}
	require.NotNil(t, transform)
	key := types.NamespacedName{Namespace: "garden-dev", Name: "s1"}
	deliver := func(s *api.Shoot) {
		t.Helper()
		out, err := transform(s)
		require.NoError(t, err)
		_, reduced := out.(*ReducedShoot)
		require.True(t, reduced, "the cache holds %T", out)
	}

	deliver(pendingShoot("s1", "1"))
	got, ok := p.Get(key)
	require.True(t, ok)
	assert.Equal(t, "1", got.ResourceVersion)
	assert.Equal(t, "eu-west-1", got.Spec.Region, "the full spec, for the decision")
	assert.Nil(t, got.ManagedFields, "managedFields are not kept")

	deliver(pendingShoot("s1", "2"))
	got, _ = p.Get(key)
	assert.Equal(t, "2", got.ResourceVersion, "the latest version")

	notPending := map[string]func(s *api.Shoot){
		"bound":             func(s *api.Shoot) { s.Spec.SeedName = ptr.To("aws-eu1") },
		"being deleted":     func(s *api.Shoot) { s.DeletionTimestamp = &metav1.Time{Time: time.Now()} },
		"another scheduler": func(s *api.Shoot) { s.Spec.SchedulerName = ptr.To("default-scheduler") },
		"self-hosted": func(s *api.Shoot) {
			s.Spec.Provider.Workers[0].ControlPlane = &api.WorkerControlPlane{}
		},
	}
	for name, change := range notPending {
		deliver(pendingShoot("s1", "3"))
		s := pendingShoot("s1", "4")
		change(s)
		deliver(s)
		_, ok := p.Get(key)
		assert.False(t, ok, "%s: still kept", name)
	}

	deliver(pendingShoot("s1", "5"))
	p.Forget(key)
	_, ok = p.Get(key)
	assert.False(t, ok, "forgotten")
}

// A flood of Shoots no seed takes keeps at most MaxPendingShoots, the
// latest ones.
func TestPendingShootsBounded(t *testing.T) {
	p := NewPendingShoots("seedwarden")
	for i := range MaxPendingShoots + 10 {
		p.record(pendingShoot(fmt.Sprintf("s%d", i), "1"))
	}
	assert.Equal(t, MaxPendingShoots, p.shoots.Len())
	_, ok := p.Get(types.NamespacedName{Namespace: "garden-dev", Name: "s0"})
	assert.False(t, ok, "the oldest is dropped")
	_, ok = p.Get(types.NamespacedName{Namespace: "garden-dev", Name: fmt.Sprintf("s%d", MaxPendingShoots+9)})
	assert.True(t, ok, "the newest is kept")
}

// List gives the kept Shoots oldest first, without those that got a seed,
// were forgotten or were evicted.
func TestPendingShootsList(t *testing.T) {
	p := NewPendingShoots("seedwarden")
	at := func(name string, sec int64) *api.Shoot {
		s := pendingShoot(name, "1")
		s.CreationTimestamp = metav1.Unix(sec, 0)
		return s
	}
	p.record(at("young", 300))
	p.record(at("old", 100))
	p.record(at("b-same", 200))
	p.record(at("a-same", 200))
	p.record(at("bound", 50))
	bound := at("bound", 50)
	bound.Spec.SeedName = ptr.To("seed-a")
	p.record(bound)
	p.record(at("gone", 60))
	p.Forget(types.NamespacedName{Namespace: "garden-dev", Name: "gone"})

	var names []string
	for _, s := range p.List() {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"old", "a-same", "b-same", "young"}, names)

	for i := range MaxPendingShoots {
		p.record(at(fmt.Sprintf("s%d", i), 1000+int64(i)))
	}
	list := p.List()
	require.Len(t, list, MaxPendingShoots, "the evicted ones are not listed")
	assert.Equal(t, "s0", list[0].Name)
	p.mu.Lock()
	assert.Len(t, p.keys, MaxPendingShoots, "evicted keys are dropped")
	p.mu.Unlock()
}
