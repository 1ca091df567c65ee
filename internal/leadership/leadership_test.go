package leadership

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Short durations keep the tests quick; their ratios are the defaults'
// (the lease outlasts the renew deadline by half), which is the margin
// that lets a lost leader stop before another replica may lead.
const (
	testLease  = 2 * time.Second
	testRenew  = time.Second
	testRetry  = 200 * time.Millisecond
	waitFor    = 15 * time.Second
	pollPeriod = 10 * time.Millisecond
)

// stubCache hands out one informer that counts its event handlers.
type stubCache struct {
	cache.Cache
	informer *stubInformer
}

func newStubCache() *stubCache { return &stubCache{informer: &stubInformer{}} }

func (c *stubCache) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return c.informer, nil
}

type stubInformer struct {
	cache.Informer
	mu       sync.Mutex
	handlers map[*stubRegistration]bool
}

type stubRegistration struct {
	toolscache.ResourceEventHandlerRegistration
}

func (i *stubInformer) AddEventHandlerWithOptions(toolscache.ResourceEventHandler, toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.handlers == nil {
		i.handlers = map[*stubRegistration]bool{}
	}
	r := &stubRegistration{}
	i.handlers[r] = true
	return r, nil
}

func (i *stubInformer) RemoveEventHandler(h toolscache.ResourceEventHandlerRegistration) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	delete(i.handlers, h.(*stubRegistration))
	return nil
}

func (i *stubInformer) count() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return len(i.handlers)
}

// countingRecorder is a Recorder.
type countingRecorder struct {
	mu    sync.Mutex
	ended map[string]int
}

func (r *countingRecorder) CountLeadershipEnded(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended == nil {
		r.ended = map[string]int{}
	}
	r.ended[reason]++
}

func (r *countingRecorder) get(reason string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ended[reason]
}

// replica is one process's runner, its work and what it observed.
type replica struct {
	lock    *memLock
	cache   *stubCache
	metrics *countingRecorder
	runner  *Runner
	running atomic.Int32 // terms whose work runs now
	stop    context.CancelFunc
	done    chan struct{} // closed when Start returned, with err
	err     error
}

// leading counts the replicas whose work runs now, across a test.
type leading struct {
	now, max atomic.Int32
}

func (l *leading) enter() {
	n := l.now.Add(1)
	for {
		m := l.max.Load()
		if n <= m || l.max.CompareAndSwap(m, n) {
			return
		}
	}
}

// newReplica is a runner on l whose work adds an event handler to its
// cache, as a controller's source does, and runs until its term ends;
// fail, if set, makes a term's work fail instead.
func newReplica(t *testing.T, l *lease, id string, all *leading, fail func(term int) bool) *replica {
	r := &replica{lock: &memLock{l: l, id: id}, cache: newStubCache(), metrics: &countingRecorder{}}
	r.runner = New(r.cache, Options{
		Lock: r.lock, Name: "test", Log: testr.New(t).WithValues("replica", id), Metrics: r.metrics,
		LeaseDuration: testLease, RenewDeadline: testRenew, RetryPeriod: testRetry,
	})
	r.runner.Add("work", func(ctx context.Context, c cache.Cache) error {
		i, err := c.GetInformer(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := i.AddEventHandlerWithOptions(toolscache.ResourceEventHandlerFuncs{}, toolscache.HandlerOptions{}); err != nil {
			return err
		}
		r.running.Add(1)
		all.enter()
		defer func() {
			all.now.Add(-1)
			r.running.Add(-1)
		}()
		if fail != nil && fail(r.runner.Terms()) {
			return errors.New("cannot start")
		}
		<-ctx.Done()
		return nil
	})
	return r
}

// start runs the runner until shutdown, or until the test ends: its logger
// is the test's, which must not be written once the test is done.
func (r *replica) start(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	r.stop, r.done = stop, make(chan struct{})
	go func() { r.err = r.runner.Start(ctx); close(r.done) }()
	t.Cleanup(func() { r.shutdown(t) })
}

// shutdown stops the runner and waits for Start to return.
func (r *replica) shutdown(t *testing.T) {
	t.Helper()
	r.stop()
	select {
	case <-r.done:
		assert.NoError(t, r.err, "Start")
	case <-time.After(waitFor):
		t.Fatal("the runner does not stop")
	}
}

func (r *replica) alive() bool {
	select {
	case <-r.done:
		return false
	default:
		return true
	}
}

func (r *replica) leads(l *lease) bool {
	return r.runner.Leading() && r.running.Load() == 1 && l.holder() == r.lock.id
}

// A leader that cannot renew its Lease stops its work and nothing else:
// its runner stands again, the work's handlers leave the shared informer,
// the other replica takes over once the Lease expired, never while the
// first still works. The first, back, follows; it leads again when the
// second shuts down and releases the Lease.
func TestLostLeaseEndsTheTermOnly(t *testing.T) {
	l := &lease{}
	var all leading
	a := newReplica(t, l, "a", &all, nil)
	b := newReplica(t, l, "b", &all, nil)
	a.start(t)
	require.Eventually(t, func() bool { return a.leads(l) }, waitFor, pollPeriod, "a does not lead")
	assert.Equal(t, 1, a.cache.informer.count(), "the term's handler")
	b.start(t)
	time.Sleep(2 * testLease)
	assert.False(t, b.runner.Leading(), "b leads while a renews")

	a.lock.setDown(true)
	require.Eventually(t, func() bool { return b.leads(l) }, waitFor, pollPeriod, "b does not take over")
	assert.False(t, a.runner.Leading())
	assert.Zero(t, a.running.Load(), "a's work still runs")
	assert.Zero(t, a.cache.informer.count(), "a's term left its handler on the informer")
	assert.True(t, a.alive(), "a's runner returned")
	assert.Equal(t, 1, a.metrics.get(EndLeaseLost))
	assert.Equal(t, int32(1), all.max.Load(), "two replicas worked at once")

	a.lock.setDown(false)
	time.Sleep(2 * testLease)
	assert.False(t, a.runner.Leading(), "a leads while b renews")
	assert.Equal(t, 1, a.runner.Terms())

	b.shutdown(t)
	assert.NotEqual(t, "b", l.holder(), "b kept the Lease on shutdown")
	// Released, so a takes over well before the lease duration elapses
	// (it retries every retry period).
	require.Eventually(t, func() bool { return a.leads(l) }, testLease, pollPeriod, "a does not lead again at once")
	assert.Equal(t, 2, a.runner.Terms())
	assert.Equal(t, 1, a.cache.informer.count(), "the new term's handler")
	assert.Zero(t, b.metrics.get(EndLeaseLost)+b.metrics.get(EndWorkFailed), "b's shutdown counted as a lost term")
	assert.Equal(t, int32(1), all.max.Load(), "two replicas worked at once")
}

// Work that fails ends the term and gives up the Lease, so another
// replica takes over at once; the failed one stands again later.
func TestFailedWorkReleasesTheLease(t *testing.T) {
	l := &lease{}
	var all leading
	a := newReplica(t, l, "a", &all, func(term int) bool { return term == 1 })
	a.start(t)
	require.Eventually(t, func() bool { return a.metrics.get(EndWorkFailed) == 1 }, waitFor, pollPeriod, "a's failed term is not counted")
	require.Eventually(t, func() bool { return l.holder() == "" }, waitFor, pollPeriod, "a keeps the Lease")
	assert.True(t, a.alive())

	b := newReplica(t, l, "b", &all, nil)
	b.start(t)
	require.Eventually(t, func() bool { return b.leads(l) }, waitFor, pollPeriod, "b does not take the released Lease")

	b.shutdown(t)
	require.Eventually(t, func() bool { return a.leads(l) }, waitFor, pollPeriod, "a does not stand again")
	assert.Equal(t, 2, a.runner.Terms())
}

// Shutdown stops the work and releases the Lease.
func TestShutdownReleasesTheLease(t *testing.T) {
	l := &lease{}
	var all leading
	a := newReplica(t, l, "a", &all, nil)
	a.start(t)
	require.Eventually(t, func() bool { return a.leads(l) }, waitFor, pollPeriod)
	a.shutdown(t)
	assert.Empty(t, l.holder(), "the Lease is not released")
	assert.Zero(t, a.running.Load())
	assert.Zero(t, a.cache.informer.count())
	assert.Zero(t, a.metrics.get(EndLeaseLost)+a.metrics.get(EndWorkFailed))
}

// A replica that lost the Lease never writes over it: by then another
// replica may hold it. Only shutdown and failed work release it.
func TestReleaseGuard(t *testing.T) {
	release := resourcelock.LeaderElectionRecord{LeaseDurationSeconds: 1}
	for _, tc := range []struct {
		name               string
		shutdown, resigned bool
		released           bool
	}{
		{name: "lost", released: false},
		{name: "shutdown", shutdown: true, released: true},
		{name: "work failed", resigned: true, released: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &lease{}
			lock := &memLock{l: l, id: "a"}
			require.NoError(t, lock.Create(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: "a"}))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			g := &releaseGuard{Interface: lock, shutdown: ctx}
			if tc.shutdown {
				cancel()
			}
			g.resigned.Store(tc.resigned)
			err := g.Update(context.Background(), release)
			if tc.released {
				assert.NoError(t, err)
				assert.Empty(t, l.holder())
			} else {
				assert.ErrorIs(t, err, errLostNotReleased)
				assert.Equal(t, "a", l.holder())
			}
		})
	}
	// Renewals pass, and mark the Lease acquired.
	l := &lease{}
	g := &releaseGuard{Interface: &memLock{l: l, id: "a"}, shutdown: context.Background()}
	require.NoError(t, g.Create(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: "a"}))
	assert.True(t, g.acquired.Load())
	require.NoError(t, g.Update(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: "a"}))
}

// Without an election the work runs at once, again after a pause when it
// failed, until shutdown.
func TestNoElection(t *testing.T) {
	var terms atomic.Int32
	r := New(newStubCache(), Options{Log: testr.New(t), LeaseDuration: testRetry})
	r.Add("work", func(ctx context.Context, _ cache.Cache) error {
		if terms.Add(1) == 1 {
			return errors.New("cannot start")
		}
		<-ctx.Done()
		return nil
	})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Start(ctx) }()
	require.Eventually(t, func() bool { return terms.Load() == 2 && r.Leading() }, waitFor, pollPeriod, "the work is not started again")
	stop()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(waitFor):
		t.Fatal("the runner does not stop")
	}
	assert.False(t, r.Leading())
}

// No work: nothing to elect, Start returns at once.
func TestNoWork(t *testing.T) {
	assert.NoError(t, New(newStubCache(), Options{Lock: &memLock{l: &lease{}, id: "a"}}).Start(context.Background()))
}
