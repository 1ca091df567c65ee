package pending

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/landscapegen"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// BenchmarkWake: one Seed event on a landscape of 1,000 seeds and 10,000
// Shoots, with cache.MaxPendingShoots pending Shoots whose full copies the
// watch holds (BENCHMARKS.md §24).
//
//   - baseline-decide-each: one placement.Decide per pending Shoot, the
//     least that retrying every pending Shoot on a Seed event cost before
//     (each attempt also wrote an event and maybe a status);
//   - none-fits: the seed woken admits none of them (a taint they do not
//     tolerate): one Admits each, nothing queued;
//   - room-1: a place freed on a seed they all fit: one Admits, one queued.
func BenchmarkWake(b *testing.B) {
	store := cache.NewStore(cache.Options{})
	store.Load(landscapegen.Landscape(1000, 10_000))
	const seed = "seed-00002" // gcp in eu-west-1, untainted
	watched := &fakeWatched{shoots: map[types.NamespacedName]*api.Shoot{}}
	r := &Reconciler{Store: store, Watched: watched, Options: placement.Options{Strategy: placement.MinimalDistance, NetworkMode: placement.Disjoint}}
	var shoots []*api.Shoot
	for i := range cache.MaxPendingShoots {
		s := landscapegen.NewShoot(fmt.Sprintf("pending-%04d", i))
		shoots = append(shoots, s)
		key := client.ObjectKeyFromObject(s)
		r.track(key)
		watched.shoots[key] = s
	}
	// One free place on the seed.
	sd, _ := store.Seed(seed)
	oneFree := sd.Object.DeepCopy()
	oneFree.ResourceVersion = "2"
	oneFree.Status.Allocatable[api.ResourceShoots] = *resource.NewQuantity(store.Usage(seed)+1, resource.DecimalSI)
	store.Apply(oneFree)
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	b.Cleanup(q.ShutDown)
	reset := func() {
		for q.Len() > 0 {
			req, _ := q.Get()
			q.Done(req)
			q.Forget(req)
			r.clearWoken(req.NamespacedName)
		}
	}

	b.Run("baseline-decide-each", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			snap := store.Snapshot()
			for _, s := range shoots {
				placement.Decide(snap, s, r.Options)
			}
		}
	})
	b.Run("room-1", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r.wake(q, seed)
			b.StopTimer()
			if q.Len() != 1 {
				b.Fatalf("%d woken for one place", q.Len())
			}
			reset()
			b.StartTimer()
		}
	})
	obj := oneFree.DeepCopy()
	obj.ResourceVersion = "3"
	obj.Spec.Taints = []api.SeedTaint{{Key: "dedicated"}}
	store.Apply(obj)
	b.Run("none-fits", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r.wake(q, seed)
		}
		if q.Len() != 0 {
			b.Fatal("woke a Shoot the seed does not admit")
		}
	})
}
