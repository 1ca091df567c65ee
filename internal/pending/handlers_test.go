package pending

import (
	"context"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

func newQueue(t *testing.T) queue {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	t.Cleanup(q.ShutDown)
	return q
}

// drain returns the names queued, sorted.
func drain(q queue) []string {
	var out []string
	for q.Len() > 0 {
		req, _ := q.Get()
		out = append(out, req.Name)
		q.Done(req)
		q.Forget(req)
	}
	sort.Strings(out)
	return out
}

// reduced is a Shoot as the manager's cache holds it.
func reduced(name, specSeed, statusSeed string) *api.Shoot {
	s := &api.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: "garden-dev", Name: name, Generation: 1, ResourceVersion: "1"}}
	if specSeed != "" {
		s.Spec.SeedName = ptr.To(specSeed)
	}
	if statusSeed != "" {
		s.Status.SeedName = ptr.To(statusSeed)
	}
	return s
}

func readySeed(name string, alloc int64) *api.Seed {
	return &api.Seed{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1", Generation: 1},
		Spec:       api.SeedSpec{Provider: api.SeedProvider{Type: "aws", Region: "eu-west-1"}},
		Status: api.SeedStatus{
			LastOperation: &api.LastOperation{Type: "Reconcile", State: "Succeeded"},
			Conditions:    []api.Condition{{Type: api.ConditionGardenletReady, Status: api.ConditionTrue, LastUpdateTime: metav1.Now()}},
			Allocatable:   corev1.ResourceList{api.ResourceShoots: *resource.NewQuantity(alloc, resource.DecimalSI)},
		},
	}
}

func handlerFixture(t *testing.T) (*Reconciler, *fakeStore, queue) {
	store := &fakeStore{decide: func(*api.Shoot) placement.Decision { return unschedulable }}
	return &Reconciler{Store: store}, store, newQueue(t)
}

func TestShootHandlerTracksPendingShoots(t *testing.T) {
	r, store, q := handlerFixture(t)
	h := r.shootHandler()
	ctx := context.Background()

	for _, s := range []*api.Shoot{reduced("p1", "", ""), reduced("p2", "", ""), reduced("bound", "seed-a", "")} {
		h.Create(ctx, event.CreateEvent{Object: s}, q)
	}
	other := reduced("other", "", "")
	other.Spec.SchedulerName = ptr.To("custom-scheduler")
	h.Create(ctx, event.CreateEvent{Object: other}, q)
	deleting := reduced("deleting", "", "")
	deleting.DeletionTimestamp = &metav1.Time{}
	h.Create(ctx, event.CreateEvent{Object: deleting}, q)
	selfHosted := reduced("self-hosted", "", "")
	selfHosted.Spec.Provider.Workers = []api.Worker{{Name: "cp", ControlPlane: &api.WorkerControlPlane{}}}
	h.Create(ctx, event.CreateEvent{Object: selfHosted}, q)

	assert.Equal(t, []string{"p1", "p2"}, drain(q), "pending Shoots are reconciled")
	assert.Equal(t, 2, r.Pending())
	assert.Empty(t, store.applied)

	// A status-only update of a pending Shoot (e.g. the controller's own
	// lastOperation) does not retry it: the backoff decides.
	p1 := reduced("p1", "", "")
	p1v2 := p1.DeepCopy()
	p1v2.ResourceVersion = "2"
	h.Update(ctx, event.UpdateEvent{ObjectOld: p1, ObjectNew: p1v2}, q)
	assert.Empty(t, drain(q))

	// A spec change (generation) retries it at once.
	p1v3 := p1v2.DeepCopy()
	p1v3.Generation = 2
	h.Update(ctx, event.UpdateEvent{ObjectOld: p1v2, ObjectNew: p1v3}, q)
	assert.Equal(t, []string{"p1"}, drain(q))

	// A Shoot handed to our scheduler becomes pending.
	otherOurs := other.DeepCopy()
	otherOurs.Spec.SchedulerName = nil
	h.Update(ctx, event.UpdateEvent{ObjectOld: other, ObjectNew: otherOurs}, q)
	assert.Equal(t, []string{"other"}, drain(q))
	assert.Equal(t, 3, r.Pending())

	// Bound (by us or by someone else): no longer pending; nothing freed.
	p2bound := reduced("p2", "seed-a", "")
	h.Update(ctx, event.UpdateEvent{ObjectOld: reduced("p2", "", ""), ObjectNew: p2bound}, q)
	assert.Empty(t, drain(q))
	assert.Equal(t, 2, r.Pending())

	// A pending Shoot deleted.
	h.Delete(ctx, event.DeleteEvent{Object: otherOurs}, q)
	assert.Empty(t, drain(q), "a pending Shoot frees nothing")
	assert.Equal(t, 1, r.Pending())
	assert.Empty(t, store.removed)
}

func TestShootHandlerRetriesAllWhenCapacityFrees(t *testing.T) {
	r, store, q := handlerFixture(t)
	h := r.shootHandler()
	ctx := context.Background()
	h.Create(ctx, event.CreateEvent{Object: reduced("p1", "", "")}, q)
	h.Create(ctx, event.CreateEvent{Object: reduced("p2", "", "")}, q)
	drain(q)

	tests := []struct {
		name     string
		old, new *api.Shoot // new nil: deleted
		retry    bool
	}{
		{name: "bound Shoot deleted", old: reduced("b", "seed-a", "seed-a"), retry: true},
		{name: "migrating Shoot deleted", old: reduced("b", "seed-b", "seed-a"), retry: true},
		{name: "unbound other-scheduler Shoot deleted", old: func() *api.Shoot { s := reduced("b", "", ""); s.Spec.SchedulerName = ptr.To("x"); return s }(), retry: false},
		{name: "migration finished", old: reduced("b", "seed-b", "seed-a"), new: reduced("b", "seed-b", "seed-b"), retry: true},
		{name: "migration started", old: reduced("b", "seed-a", "seed-a"), new: reduced("b", "seed-b", "seed-a"), retry: false},
		{name: "moved", old: reduced("b", "seed-a", ""), new: reduced("b", "seed-b", ""), retry: true},
		{name: "status seed set", old: reduced("b", "seed-a", ""), new: reduced("b", "seed-a", "seed-a"), retry: false},
		{name: "nothing changed", old: reduced("b", "seed-a", "seed-a"), new: reduced("b", "seed-a", "seed-a"), retry: false},
		{name: "being deleted but still there", old: reduced("b", "seed-a", "seed-a"), new: func() *api.Shoot {
			s := reduced("b", "seed-a", "seed-a")
			s.DeletionTimestamp = &metav1.Time{}
			return s
		}(), retry: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store.applied, store.removed = nil, nil
			if tt.new == nil {
				h.Delete(ctx, event.DeleteEvent{Object: tt.old}, q)
			} else {
				h.Update(ctx, event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.new}, q)
			}
			if !tt.retry {
				assert.Empty(t, drain(q))
				assert.Empty(t, store.applied)
				assert.Empty(t, store.removed)
				return
			}
			assert.Equal(t, []string{"p1", "p2"}, drain(q), "every pending Shoot is retried")
			// The Store learns of the change before the retries run.
			if tt.new == nil {
				assert.Equal(t, []client.Object{tt.old}, store.removed)
			} else {
				assert.Equal(t, []client.Object{tt.new}, store.applied)
			}
		})
	}
}

func TestSeedHandlerRetriesAll(t *testing.T) {
	r, store, q := handlerFixture(t)
	h := r.seedHandler()
	ctx := context.Background()

	// Nothing pending: nothing to do, but the Store still learns of it.
	h.Create(ctx, event.CreateEvent{Object: readySeed("seed-a", 1)}, q)
	assert.Empty(t, drain(q))
	require.Len(t, store.applied, 1)

	r.track(types.NamespacedName{Namespace: "garden-dev", Name: "p1"})
	r.track(types.NamespacedName{Namespace: "garden-team", Name: "p2"})

	h.Create(ctx, event.CreateEvent{Object: readySeed("seed-b", 1)}, q)
	assert.Equal(t, []string{"p1", "p2"}, drain(q), "a new seed retries everything")

	base := readySeed("seed-a", 1)
	base.Spec.Taints = []api.SeedTaint{{Key: "dedicated"}}
	changes := map[string]func(s *api.Seed){
		"allocatable raised": func(s *api.Seed) {
			s.Status.Allocatable[api.ResourceShoots] = *resource.NewQuantity(2, resource.DecimalSI)
		},
		"allocatable removed": func(s *api.Seed) { s.Status.Allocatable = nil },
		"taint removed":       func(s *api.Seed) { s.Spec.Taints = nil },
		"taint added":         func(s *api.Seed) { s.Spec.Taints = append(s.Spec.Taints, api.SeedTaint{Key: "protected"}) },
		"label":               func(s *api.Seed) { s.Labels = map[string]string{"env": "prod"} },
		"annotation":          func(s *api.Seed) { s.Annotations = map[string]string{api.AnnotationEmergencyStop: "true"} },
		"not ready":           func(s *api.Seed) { s.Status.Conditions[0].Status = "False" },
		"no last operation":   func(s *api.Seed) { s.Status.LastOperation = nil },
		"deleting":            func(s *api.Seed) { s.DeletionTimestamp = &metav1.Time{} },
		"zones":               func(s *api.Seed) { s.Spec.Provider.Zones = []string{"a", "b", "c"} },
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			store.applied = nil
			changed := base.DeepCopy()
			changed.ResourceVersion = "2"
			change(changed)
			h.Update(ctx, event.UpdateEvent{ObjectOld: base, ObjectNew: changed}, q)
			assert.Equal(t, []string{"p1", "p2"}, drain(q))
			assert.Equal(t, []client.Object{changed}, store.applied)
		})
	}

	// Heartbeats (timestamps, messages, versions, same quantity written
	// differently) are not changes.
	store.applied = nil
	beat := base.DeepCopy()
	beat.ResourceVersion = "3"
	beat.Status.Conditions[0].LastUpdateTime = metav1.NewTime(beat.Status.Conditions[0].LastUpdateTime.Add(60e9))
	beat.Status.Conditions[0].Message = "Gardenlet is posting ready status."
	beat.Status.LastOperation.Progress = 100
	beat.Status.LastOperation.Description = "Seed reconciled"
	beat.Status.Allocatable[api.ResourceShoots] = resource.MustParse("1")
	beat.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "gardenlet"}}
	h.Update(ctx, event.UpdateEvent{ObjectOld: base, ObjectNew: beat}, q)
	assert.Empty(t, drain(q))
	assert.Empty(t, store.applied)

	// A deleted seed cannot make anything fit.
	h.Delete(ctx, event.DeleteEvent{Object: base}, q)
	assert.Empty(t, drain(q))
}
