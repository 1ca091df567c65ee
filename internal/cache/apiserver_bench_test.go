package cache

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/landscapegen"
	"github.com/seedwarden/seedwarden/internal/testenv"
)

// BenchmarkCacheSyncAPIServer is BenchmarkCacheSync against a real
// kube-apiserver and etcd (the e2e binaries, KUBEBUILDER_ASSETS): it creates
// SEEDWARDEN_BENCH_APISERVER Shoots on 1,000 Seeds (skipped when unset),
// reporting how long the creates took, then syncs a controller-runtime cache
// configured as serve configures it (ConfigureInformerOptions, Freshness,
// Register) and reports the time until the Store has every Shoot and the
// heap this process keeps after GC.
func BenchmarkCacheSyncAPIServer(b *testing.B) {
	shoots, err := strconv.Atoi(os.Getenv("SEEDWARDEN_BENCH_APISERVER"))
	if err != nil || shoots <= 0 {
		b.Skip("set SEEDWARDEN_BENCH_APISERVER to the number of Shoots")
	}
	const seeds, workers = 1000, 16
	_, cfg := testenv.Start(b, "../../e2e/crds")
	cfg.QPS, cfg.Burst = -1, 0 // no client-side throttling: the server is the limit
	ctx := context.Background()
	c, err := client.New(cfg, client.Options{Scheme: NewScheme()})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: landscapegen.Namespace}}); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	createAll(b, seeds, workers, func(i int) client.Object {
		sd := landscapegen.Seed(i)
		sd.ResourceVersion = ""
		return sd
	}, c)
	createAll(b, shoots, workers, func(i int) client.Object {
		sh := landscapegen.ExistingShoot(i, seeds)
		sh.ResourceVersion = ""
		return sh
	}, c)
	create := time.Since(start)
	for b.Loop() {
		b.StopTimer()
		syncFromAPIServer(b, cfg, shoots)
		b.StartTimer()
	}
	b.ReportMetric(create.Seconds(), "create-s")
	b.ReportMetric(float64(seeds+shoots)/create.Seconds(), "creates/s")
}

// createAll creates n objects with a bounded number of concurrent requests.
func createAll(b *testing.B, n, workers int, obj func(int) client.Object, c client.Client) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if err := c.Create(context.Background(), obj(i)); err != nil {
					errs <- fmt.Errorf("object %d: %w", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

func syncFromAPIServer(b *testing.B, cfg *rest.Config, shoots int) {
	store := NewStore(Options{})
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	opts := InformerOptions("garden")
	opts.Scheme = NewScheme()
	opts.NewInformer = NewFreshness().NewInformer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	defer func() { cancel(); <-done }() // the next round measures from a clean heap
	b.StartTimer()
	start := time.Now()
	cc, err := crcache.New(cfg, opts)
	if err != nil {
		b.Fatal(err)
	}
	synced, err := Register(ctx, cc, store)
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = cc.Start(ctx); close(done) }()
	for !synced() {
		time.Sleep(5 * time.Millisecond)
	}
	syncTime := time.Since(start)
	b.StopTimer()

	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if got := store.Usage("seed-00000"); got < int64(shoots/1000) {
		b.Fatalf("usage of seed-00000 is %d after sync", got)
	}
	heap := float64(after.HeapInuse) - float64(before.HeapInuse)
	b.ReportMetric(syncTime.Seconds(), "sync-s")
	b.ReportMetric(heap/(1<<20), "heap-MiB")
	b.ReportMetric(heap/float64(shoots), "heap-B/shoot")
	runtime.KeepAlive(cc)
	runtime.KeepAlive(store)
}
