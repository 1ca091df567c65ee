package cache

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
)

// Freshness tracks whether every informer feeding the Store is watching the
// API server. An informer's cache can only fall behind while it has no open
// watch: when a watch reopens, the API server replays every change since the
// informer's resource version (or answers "too old", and the informer lists
// again), so the cache is stale from the moment an informer's watch ends,
// fails to open or delivers an error event, until it has an open watch again.
// That covers a broken watch, a failed re-list and an API server that is
// restarting or unreachable alike, whether or not client-go reports the
// error to a watch error handler (it retries many in place silently).
//
// Limits: a connection that dies silently (no FIN or RST) is noticed only
// when client-go's HTTP/2 health check gives up on it (about 45s); and an API
// server whose own watch cache has stopped following etcd keeps our watch
// open while serving nothing new. Neither is visible from this side.
//
// Informers built through NewInformer are tracked from their creation, so a
// new informer is stale until its first watch opens.
type Freshness struct {
	now func() time.Time

	mu       sync.Mutex
	watchers []*trackedListWatch
}

// NewFreshness returns a tracker with no informers: fresh.
func NewFreshness() *Freshness {
	return &Freshness{now: time.Now}
}

// NewInformer is for crcache.Options.NewInformer: the informer controller-
// runtime would build by default, with its watches tracked, and without the
// namespace index for Shoots (informerIndexers).
func (f *Freshness) NewInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	return toolscache.NewSharedIndexInformer(f.Track(lw), obj, resync, informerIndexers(obj, indexers))
}

// Track returns lw with its watches tracked by f.
func (f *Freshness) Track(lw toolscache.ListerWatcher) toolscache.ListerWatcher {
	t := &trackedListWatch{
		inner:       toolscache.ToListerWatcherWithContext(lw),
		noWatchList: watchlist.DoesClientNotSupportWatchListSemantics(lw),
		f:           f,
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	t.down = f.now()
	f.watchers = append(f.watchers, t)
	return t
}

// Stale reports whether some tracked informer has no open watch now, and
// since when (the earliest such informer lost or never had its watch).
func (f *Freshness) Stale() (since time.Time, stale bool) {
	if f == nil {
		return time.Time{}, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.watchers {
		if t.open == 0 && (!stale || t.down.Before(since)) {
			since, stale = t.down, true
		}
	}
	return since, stale
}

// StaleFor is how long the cache has been stale at now; 0 when fresh.
func (f *Freshness) StaleFor(now time.Time) time.Duration {
	since, stale := f.Stale()
	if !stale {
		return 0
	}
	return max(now.Sub(since), 0)
}

func (f *Freshness) opened(t *trackedListWatch) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t.open++
	t.down = time.Time{}
}

func (f *Freshness) closed(t *trackedListWatch) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t.open--
	if t.open == 0 {
		t.down = f.now()
	}
}

// trackedListWatch is an informer's ListerWatcher whose watches report to f.
type trackedListWatch struct {
	inner       toolscache.ListerWatcherWithContext
	noWatchList bool
	f           *Freshness

	// Guarded by f.mu: open watches, and since when none is (zero while
	// one is).
	open int
	down time.Time
}

func (t *trackedListWatch) List(opts metav1.ListOptions) (runtime.Object, error) {
	return t.ListWithContext(context.Background(), opts)
}

func (t *trackedListWatch) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return t.inner.ListWithContext(ctx, opts)
}

func (t *trackedListWatch) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return t.WatchWithContext(context.Background(), opts)
}

func (t *trackedListWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := t.inner.WatchWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	t.f.opened(t)
	tw := &trackedWatch{inner: w, t: t, out: make(chan watch.Event), stop: make(chan struct{})}
	go tw.forward()
	return tw, nil
}

// IsWatchListSemanticsUnSupported passes on what the wrapped ListerWatcher
// says (the reflector asks before streaming its lists).
func (t *trackedListWatch) IsWatchListSemanticsUnSupported() bool { return t.noWatchList }

// trackedWatch forwards a watch's events and tells its trackedListWatch,
// once, when the watch ends: stopped, closed by the server, or an error
// event (after which the reflector drops it).
type trackedWatch struct {
	inner watch.Interface
	t     *trackedListWatch
	out   chan watch.Event
	stop  chan struct{}

	stopOnce, endOnce sync.Once
}

func (w *trackedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *trackedWatch) Stop() {
	w.stopOnce.Do(func() {
		// Before the reflector can open the next watch.
		w.end()
		close(w.stop)
		w.inner.Stop()
	})
}

func (w *trackedWatch) end() { w.endOnce.Do(func() { w.t.f.closed(w.t) }) }

func (w *trackedWatch) forward() {
	defer close(w.out)
	defer w.end()
	in := w.inner.ResultChan()
	for {
		select {
		case ev, ok := <-in:
			if !ok {
				return
			}
			if ev.Type == watch.Error {
				w.end()
			}
			select {
			case w.out <- ev:
			case <-w.stop:
				return
			}
		case <-w.stop:
			return
		}
	}
}
