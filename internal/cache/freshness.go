package cache

import (
	"context"
	"sync"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
)

// DefaultFreshnessGrace is how long after its last watch error a reflector
// whose resource version has not moved is considered to have recovered.
// It covers an idle cluster, where a successful re-list can return the same
// resource version as before the error. It is longer than client-go's
// reflector back-off (at most 30s, jittered up to twice that), so that a
// reflector that keeps failing reports a new error before the grace ends.
const DefaultFreshnessGrace = 2 * time.Minute

// ResourceVersioner is what Freshness reads of a reflector
// (*toolscache.Reflector): the resource version of its last list or watch.
type ResourceVersioner interface {
	LastSyncResourceVersion() string
}

// Freshness tracks whether the informers feeding the Store have lost their
// watch: stale from the first watch error since the last fresh state until
// every reflector that failed has listed or watched again (its resource
// version moved) or has gone Grace without another error, and every
// informer registration has synced.
//
// Limitation: client-go calls the watch error handler when ListAndWatch
// fails (a failed list, an expired resource version, a broken watch it does
// not retry in place). A watch that fails to reconnect with a retriable
// error (connection refused, 429) is retried inside ListAndWatch without
// calling the handler; it resumes from its resource version, so no event is
// lost, but the gap is not seen here.
//
// The zero value is not usable; use NewFreshness.
type Freshness struct {
	// Grace: see DefaultFreshnessGrace.
	Grace time.Duration

	mu sync.Mutex
	// since is the first error since fresh; zero when fresh.
	since time.Time
	// failed are the reflectors that failed since fresh, with the resource
	// version they had at their last error and when that was. The nil key
	// stands for MarkStale without a reflector.
	failed map[ResourceVersioner]failure
	synced func() bool
}

type failure struct {
	rv string
	at time.Time
}

// NewFreshness returns a fresh tracker. synced (may be nil) reports whether
// every informer registration has synced (Register's func).
func NewFreshness(synced func() bool) *Freshness {
	return &Freshness{Grace: DefaultFreshnessGrace, failed: map[ResourceVersioner]failure{}, synced: synced}
}

// SetSynced sets the synced func (Register's), when it is known only after
// the cache options were built.
func (f *Freshness) SetSynced(synced func() bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.synced = synced
}

// WatchErrorHandler returns a handler for crcache.Options
// .DefaultWatchErrorHandler: it records the error and then does what
// client-go's default handler does (log it).
func (f *Freshness) WatchErrorHandler() toolscache.WatchErrorHandlerWithContext {
	return func(ctx context.Context, r *toolscache.Reflector, err error) {
		if r == nil {
			f.markStale(time.Now(), nil)
			return
		}
		f.markStale(time.Now(), r)
		toolscache.DefaultWatchErrorHandler(ctx, r, err)
	}
}

// MarkStale records a watch error at now.
func (f *Freshness) MarkStale(now time.Time) { f.markStale(now, nil) }

// MarkReflectorStale records a watch error of r at now.
func (f *Freshness) MarkReflectorStale(now time.Time, r ResourceVersioner) { f.markStale(now, r) }

func (f *Freshness) markStale(now time.Time, r ResourceVersioner) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.since.IsZero() {
		f.since = now
	}
	fl := failure{at: now}
	if r != nil {
		fl.rv = r.LastSyncResourceVersion()
	}
	f.failed[r] = fl
}

// MarkFresh forgets every error: the informers have re-listed.
func (f *Freshness) MarkFresh() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.markFreshLocked()
}

func (f *Freshness) markFreshLocked() {
	f.since = time.Time{}
	clear(f.failed)
}

// Stale reports whether the cache is stale at now and since when (the
// first watch error since it was last fresh).
func (f *Freshness) Stale(now time.Time) (since time.Time, stale bool) {
	if f == nil {
		return time.Time{}, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.since.IsZero() {
		return time.Time{}, false
	}
	for r, fl := range f.failed {
		if r != nil && r.LastSyncResourceVersion() != fl.rv {
			delete(f.failed, r) // listed or watched since the error
			continue
		}
		if f.Grace > 0 && now.Sub(fl.at) >= f.Grace {
			delete(f.failed, r) // no error for a while: recovered
		}
	}
	if len(f.failed) > 0 || (f.synced != nil && !f.synced()) {
		return f.since, true
	}
	f.markFreshLocked()
	return time.Time{}, false
}

// StaleFor is how long the cache has been stale at now; 0 when fresh.
func (f *Freshness) StaleFor(now time.Time) time.Duration {
	since, stale := f.Stale(now)
	if !stale {
		return 0
	}
	if d := now.Sub(since); d > 0 {
		return d
	}
	return 0
}
