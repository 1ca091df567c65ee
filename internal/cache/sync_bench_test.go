package cache

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/landscapegen"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// BenchmarkCacheSync feeds 100,000 Shoots (and 1,000 Seeds) through the real
// informer path — client-go's SharedIndexInformer with TransformShoot and the
// Store's event handler, its watches tracked by Freshness, as serve runs it — from a
// ListWatch that serves one list. It reports the time until the handler has
// synced and the heap the informer and Store keep after GC.
func BenchmarkCacheSync(b *testing.B) {
	const seeds, shoots = 1000, 100000
	for b.Loop() {
		b.StopTimer()
		store := NewStore(Options{})
		for i := 0; i < seeds; i++ {
			store.Apply(landscapegen.Seed(i))
		}
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)

		var listed atomic.Bool
		lw := &toolscache.ListWatch{
			// The list is built on demand, as if it came from the API server,
			// so the heap measured below holds only what the cache keeps.
			ListWithContextFunc: func(context.Context, metav1.ListOptions) (k8sruntime.Object, error) {
				if listed.Swap(true) {
					return &api.ShootList{}, nil
				}
				list := &api.ShootList{Items: make([]api.Shoot, shoots)}
				for i := range list.Items {
					list.Items[i] = *landscapegen.ExistingShoot(i, seeds)
					list.Items[i].UID = types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i))
				}
				return list, nil
			},
			WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
				if o.SendInitialEvents != nil && *o.SendInitialEvents {
					// Decline streaming lists, as an older API server would;
					// the reflector falls back to list + watch.
					return nil, apierrors.NewBadRequest("watch-list not supported here")
				}
				return watch.NewFake(), nil
			},
		}
		// Through Freshness, as serve builds every informer.
		inf := NewFreshness().NewInformer(lw, &api.Shoot{}, 0, toolscache.Indexers{})
		if err := inf.SetTransform(TransformShoot); err != nil {
			b.Fatal(err)
		}
		reg, err := inf.AddEventHandler(store.EventHandler())
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		b.StartTimer()
		start := time.Now()
		go inf.Run(ctx.Done())
		for !reg.HasSynced() {
			time.Sleep(time.Millisecond)
		}
		syncTime := time.Since(start)
		b.StopTimer()

		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if got := store.Usage("seed-00000"); got < shoots/seeds {
			b.Fatalf("usage of seed-00000 is %d after sync", got)
		}
		b.ReportMetric(syncTime.Seconds(), "sync-s")
		b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/(1<<20), "heap-MiB")
		runtime.KeepAlive(inf)
		runtime.KeepAlive(store)
		cancel()
		b.StartTimer()
	}
}

// BenchmarkDecisionUnderChurn measures decisions per second while the Store
// absorbs Shoot updates at a fixed rate (each moves a Shoot between seeds),
// against the same landscape without churn.
func BenchmarkDecisionUnderChurn(b *testing.B) {
	for _, perSecond := range []int{0, 1000} {
		b.Run(fmt.Sprintf("updates=%d/s", perSecond), func(b *testing.B) {
			store := NewStore(Options{})
			store.Load(landscapegen.Landscape(1000, 100000))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var applied atomic.Int64
			if perSecond > 0 {
				go churn(ctx, store, perSecond, &applied)
			}
			shoot := landscapegen.NewShoot("new")
			opts := placement.Options{Strategy: placement.MinimalDistance, NetworkMode: placement.Disjoint}
			start := time.Now()
			b.ResetTimer()
			for b.Loop() {
				if d := store.Place(shoot, opts, ""); !d.Schedulable() {
					b.Fatal(d.Summary())
				}
			}
			b.StopTimer()
			elapsed := time.Since(start).Seconds()
			b.ReportMetric(float64(b.N)/elapsed, "decisions/s")
			b.ReportMetric(float64(applied.Load())/elapsed, "updates/s")
		})
	}
}

// churn applies perSecond Shoot updates each second, catching up after
// pauses so the rate holds even on a busy machine.
func churn(ctx context.Context, store *Store, perSecond int, applied *atomic.Int64) {
	start := time.Now()
	for i := 0; ; i++ {
		for int64(i) >= int64(time.Since(start).Seconds()*float64(perSecond)) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Millisecond):
			}
		}
		sh := landscapegen.ExistingShoot(i%100000, 1000)
		sh.ResourceVersion = fmt.Sprint(i + 2)
		seed := fmt.Sprintf("seed-%05d", (i+i/100000+1)%1000)
		sh.Spec.SeedName = &seed
		store.Apply(sh)
		applied.Add(1)
	}
}
