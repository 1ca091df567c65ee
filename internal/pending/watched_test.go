package pending

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// fakeWatched is cache.PendingShoots as the watch would fill it.
type fakeWatched struct {
	mu     sync.Mutex
	shoots map[types.NamespacedName]*api.Shoot
}

func (w *fakeWatched) Get(key types.NamespacedName) (*api.Shoot, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, ok := w.shoots[key]
	return s, ok
}

func (w *fakeWatched) Forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.shoots, key)
}

// watchedCopy is fullShoot("s1") as the watch delivered it, at rv.
func watchedCopy(t *testing.T, rv string) *api.Shoot {
	t.Helper()
	u := fullShoot("s1", nil)
	u.SetResourceVersion(rv)
	s := &api.Shoot{}
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, s))
	return s
}

// A Shoot the watch delivered is decided and bound without reading it
// first, on the condition that it is still the version the watch showed;
// when that bind conflicts, the next attempt reads the Shoot from the API
// server, and the copy stays where the SeedAutoscaler counts it pending
// until the watch brings a newer one, which is decided from again.
func TestBindFromTheWatchedShoot(t *testing.T) {
	key := types.NamespacedName{Namespace: "garden-dev", Name: "s1"}
	f := newFixture(t, BindThroughSubresource, fullShoot("s1", nil)) // the API server's copy: rv 41
	watched := &fakeWatched{shoots: map[types.NamespacedName]*api.Shoot{key: watchedCopy(t, "40")}}
	f.r.Watched = watched
	f.store.decide = func(s *api.Shoot) placement.Decision {
		assert.Equal(t, "eu-west-1", s.Spec.Region, "decided from the full Shoot")
		return scheduled
	}
	f.reader.err = errors.New("the API server was asked")
	conflict := apierrors.NewConflict(schema.GroupResource{Group: api.GroupName, Resource: "shoots"}, "s1", errors.New("the object has been modified"))
	f.writes.fail = func(w write) error {
		if w.body["metadata"].(map[string]any)["resourceVersion"] == "40" {
			return conflict
		}
		return nil
	}

	res := f.reconcile(t, "s1")
	assert.Positive(t, res.RequeueAfter, "the conflict is retried")
	require.Len(t, f.writes.Writes(), 1)
	assert.Equal(t, "40", f.writes.Writes()[0].body["metadata"].(map[string]any)["resourceVersion"], "bound on the watched version")
	_, kept := watched.Get(key)
	assert.True(t, kept, "a failed bind keeps the Shoot pending for the SeedAutoscaler")

	f.reader.err = nil
	f.writes.fail = func(write) error { return conflict }
	assert.Positive(t, f.reconcile(t, "s1").RequeueAfter)
	require.Len(t, f.writes.Writes(), 2)
	assert.Equal(t, "41", f.writes.Writes()[1].body["metadata"].(map[string]any)["resourceVersion"], "the outdated copy is not decided from: read from the API server")

	// The watch delivers a newer version: decided from it again.
	watched.shoots[key] = watchedCopy(t, "42")
	f.reader.err = errors.New("the API server was asked")
	f.writes.fail = nil
	assert.Zero(t, f.reconcile(t, "s1"))
	require.Len(t, f.writes.Writes(), 3)
	assert.Equal(t, "42", f.writes.Writes()[2].body["metadata"].(map[string]any)["resourceVersion"], "bound on the newer watched version")
	_, kept = watched.Get(key)
	assert.False(t, kept, "bound: no longer pending")
}

// A bind the cluster-wide reservations refuse wrote nothing: the watch's
// copy is still the Shoot as it is, stays where the SeedAutoscaler counts it
// pending, and the quick retry decides from it again without a read.
func TestRefusedBindKeepsTheWatchedShoot(t *testing.T) {
	key := types.NamespacedName{Namespace: "garden-dev", Name: "s1"}
	f := newFixture(t, BindThroughSubresource)
	watched := &fakeWatched{shoots: map[types.NamespacedName]*api.Shoot{key: watchedCopy(t, "40")}}
	f.r.Watched = watched
	f.reader.err = errors.New("the API server was asked")
	f.store.decide = func(*api.Shoot) placement.Decision { return scheduled }
	f.store.seeds = map[string]*placement.Seed{"aws-eu1": seedWithAllocatable("aws-eu1", 1)}
	cluster := &fakeCluster{err: &cache.CapacityError{Seed: "aws-eu1", Shoots: 0, Reserved: 1, Allocatable: 1}}
	f.r.Cluster = cluster

	assert.Equal(t, 50*time.Millisecond, f.reconcile(t, "s1").RequeueAfter)
	_, kept := watched.Get(key)
	assert.True(t, kept, "still pending for the SeedAutoscaler")

	cluster.err = nil
	assert.Zero(t, f.reconcile(t, "s1"), "decided from the watch's copy again, no read")
	require.Len(t, f.writes.Writes(), 1)
	assert.Equal(t, "40", f.writes.Writes()[0].body["metadata"].(map[string]any)["resourceVersion"])
}
