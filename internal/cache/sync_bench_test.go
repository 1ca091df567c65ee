package cache

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/landscapegen"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// BenchmarkCacheSync feeds Shoots (and Seeds) through the real informer
// path — client-go's SharedIndexInformer with TransformShoot, the namespace
// index controller-runtime adds and the Store's event handler, its watches
// tracked by Freshness, as serve runs it — from a ListWatch that serves one
// list. It reports the time until the handler has synced and the heap the
// informer and Store keep after GC.
//
// The 1,000,000-Shoot cases run only with SEEDWARDEN_BENCH_LARGE=1 (they
// take about a minute and a few GiB while the list is decoded).
// list-s is the part of sync-s spent building the list (what the API server
// and decoding would spend); the rest is the informer and the Store.
// SEEDWARDEN_BENCH_HEAPPROFILE=file writes a heap profile of the last case
// right after sync, with the informer and Store alive.
func BenchmarkCacheSync(b *testing.B) {
	cases := []struct{ seeds, shoots int }{{1000, 100000}, {1000, 300000}}
	if os.Getenv("SEEDWARDEN_BENCH_LARGE") == "1" {
		cases = append(cases, struct{ seeds, shoots int }{1000, 1000000}, struct{ seeds, shoots int }{10000, 1000000})
	}
	for _, c := range cases {
		b.Run(fmt.Sprintf("seeds=%d/shoots=%d", c.seeds, c.shoots), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				benchCacheSync(b, c.seeds, c.shoots)
				b.StartTimer()
			}
		})
	}
}

// benchCacheSync runs one sync with the timer stopped and reports sync-s,
// list-s, heap-MiB and heap-B/shoot.
func benchCacheSync(b *testing.B, seeds, shoots int) {
	store := NewStore(Options{})
	for i := 0; i < seeds; i++ {
		store.Apply(landscapegen.Seed(i))
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	var listed atomic.Bool
	var listNanos atomic.Int64 // building the list: the API server's and decoding's share
	lw := &toolscache.ListWatch{
		// The list is built on demand, as if it came from the API server,
		// so the heap measured below holds only what the cache keeps.
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (k8sruntime.Object, error) {
			if listed.Swap(true) {
				return &api.ShootList{}, nil
			}
			start := time.Now()
			defer func() { listNanos.Store(int64(time.Since(start))) }()
			return syncBenchList(seeds, shoots), nil
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
	// Through Freshness, as serve builds every informer, with the index
	// controller-runtime gives every informer.
	inf := NewFreshness().NewInformer(lw, &api.Shoot{}, 0, toolscache.Indexers{
		toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc,
	})
	if err := inf.SetTransform(TransformShoot); err != nil {
		b.Fatal(err)
	}
	reg, err := inf.AddEventHandler(store.EventHandler())
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	defer func() { cancel(); <-done }() // the next round measures from a clean heap
	b.StartTimer()
	start := time.Now()
	go func() { inf.Run(ctx.Done()); close(done) }()
	for !reg.HasSynced() {
		time.Sleep(time.Millisecond)
	}
	syncTime := time.Since(start)
	b.StopTimer()

	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if got := store.Usage("seed-00000"); got < int64(shoots/seeds) {
		b.Fatalf("usage of seed-00000 is %d after sync", got)
	}
	if n := len(inf.GetStore().ListKeys()); n != shoots {
		b.Fatalf("informer holds %d Shoots, want %d", n, shoots)
	}
	if path := os.Getenv("SEEDWARDEN_BENCH_HEAPPROFILE"); path != "" {
		writeHeapProfile(b, path)
	}
	heap := float64(after.HeapInuse) - float64(before.HeapInuse)
	b.ReportMetric(syncTime.Seconds(), "sync-s")
	b.ReportMetric(time.Duration(listNanos.Load()).Seconds(), "list-s")
	b.ReportMetric(heap/(1<<20), "heap-MiB")
	b.ReportMetric(heap/float64(shoots), "heap-B/shoot")
	runtime.KeepAlive(inf)
	runtime.KeepAlive(store)
}

// syncBenchList is the list an API server would send: every string of every
// item its own allocation, as decoding makes them.
func syncBenchList(seeds, shoots int) *api.ShootList {
	list := &api.ShootList{Items: make([]api.Shoot, shoots)}
	for i := range list.Items {
		sh := landscapegen.ExistingShoot(i, seeds)
		sh.Namespace = strings.Clone(sh.Namespace)
		sh.ResourceVersion = strconv.Itoa(1000000 + i)
		sh.UID = types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i))
		sh.Spec.SchedulerName = ptr.To(strings.Clone("default-scheduler"))
		list.Items[i] = *sh
	}
	return list
}

func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
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
