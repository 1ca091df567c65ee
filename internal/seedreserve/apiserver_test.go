package seedreserve

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Tests against a real kube-apiserver and etcd (controller-runtime's
// envtest), started once for the package when the first such test runs.

var (
	envOnce sync.Once
	env     *envtest.Environment
	envCfg  *rest.Config
	envErr  error
	nsSeq   atomic.Int32
)

func TestMain(m *testing.M) {
	code := m.Run()
	if env != nil {
		_ = env.Stop()
	}
	os.Exit(code)
}

// apiServer returns the rest config of the shared kube-apiserver and a
// fresh namespace in it, or skips.
func apiServer(tb testing.TB) (*rest.Config, string) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("starts kube-apiserver")
	}
	assets := testenv.Assets()
	if assets == "" {
		tb.Skip("no kube-apiserver/etcd: set KUBEBUILDER_ASSETS or run `make tools` (hack/e2e-tools.sh)")
	}
	envOnce.Do(func() {
		env = &envtest.Environment{BinaryAssetsDirectory: assets}
		envCfg, envErr = env.Start()
	})
	require.NoError(tb, envErr, "starting kube-apiserver from %s", assets)
	c, err := NewClient(envCfg)
	require.NoError(tb, err)
	ns := fmt.Sprintf("reserve-%d", nsSeq.Add(1))
	require.NoError(tb, c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	return envCfg, ns
}

// productionLimits is cfg with the client-side rate limits a server built
// from ctrl.GetConfig() gets through NewClient.
func productionLimits(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 20, 30 // controller-runtime's defaults; NewClient raises them
	return cfg
}

// Three replicas — each its own client (connection) and its own cache with
// the same landscape — and 300 concurrent reservations against four seeds
// with 25 free places each: at most 100 succeed, exactly 100 when none
// fails, at most 25 per seed.
func TestThreeReplicasNeverOverfill(t *testing.T) {
	cfg, ns := apiServer(t)
	seeds := map[string]int64{"s0": 30, "s1": 30, "s2": 30, "s3": 30}
	shoots := map[string]int{"s0": 5, "s1": 5, "s2": 5, "s3": 5}
	m := &countingRecorder{}
	var (
		replicas      []*Reserver
		reads, writes atomic.Int64
	)
	for range 3 {
		c, err := NewClient(productionLimits(cfg))
		require.NoError(t, err)
		c = countingClient{Client: c, reads: &reads, writes: &writes}
		r, err := New(c, landscape(seeds, shoots), Options{Namespace: ns, Metrics: m, Log: logr.Discard(), Limits: cache.Limits{PerNamespace: 1 << 20, Total: 1 << 20}})
		require.NoError(t, err)
		replicas = append(replicas, r)
	}

	// Warm connections, as a serving replica has them.
	for _, r := range replicas {
		require.NoError(t, r.Check(context.Background(), "warm-up", "garden-dev/x", 1))
	}
	reads.Store(0)

	start := time.Now()
	res := reserveConcurrently(t, replicas, 300, 4, 30)
	wall := time.Since(start)

	total := 0
	for seed, n := range res.placed {
		assert.LessOrEqual(t, n, 25, "seed %s", seed)
		total += n
	}
	assert.LessOrEqual(t, total, 100)
	for _, err := range res.errors {
		t.Logf("error: %v", err)
	}
	if len(res.errors) == 0 {
		assert.Equal(t, 100, total)
		assert.Equal(t, 200, res.full)
	}
	// What the API server holds agrees.
	c, err := NewClient(cfg)
	require.NoError(t, err)
	for seed := range seeds {
		cm := &corev1.ConfigMap{}
		require.NoError(t, c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: ConfigMapName(seed)}, cm))
		assert.Len(t, cm.Data, res.placed[seed], "entries of %s", seed)
	}
	t.Logf("300 concurrent reservations, 3 replicas, 4 seeds x 25 free places: %d placed, %d full, %d errors in %v",
		total, res.full, len(res.errors), wall.Round(time.Millisecond))
	t.Logf("latency per reservation (waiting for the batch included): %s", summary(res.latencies))
	t.Logf("API requests for the 300: %d GETs, %d writes (%d of them conflicts between replicas)",
		reads.Load(), writes.Load(), m.conflictCount())

	// Uncontended: one replica, one request at a time.
	var seq []time.Duration
	for i := range 50 {
		t0 := time.Now()
		require.NoError(t, replicas[0].Reserve(context.Background(), "quiet", fmt.Sprintf("garden-dev/q-%02d", i), "", 1000))
		seq = append(seq, time.Since(t0))
	}
	t.Logf("uncontended reservation (GET + UPDATE): %s", summary(seq))
	var checks []time.Duration
	for i := range 50 {
		t0 := time.Now()
		require.NoError(t, replicas[1].Check(context.Background(), "quiet", fmt.Sprintf("garden-dev/c-%02d", i), 1000))
		checks = append(checks, time.Since(t0))
	}
	t.Logf("dry-run check (GET): %s", summary(checks))
}

// countingClient counts the requests a Reserver sends.
type countingClient struct {
	client.Client
	reads, writes *atomic.Int64
}

func (c countingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.reads.Add(1)
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c countingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.writes.Add(1)
	return c.Client.Create(ctx, obj, opts...)
}

func (c countingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.writes.Add(1)
	return c.Client.Update(ctx, obj, opts...)
}

func summary(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	q := func(p float64) time.Duration {
		return s[min(len(s)-1, int(p*float64(len(s))))].Round(10 * time.Microsecond)
	}
	return fmt.Sprintf("n=%d p50=%v p90=%v p99=%v max=%v", len(s), q(.5), q(.9), q(.99), s[len(s)-1].Round(10*time.Microsecond))
}

// BenchmarkReserveAPIServer is the cost of one admission's reservation
// against a real kube-apiserver and etcd:
//
//   - sequential: one replica, one request at a time (GET + UPDATE); the
//     seed changes every 100 reservations so the object stays the size a
//     seed with allocatable 100 has;
//   - parallel: GOMAXPROCS*4 goroutines on three replicas and four seeds
//     (batching and conflicts between replicas included);
//   - check: a dry run (GET).
//
// The client-side rate limit is off here (envtest's 1000 QPS): it measures
// the API server, not client-go's token bucket.
func BenchmarkReserveAPIServer(b *testing.B) {
	cfg, ns := apiServer(b)
	var reads, writes atomic.Int64
	newReplica := func() *Reserver {
		c, err := NewClient(cfg)
		require.NoError(b, err)
		c = countingClient{Client: c, reads: &reads, writes: &writes}
		r, err := New(c, landscape(nil, nil), Options{Namespace: ns, Log: logr.Discard(), Limits: cache.Limits{PerNamespace: 1 << 20, Total: 1 << 20}})
		require.NoError(b, err)
		return r
	}
	// report adds API requests per operation to the benchmark's output.
	report := func(b *testing.B) {
		b.ReportMetric(float64(reads.Load())/float64(b.N), "gets/op")
		b.ReportMetric(float64(writes.Load())/float64(b.N), "writes/op")
	}
	reset := func(b *testing.B) {
		reads.Store(0)
		writes.Store(0)
		b.ResetTimer()
	}
	ctx := context.Background()
	var seq atomic.Int64

	b.Run("sequential", func(b *testing.B) {
		r := newReplica()
		reset(b)
		for range b.N {
			i := seq.Add(1)
			if err := r.Reserve(ctx, fmt.Sprintf("seq-%d", i/100), fmt.Sprintf("garden-dev/b-%d", i), "", 1<<30); err != nil {
				b.Fatal(err)
			}
		}
		report(b)
	})
	b.Run("parallel", func(b *testing.B) {
		replicas := []*Reserver{newReplica(), newReplica(), newReplica()}
		b.SetParallelism(4)
		reset(b)
		defer report(b)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := seq.Add(1)
				r := replicas[i%3]
				if err := r.Reserve(ctx, fmt.Sprintf("par-%d-%d", i%4, i/400), fmt.Sprintf("garden-dev/b-%d", i), "", 1<<30); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("check", func(b *testing.B) {
		r := newReplica()
		require.NoError(b, r.Reserve(ctx, "check", "garden-dev/x", "", 100))
		reset(b)
		for range b.N {
			if err := r.Check(ctx, "check", "garden-dev/y", 100); err != nil {
				b.Fatal(err)
			}
		}
		report(b)
	})
}
