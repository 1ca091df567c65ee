package cache

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeLW hands out the watches it is given, or fails when it has none.
type fakeLW struct {
	watches chan *watch.FakeWatcher
}

// IsWatchListSemanticsUnSupported: a plain list, then watches (the
// tracked wrapper must pass this on, or the informer never syncs).
func (l *fakeLW) IsWatchListSemanticsUnSupported() bool { return true }

func newFakeLW() *fakeLW { return &fakeLW{watches: make(chan *watch.FakeWatcher, 4)} }

func (l *fakeLW) List(metav1.ListOptions) (runtime.Object, error) {
	return &corev1.ConfigMapList{}, nil
}

func (l *fakeLW) Watch(metav1.ListOptions) (watch.Interface, error) {
	select {
	case w := <-l.watches:
		return w, nil
	default:
		return nil, errors.New("connection refused")
	}
}

func newTestFreshness(t0 time.Time) (*Freshness, *clocktesting.FakeClock) {
	c := clocktesting.NewFakeClock(t0)
	f := NewFreshness()
	f.now = c.Now
	return f, c
}

// eventually waits for cond, for the watch forwarding goroutine.
func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 2*time.Second, time.Millisecond, msg)
}

func TestFreshnessFollowsWatches(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f, clock := newTestFreshness(t0)
	assert.Zero(t, f.StaleFor(t0), "no informers: fresh")

	inner := newFakeLW()
	lw := toolscache.ToListerWatcherWithContext(f.Track(inner))
	ctx := context.Background()
	assert.Equal(t, 5*time.Second, f.StaleFor(t0.Add(5*time.Second)), "stale from creation until the first watch opens")

	_, err := lw.WatchWithContext(ctx, metav1.ListOptions{})
	require.Error(t, err, "a watch that fails to open")
	assert.Equal(t, 6*time.Second, f.StaleFor(t0.Add(6*time.Second)), "still counted from creation")

	fw := watch.NewFake()
	inner.watches <- fw
	w, err := lw.WatchWithContext(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Zero(t, f.StaleFor(t0.Add(7*time.Second)), "an open watch: fresh")

	// Events pass through unchanged.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	go fw.Add(cm)
	ev := <-w.ResultChan()
	assert.Equal(t, watch.Added, ev.Type)
	assert.Same(t, cm, ev.Object)

	// The server ends the watch: stale from then.
	clock.SetTime(t0.Add(10 * time.Second))
	fw.Stop()
	_, open := <-w.ResultChan()
	assert.False(t, open, "the closed watch is closed for the reflector too")
	assert.Equal(t, 3*time.Second, f.StaleFor(t0.Add(13*time.Second)))
	w.Stop() // the reflector stops it too: counted once
	assert.Equal(t, 3*time.Second, f.StaleFor(t0.Add(13*time.Second)))

	fw2 := watch.NewFake()
	inner.watches <- fw2
	w2, err := lw.WatchWithContext(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Zero(t, f.StaleFor(t0.Add(14*time.Second)), "reopened")

	// An error event ("resource version too old") makes it stale at once,
	// before the reflector stops the watch; the event still arrives.
	clock.SetTime(t0.Add(20 * time.Second))
	go fw2.Error(&metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired})
	ev = <-w2.ResultChan()
	assert.Equal(t, watch.Error, ev.Type)
	assert.Equal(t, time.Second, f.StaleFor(t0.Add(21*time.Second)))

	// The reflector stops it and opens the next one.
	w2.Stop()
	fw3 := watch.NewFakeWithChanSize(1, false)
	inner.watches <- fw3
	w3, err := lw.WatchWithContext(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Zero(t, f.StaleFor(t0.Add(22*time.Second)))

	// Stopped by the reflector (resync, shutdown) while an event waits.
	fw3.Add(cm)
	clock.SetTime(t0.Add(30 * time.Second))
	w3.Stop()
	assert.Equal(t, 5*time.Second, f.StaleFor(t0.Add(35*time.Second)))
	eventually(t, func() bool {
		_, open := <-w3.ResultChan()
		return !open
	}, "a stopped watch's channel closes")
}

func TestFreshnessEarliestInformer(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f, clock := newTestFreshness(t0)
	ctx := context.Background()
	open := func() (*watch.FakeWatcher, watch.Interface) {
		inner := newFakeLW()
		lw := toolscache.ToListerWatcherWithContext(f.Track(inner))
		fw := watch.NewFake()
		inner.watches <- fw
		w, err := lw.WatchWithContext(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		return fw, w
	}
	fa, _ := open()
	fb, _ := open()
	assert.Zero(t, f.StaleFor(t0))

	clock.SetTime(t0.Add(time.Second))
	fa.Stop()
	eventually(t, func() bool { return f.StaleFor(t0.Add(2*time.Second)) == time.Second }, "a's watch ended at 1s")
	clock.SetTime(t0.Add(3 * time.Second))
	fb.Stop()
	eventually(t, func() bool {
		since, stale := f.Stale()
		return stale && since.Equal(t0.Add(time.Second))
	}, "stale since the earliest end")
}

func TestFreshnessNil(t *testing.T) {
	var f *Freshness
	assert.Zero(t, f.StaleFor(time.Now()))
}

// TestFreshnessInformer runs a real informer on a tracked ListerWatcher: it
// syncs, is fresh while watching, and stale once its watch ends and cannot
// be reopened.
func TestFreshnessInformer(t *testing.T) {
	f := NewFreshness()
	inner := newFakeLW()
	fw := watch.NewFake()
	inner.watches <- fw
	inf := f.NewInformer(inner, &corev1.ConfigMap{}, 0, toolscache.Indexers{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go inf.RunWithContext(ctx)
	eventually(t, inf.HasSynced, "synced")
	eventually(t, func() bool { return f.StaleFor(time.Now()) == 0 }, "fresh while watching")

	fw.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "garden"}})
	eventually(t, func() bool { return len(inf.GetStore().ListKeys()) == 1 }, "events reach the informer")

	fw.Stop() // no next watch: the reflector's reconnects fail
	eventually(t, func() bool { return f.StaleFor(time.Now()) > 0 }, "stale once the watch ended")
	inner.watches <- watch.NewFake()
	eventually(t, func() bool { return f.StaleFor(time.Now()) == 0 }, "fresh once the reflector reconnected")
}
