package pending

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

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
	"github.com/seedwarden/seedwarden/internal/cache"
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

// wakeFixture is a Reconciler over a real Store holding seeds and objs, with
// the watch's copies of the pending Shoots added by pend.
type wakeFixture struct {
	r       *Reconciler
	store   *cache.Store
	watched *fakeWatched
	q       queue
	clock   time.Time
}

func newWakeFixture(t *testing.T, objs ...client.Object) *wakeFixture {
	f := &wakeFixture{
		store:   cache.NewStore(cache.Options{}),
		watched: &fakeWatched{shoots: map[types.NamespacedName]*api.Shoot{}},
		q:       newQueue(t),
		clock:   time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC),
	}
	f.store.Apply(&api.CloudProfile{ObjectMeta: metav1.ObjectMeta{Name: "aws"}, Spec: api.CloudProfileSpec{Type: "aws"}})
	f.store.Apply(&api.Project{ObjectMeta: metav1.ObjectMeta{Name: "dev"}, Spec: api.ProjectSpec{Namespace: ptr.To(testNamespace)}})
	f.store.Load(objs)
	f.r = &Reconciler{
		Store: f.store, Watched: f.watched,
		// SameRegion: a Shoot of another region fits none of a region's seeds.
		Options: placement.Options{Strategy: placement.SameRegion, NetworkMode: placement.Disjoint},
		// Each Shoot is first seen a second after the one before.
		Now: func() time.Time { f.clock = f.clock.Add(time.Second); return f.clock },
	}
	return f
}

// pend makes Shoots pending, the first the oldest; watched false leaves
// them out of the watch's copies.
func (f *wakeFixture) pend(watched bool, shoots ...*api.Shoot) {
	for _, s := range shoots {
		key := client.ObjectKeyFromObject(s)
		f.r.track(key)
		if watched {
			f.watched.shoots[key] = s
		}
	}
}

// attempted clears the wakes of every pending Shoot, as their attempts
// would.
func (f *wakeFixture) attempted() {
	for key := range f.r.pending {
		f.r.clearWoken(key)
	}
}

// inRegion is a pending Shoot that fits the readySeeds of region.
func inRegion(name, region string) *api.Shoot {
	s := testShoot(name, "")
	s.Spec.Region = region
	return s
}

func seedIn(name, region string, alloc int64) *api.Seed {
	s := readySeed(name, alloc)
	s.Spec.Provider.Region = region
	return s
}

// A Shoot that frees a place on a seed wakes the oldest pending Shoot that
// seed could take, one per place freed; one that frees nothing wakes none.
func TestShootHandlerWakesWhenAPlaceFrees(t *testing.T) {
	tests := []struct {
		name     string
		old, new *api.Shoot // new nil: deleted
		want     []string
	}{
		{name: "bound Shoot deleted", old: reduced("b", "seed-a", "seed-a"), want: []string{"p1"}},
		{name: "migrating Shoot deleted frees both seeds", old: reduced("b", "seed-b", "seed-a"), want: []string{"p1", "p2"}},
		{name: "unbound other-scheduler Shoot deleted", old: func() *api.Shoot { s := reduced("b", "", ""); s.Spec.SchedulerName = ptr.To("x"); return s }()},
		{name: "migration finished", old: reduced("b", "seed-b", "seed-a"), new: reduced("b", "seed-b", "seed-b"), want: []string{"p1"}},
		{name: "migration started", old: reduced("b", "seed-a", "seed-a"), new: reduced("b", "seed-b", "seed-a")},
		{name: "moved", old: reduced("b", "seed-a", ""), new: reduced("b", "seed-b", ""), want: []string{"p1"}},
		{name: "status seed set", old: reduced("b", "seed-a", ""), new: reduced("b", "seed-a", "seed-a")},
		{name: "nothing changed", old: reduced("b", "seed-a", "seed-a"), new: reduced("b", "seed-a", "seed-a")},
		{name: "being deleted but still there", old: reduced("b", "seed-a", "seed-a"), new: func() *api.Shoot {
			s := reduced("b", "seed-a", "seed-a")
			s.DeletionTimestamp = &metav1.Time{}
			return s
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Each seed has room for what old holds there, and no more.
			spec, status := placement.ChargedSeeds(tt.old)
			alloc := map[string]int64{"seed-a": 0, "seed-b": 0}
			for _, seed := range []string{spec, status} {
				if seed != "" {
					alloc[seed] = 1
				}
			}
			f := newWakeFixture(t, readySeed("seed-a", alloc["seed-a"]), readySeed("seed-b", alloc["seed-b"]), tt.old)
			f.pend(true, testShoot("p1", ""), testShoot("p2", ""), testShoot("p3", ""))
			h := f.r.shootHandler()
			ctx := context.Background()
			if tt.new == nil {
				h.Delete(ctx, event.DeleteEvent{Object: tt.old}, f.q)
			} else {
				h.Update(ctx, event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.new}, f.q)
			}
			assert.Equal(t, tt.want, drain(f.q), "the oldest pending Shoots, one per place freed")
		})
	}
}

// A Seed that appears, or changes in what placement reads, wakes the
// pending Shoots it could take now, oldest first and as many as it has
// room for; a change that admits none, and heartbeats, wake none.
func TestSeedHandlerWakesShootsItCouldTake(t *testing.T) {
	ctx := context.Background()
	f := newWakeFixture(t)
	h := f.r.seedHandler()

	// Nothing pending: nothing to do, but the Store still learns of it.
	h.Create(ctx, event.CreateEvent{Object: seedIn("seed-eu", "eu-west-1", 2)}, f.q)
	assert.Empty(t, drain(f.q))
	_, known := f.store.Seed("seed-eu")
	require.True(t, known)

	f.pend(true, inRegion("p1", "eu-west-1"), inRegion("us", "us-east-1"), inRegion("p2", "eu-west-1"), inRegion("p3", "eu-west-1"))
	h.Create(ctx, event.CreateEvent{Object: seedIn("seed-eu2", "eu-west-1", 2)}, f.q)
	assert.Equal(t, []string{"p1", "p2"}, drain(f.q), "the two oldest it could take: its room")
	h.Create(ctx, event.CreateEvent{Object: seedIn("seed-eu3", "eu-west-1", 2)}, f.q)
	assert.Equal(t, []string{"p3"}, drain(f.q), "seeds appearing together wake different Shoots")
	h.Create(ctx, event.CreateEvent{Object: seedIn("seed-us", "us-east-1", 5)}, f.q)
	assert.Equal(t, []string{"us"}, drain(f.q))
	f.attempted()

	// Changes of a full, tainted seed of its own region.
	base := seedIn("seed-ap", "ap-south-1", 1)
	base.Spec.Taints = []api.SeedTaint{{Key: "dedicated"}}
	f.store.Apply(testShoot("holder", "seed-ap"))
	tolerant := func(name string) *api.Shoot {
		s := inRegion(name, "ap-south-1")
		s.Spec.Tolerations = []api.Toleration{{Key: "dedicated"}, {Key: "protected"}}
		return s
	}
	f.pend(true, tolerant("ap1"), tolerant("ap2"), inRegion("intolerant", "ap-south-1"))
	raised := func(s *api.Seed) {
		s.Status.Allocatable[api.ResourceShoots] = *resource.NewQuantity(2, resource.DecimalSI)
	}
	changes := []struct {
		name   string
		from   func(s *api.Seed) // from base; nil: base
		change func(s *api.Seed)
		want   []string
	}{
		{name: "allocatable raised", change: raised, want: []string{"ap1"}},
		{name: "allocatable removed", change: func(s *api.Seed) { s.Status.Allocatable = nil }, want: []string{"ap1", "ap2"}},
		{name: "taint removed, still full", change: func(s *api.Seed) { s.Spec.Taints = nil }},
		{name: "taint removed with room", from: raised, change: func(s *api.Seed) { s.Spec.Taints = nil }, want: []string{"ap1"}},
		{name: "ready again", from: func(s *api.Seed) { raised(s); s.Status.Conditions[0].Status = "False" }, change: func(s *api.Seed) {
			s.Status.Conditions[0].Status = api.ConditionTrue
		}, want: []string{"ap1"}},
		{name: "not ready", from: raised, change: func(s *api.Seed) { s.Status.Conditions[0].Status = "False" }},
		{name: "taint added", from: func(s *api.Seed) {
			raised(s)
			s.Spec.Taints = nil
		}, change: func(s *api.Seed) { s.Spec.Taints = []api.SeedTaint{{Key: "protected"}} }, want: []string{"ap1"}},
		{name: "deleting", from: raised, change: func(s *api.Seed) { s.DeletionTimestamp = &metav1.Time{} }},
		{name: "no last operation", from: raised, change: func(s *api.Seed) { s.Status.LastOperation = nil }},
		{name: "label, still full", change: func(s *api.Seed) { s.Labels = map[string]string{"env": "prod"} }},
	}
	for _, tt := range changes {
		t.Run(tt.name, func(t *testing.T) {
			old := base.DeepCopy()
			if tt.from != nil {
				tt.from(old)
			}
			old.ResourceVersion = "5"
			f.store.Apply(old)
			changed := old.DeepCopy()
			changed.ResourceVersion = "6"
			tt.change(changed)
			h.Update(ctx, event.UpdateEvent{ObjectOld: old, ObjectNew: changed}, f.q)
			assert.Equal(t, tt.want, drain(f.q))
			f.attempted()
		})
	}

	// Heartbeats (timestamps, messages, versions, same quantity written
	// differently) are not changes: not even the Store is told.
	f.store.Apply(base)
	beat := base.DeepCopy()
	beat.ResourceVersion = "7"
	beat.Status.Conditions[0].LastUpdateTime = metav1.NewTime(beat.Status.Conditions[0].LastUpdateTime.Add(60e9))
	beat.Status.Conditions[0].Message = "Gardenlet is posting ready status."
	beat.Status.LastOperation.Progress = 100
	beat.Status.LastOperation.Description = "Seed reconciled"
	beat.Status.Allocatable[api.ResourceShoots] = resource.MustParse("1")
	beat.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "gardenlet"}}
	h.Update(ctx, event.UpdateEvent{ObjectOld: base, ObjectNew: beat}, f.q)
	assert.Empty(t, drain(f.q))
	sd, _ := f.store.Seed("seed-ap")
	assert.Equal(t, base.ResourceVersion, sd.Object.ResourceVersion, "a heartbeat is left to the Store's own informer")

	// A deleted seed cannot make anything fit.
	h.Delete(ctx, event.DeleteEvent{Object: base}, f.q)
	assert.Empty(t, drain(f.q))
}

// Pending Shoots the watch holds no copy of cannot be checked: they are
// woken as far as the seed's room goes, after those that were checked, and
// at most maxUncheckedWakes for a seed without a limit.
func TestWakeUncheckedShoots(t *testing.T) {
	ctx := context.Background()
	f := newWakeFixture(t)
	f.pend(false, testShoot("u1", ""), testShoot("u2", ""))
	f.pend(true, testShoot("w1", ""))
	h := f.r.seedHandler()
	h.Create(ctx, event.CreateEvent{Object: readySeed("seed-a", 2)}, f.q)
	assert.Equal(t, []string{"u1", "w1"}, drain(f.q), "the checked one first, then the oldest unchecked")
	f.attempted()

	for i := range 2 * maxUncheckedWakes {
		f.pend(false, testShoot(fmt.Sprintf("many-%03d", i), ""))
	}
	unlimited := readySeed("seed-b", 0)
	unlimited.Status.Allocatable = nil
	h.Create(ctx, event.CreateEvent{Object: unlimited}, f.q)
	assert.Len(t, drain(f.q), 1+maxUncheckedWakes, "w1, and the unchecked up to the bound")
}

// Thousands of pending Shoots and a place freed: one is woken, the oldest
// of those the seed could take.
func TestWakeIsBoundedByTheRoom(t *testing.T) {
	ctx := context.Background()
	f := newWakeFixture(t, seedIn("seed-a", "eu-west-1", 1), testShoot("b", "seed-a"))
	for i := range 3000 {
		region := "eu-west-1"
		if i < 1000 {
			region = "us-east-1" // the oldest fit no seed of eu-west-1
		}
		f.pend(i%2 == 0, inRegion(fmt.Sprintf("p%04d", i), region))
	}
	f.r.shootHandler().Delete(ctx, event.DeleteEvent{Object: testShoot("b", "seed-a")}, f.q)
	assert.Equal(t, []string{"p1000"}, drain(f.q))
}
