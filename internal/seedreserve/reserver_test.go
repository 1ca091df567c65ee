package seedreserve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/seedwarden/seedwarden/internal/cache"
)

var ctx = context.Background()

var configMapsGR = schema.GroupResource{Resource: "configmaps"}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

// capacityError asserts err is a *cache.CapacityError with these numbers.
func capacityError(t *testing.T, err error, shoots, reserved, alloc int64) {
	t.Helper()
	var full *cache.CapacityError
	require.True(t, errors.As(err, &full), "want a CapacityError, got %v", err)
	assert.Equal(t, cache.CapacityError{Seed: full.Seed, Shoots: shoots, Reserved: reserved, Allocatable: alloc}, *full, "%v", err)
}

func TestReserveCountsAndDenies(t *testing.T) {
	clk := newClock()
	c := newFake(nil)
	local := landscape(map[string]int64{"s": 3}, map[string]int{"s": 1})
	r := newTestReserver(t, c, local, clk)

	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a", "", 3))
	clk.Step(1500 * time.Millisecond)
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/b", "", 3))
	err := r.Reserve(ctx, "s", "garden-dev/c", "", 3)
	capacityError(t, err, 1, 2, 3)
	assert.Equal(t, `seed "s" is full: usage 3 (1 shoots + 2 reservations) + 1 would exceed allocatable shoots 3`, err.Error())

	// Expiries are RFC 3339, one TTL ahead, rounded up to the millisecond.
	assert.Equal(t, map[string]string{
		"garden-dev.a": "2026-03-01T12:00:30Z",
		"garden-dev.b": "2026-03-01T12:00:31.5Z",
	}, entries(t, c, "s"))

	cm := &corev1.ConfigMap{}
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: testNS, Name: "seedwarden-capacity-s"}, cm))
	assert.Equal(t, map[string]string{LabelManagedBy: ManagedBy, LabelComponent: Component}, cm.Labels)
	assert.Equal(t, map[string]string{AnnotationSeedName: "s"}, cm.Annotations)

	// A larger allocatable (the seed grew) takes it.
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/c", "", 4))
	// Allocatable 0: nothing fits.
	capacityError(t, r.Reserve(ctx, "other", "garden-dev/x", "", 0), 0, 0, 0)
}

// The same key reserves once: a retried request keeps its place on a full
// seed, and its first expiry: sending it again every few seconds never holds
// the place beyond one TTL.
func TestReserveIsIdempotent(t *testing.T) {
	clk := newClock()
	c := newFake(nil)
	r := newTestReserver(t, c, landscape(map[string]int64{"s": 1}, nil), clk, windowIsTTL)

	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a", "", 1))
	for range 2 {
		clk.Step(10 * time.Second)
		require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a", "", 1))
		assert.Equal(t, map[string]string{"garden-dev.a": "2026-03-01T12:00:30Z"}, entries(t, c, "s"), "not renewed")
	}
	capacityError(t, r.Reserve(ctx, "s", "garden-dev/b", "", 1), 0, 1, 1)
	require.NoError(t, r.Check(ctx, "s", "garden-dev/a", 1), "a dry run of the holder fits too")

	clk.Step(10 * time.Second) // 12:00:30, the first request's TTL
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/b", "", 1), "the place is free after one TTL")
	assert.Equal(t, map[string]string{"garden-dev.b": "2026-03-01T12:01:00Z"}, entries(t, c, "s"))
}

// Expired entries free their place and are dropped by the next write.
func TestReserveExpiry(t *testing.T) {
	clk := newClock()
	c := newFake(nil)
	r := newTestReserver(t, c, landscape(map[string]int64{"s": 2}, nil), clk, windowIsTTL)

	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a", "", 2))
	clk.Step(20 * time.Second)
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/b", "", 2))
	capacityError(t, r.Reserve(ctx, "s", "garden-dev/c", "", 2), 0, 2, 2)

	clk.Step(10 * time.Second) // a's expiry: gone
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/c", "", 2))
	assert.Equal(t, map[string]string{
		"garden-dev.b": "2026-03-01T12:00:50Z",
		"garden-dev.c": "2026-03-01T12:01:00Z",
	}, entries(t, c, "s"))

	// Denials write nothing, not even the expiry of others.
	clk.Step(25 * time.Second) // b expired, c not
	rv := resourceVersion(t, c, "s")
	capacityError(t, r.Reserve(ctx, "s", "garden-dev/d", "", 1), 0, 1, 1)
	assert.Equal(t, rv, resourceVersion(t, c, "s"))
}

// A Shoot counts once: by itself where the cache sees it, by its entry
// where it does not.
func TestReserveDedupesShootsTheCacheSees(t *testing.T) {
	clk := newClock()
	c := newFake(nil)
	seeing := landscape(map[string]int64{"s": 3}, nil)
	blind := landscape(map[string]int64{"s": 3}, nil)
	rSeeing := newTestReserver(t, c, seeing, clk)
	rBlind := newTestReserver(t, c, blind, clk)

	require.NoError(t, rBlind.Reserve(ctx, "s", "garden-dev/a", "", 3))
	require.NoError(t, rBlind.Reserve(ctx, "s", "garden-dev/b", "", 3))
	// a is created and reaches one replica's watch.
	seeing.Apply(shootObj("garden-dev", "a", "s"))

	// Both count 2 of 3: one replica from a Shoot and an entry, the other
	// from two entries.
	capacityError(t, rSeeing.Check(ctx, "s", "garden-dev/x", 2), 1, 1, 2)
	capacityError(t, rBlind.Check(ctx, "s", "garden-dev/x", 2), 0, 2, 2)
	require.NoError(t, rSeeing.Reserve(ctx, "s", "garden-dev/c", "", 3))
	capacityError(t, rBlind.Reserve(ctx, "s", "garden-dev/d", "", 3), 0, 3, 3)
	capacityError(t, rSeeing.Reserve(ctx, "s", "garden-dev/d", "", 3), 1, 2, 3)

	// An entry whose Shoot is on another seed in the cache is still counted.
	seeing.Apply(shootObj("garden-dev", "b", "elsewhere"))
	capacityError(t, rSeeing.Check(ctx, "s", "garden-dev/x", 3), 1, 2, 3)
}

// The next writer prunes entries of Shoots its cache shows on the seed, once
// they are PruneAfter old; younger ones stay for replicas that lag.
func TestReservePrunesShootsThatArrived(t *testing.T) {
	clk := newClock()
	c := newFake(nil)
	local := landscape(map[string]int64{"s": 10}, nil)
	r := newTestReserver(t, c, local, clk, windowIsTTL, func(o *Options) { o.PruneAfter = 5 * time.Second })

	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a", "", 10))
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/b", "", 10))
	local.Apply(shootObj("garden-dev", "a", "s"))
	local.Apply(shootObj("garden-dev", "b", "elsewhere"))

	clk.Step(4 * time.Second)
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/c", "", 10))
	assert.Len(t, entries(t, c, "s"), 3, "a is younger than PruneAfter")

	clk.Step(time.Second)
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/d", "", 10))
	assert.Equal(t, []string{"garden-dev.b", "garden-dev.c", "garden-dev.d"}, sortedKeys(entries(t, c, "s")),
		"a is pruned; b's Shoot is not on this seed")
}

// Dry runs read the API server and write nothing.
func TestCheck(t *testing.T) {
	clk := newClock()
	var writes atomic.Int32
	c := newFake(&interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			writes.Add(1)
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			writes.Add(1)
			return c.Update(ctx, obj, opts...)
		},
	})
	r := newTestReserver(t, c, landscape(map[string]int64{"s": 2}, map[string]int{"s": 1}), clk)

	require.NoError(t, r.Check(ctx, "s", "garden-dev/a", 2))
	assert.Nil(t, entries(t, c, "s"), "no ConfigMap created")
	assert.Zero(t, writes.Load())

	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a", "", 2))
	capacityError(t, r.Check(ctx, "s", "garden-dev/b", 2), 1, 1, 2)
	require.NoError(t, r.Check(ctx, "s", "garden-dev/a", 2))
	assert.Equal(t, int32(1), writes.Load())
}

// Entries seedwarden did not write (an unreadable or far-future expiry, a key
// without a namespace) count as live; the next write gives them one TTL.
func TestReserveForeignEntries(t *testing.T) {
	clk := newClock()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: ConfigMapName("s")},
		Data: map[string]string{
			"garden-dev.garbage": "tomorrow",
			"garden-dev.future":  "2099-01-01T00:00:00Z",
			"nodot":              "2026-03-01T12:00:10Z",
			"garden-dev.expired": "2026-03-01T11:59:59Z",
		},
	}
	c := newFake(nil, cm)
	r := newTestReserver(t, c, landscape(map[string]int64{"s": 4}, nil), clk)
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a", "", 4))
	capacityError(t, r.Reserve(ctx, "s", "garden-dev/b", "", 4), 0, 4, 4)
	assert.Equal(t, map[string]string{
		"garden-dev.garbage": "2026-03-01T12:00:30Z",
		"garden-dev.future":  "2026-03-01T12:00:30Z",
		"nodot":              "2026-03-01T12:00:10Z",
		"garden-dev.a":       "2026-03-01T12:00:30Z",
	}, entries(t, c, "s"))
	clk.Step(30 * time.Second)
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/b", "", 1))
	assert.Equal(t, []string{"garden-dev.b"}, sortedKeys(entries(t, c, "s")))
}

// Three replicas (each its own cache and Reserver) sharing one API server
// never give away more places than there are, and exactly as many when
// nothing fails. The real API server version is TestThreeReplicasNeverOverfill.
func TestReplicasNeverOverfillFake(t *testing.T) {
	c := newFake(nil)
	seeds := map[string]int64{"s0": 30, "s1": 30, "s2": 30, "s3": 30}
	shoots := map[string]int{"s0": 5, "s1": 5, "s2": 5, "s3": 5} // 25 free places each
	var replicas []*Reserver
	for range 3 {
		replicas = append(replicas, newTestReserver(t, c, landscape(seeds, shoots), nil, noLimits))
	}
	res := reserveConcurrently(t, replicas, 300, 4, 30)
	assert.Empty(t, res.errors)
	assert.Equal(t, map[string]int{"s0": 25, "s1": 25, "s2": 25, "s3": 25}, res.placed)
	for seed := range seeds {
		assert.Len(t, entries(t, c, seed), 25)
	}
}

type reserveResults struct {
	placed    map[string]int
	full      int
	errors    []error
	latencies []time.Duration
}

// reserveConcurrently sends n Reserve calls at once, request i for seed
// s<i%seeds> through replica i%len(replicas).
func reserveConcurrently(t testing.TB, replicas []*Reserver, n, seeds int, alloc int64) reserveResults {
	t.Helper()
	var (
		mu    sync.Mutex
		res   = reserveResults{placed: map[string]int{}}
		wg    sync.WaitGroup
		start = make(chan struct{})
	)
	for i := range n {
		wg.Go(func() {
			seed := fmt.Sprintf("s%d", i%seeds)
			<-start
			t0 := time.Now()
			err := replicas[i%len(replicas)].Reserve(context.Background(), seed, fmt.Sprintf("garden-dev/shoot-%03d", i), "", alloc)
			d := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			res.latencies = append(res.latencies, d)
			switch {
			case err == nil:
				res.placed[seed]++
			case errors.As(err, new(*cache.CapacityError)):
				res.full++
			default:
				res.errors = append(res.errors, err)
			}
		})
	}
	close(start)
	wg.Wait()
	return res
}

// A replica writes at most Options.Limits unconfirmed entries per namespace
// and in all (the total never refuses a namespace that holds none): forged
// capacity reviews cannot fill the ConfigMaps. Beyond them Reserve writes
// nothing and says so with a *cache.LimitError; an entry that expired, or
// whose Shoot arrived, or that the seed refused frees its slot.
func TestReserveLimits(t *testing.T) {
	clk := newClock()
	c := newFake(nil)
	local := landscape(map[string]int64{"s": 100, "t": 100, "tiny": 0}, nil)
	m := &countingRecorder{}
	r := newTestReserver(t, c, local, clk, func(o *Options) {
		o.Limits = cache.Limits{PerNamespace: 2, Total: 3}
		o.Metrics = m
	})
	limit := func(err error, reason string) {
		t.Helper()
		var le *cache.LimitError
		require.ErrorAs(t, err, &le)
		assert.Equal(t, reason, le.Reason)
	}

	require.NoError(t, r.Reserve(ctx, "s", "garden-a/x1", "", 100))
	require.NoError(t, r.Reserve(ctx, "t", "garden-a/x2", "", 100))
	limit(r.Reserve(ctx, "s", "garden-a/x3", "", 100), "namespace")
	require.NoError(t, r.Reserve(ctx, "s", "garden-a/x1", "", 100), "a held key is not new")
	capacityError(t, r.Reserve(ctx, "tiny", "garden-b/y0", "", 0), 0, 0, 0)
	require.NoError(t, r.Reserve(ctx, "s", "garden-b/y1", "", 100), "the denial gave its slot back")
	// The total is reached, but a namespace holding nothing still gets one.
	require.NoError(t, r.Reserve(ctx, "s", "garden-c/z1", "", 100))
	limit(r.Reserve(ctx, "s", "garden-c/z2", "", 100), "total")
	limit(r.Reserve(ctx, "s", "garden-b/y2", "", 100), "total")
	assert.Equal(t, []string{"garden-a.x1", "garden-b.y1", "garden-c.z1"}, sortedKeys(entries(t, c, "s")), "nothing written beyond the limits")
	assert.Equal(t, map[string]int{"apiserver/namespace": 1, "apiserver/total": 2}, m.refused, "counted by reason")
	n, total := r.ledger.counts("garden-a")
	assert.Equal(t, 2, n)
	assert.Equal(t, 4, total)
	require.NoError(t, r.Check(ctx, "s", "garden-a/x3", 100), "a dry run is never refused")

	// x2's and z1's Shoots arrive: their slots are free, found within a
	// second (a flood at the limit does not scan the ledger on every
	// request).
	local.Apply(shootObj("garden-a", "x2", "t"))
	local.Apply(shootObj("garden-c", "z1", "s"))
	limit(r.Reserve(ctx, "s", "garden-a/x3", "", 100), "namespace")
	clk.Step(time.Second)
	require.NoError(t, r.Reserve(ctx, "s", "garden-a/x3", "", 100))
	limit(r.Reserve(ctx, "s", "garden-a/x4", "", 100), "namespace")

	// One TTL (and the millisecond the ledger adds for rounding) after the last
	// was written, all entries have expired.
	clk.Step(testTTL + time.Second)
	for i := range 2 {
		require.NoError(t, r.Reserve(ctx, "s", fmt.Sprintf("garden-c/z%d", i+2), "", 100))
	}
	require.NoError(t, r.Reserve(ctx, "s", "garden-a/x4", "", 100))
	assert.Equal(t, []string{"garden-a.x4", "garden-c.z2", "garden-c.z3"}, sortedKeys(entries(t, c, "s")))
}

// Past its limits a replica writes no entry, so a refused Reserve holds no
// place; but a key whose place another replica's entry holds (its mutating
// webhook reserved it) is admitted, and only a refusal that stands counts.
func TestReserveAtLimitAdmitsOnlyAHeldPlace(t *testing.T) {
	c := newFake(nil)
	local := landscape(map[string]int64{"s": 3}, nil)
	m := &countingRecorder{}
	limited := newTestReserver(t, c, local, newClock(), func(o *Options) {
		o.Limits = cache.Limits{PerNamespace: 1, Total: 10}
		o.Metrics = m
	})
	other := newTestReserver(t, c, local, newClock(), noLimits)

	require.NoError(t, limited.Reserve(ctx, "s", "garden-a/first", "", 3))
	require.NoError(t, other.Reserve(ctx, "s", "garden-a/held", "", 3))
	require.NoError(t, limited.Reserve(ctx, "s", "garden-a/held", "", 3), "held by the other replica's entry")
	var le *cache.LimitError
	require.ErrorAs(t, limited.Reserve(ctx, "s", "garden-a/new", "", 3), &le, "the seed has room, but no entry may be written")
	assert.Equal(t, []string{"garden-a.first", "garden-a.held"}, sortedKeys(entries(t, c, "s")))
	assert.Equal(t, map[string]int{"apiserver/namespace": 1}, m.refused)
}

// With the default limits, 330 forged capacity reviews in one namespace
// write 50 entries.
func TestReserveDefaultLimitsBoundAFlood(t *testing.T) {
	c := newFake(nil)
	r := newTestReserver(t, c, landscape(map[string]int64{"s": 1000}, nil), newClock())
	refused := 0
	for i := range 330 {
		err := r.Reserve(ctx, "s", fmt.Sprintf("garden-dev/forged-%d", i), "", 1000)
		var le *cache.LimitError
		if errors.As(err, &le) {
			refused++
			continue
		}
		require.NoError(t, err)
	}
	assert.Len(t, entries(t, c, "s"), cache.DefaultMaxReservationsPerNamespace)
	assert.Equal(t, 330-cache.DefaultMaxReservationsPerNamespace, refused)
}
