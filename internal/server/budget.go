package server

import (
	"context"
	"slices"
	"sync"
	"time"
)

// SmallRequestBytes is the largest request that may pass larger ones waiting
// for the budget. A Shoot's AdmissionReview is about 10 KB, a kubeconfig
// Secret's a few: the everyday requests are never stuck behind a queue of
// multi-megabyte ones.
const SmallRequestBytes = 64 << 10

// SmallRequestReserve is the part of the budget only small requests may
// take (less when the budget would otherwise not hold one request of the
// body limit): however many large requests are in flight or stalled in
// sending their bodies, 16 small ones (100 Shoot reviews) still get in.
const SmallRequestReserve = 1 << 20

// Budget outcomes, as BudgetMetrics receives them.
const (
	// BudgetQueued: the request waited for room and then got it.
	BudgetQueued = "queued"
	// BudgetRefused: no room within the wait; the request was refused.
	BudgetRefused = "refused"
	// BudgetStreamed: no room at once; the request was read as it arrived,
	// without the budget (GuardOrStream).
	BudgetStreamed = "streamed"
)

// BudgetMetrics records what the budget did (internal/metrics implements
// it). Only requests that did not fit at once are reported.
type BudgetMetrics interface {
	ObserveRequestBudget(outcome string)
}

// Budget bounds the bytes of the request bodies being handled at once
// (server.maxRequestBytesInFlight): each handler holds its body's bytes from
// before the body is read until it returns, and what it decodes grows with
// them, so bounding the bytes bounds the memory of the requests in flight.
// A request that does not fit waits up to wait for room, then is refused.
//
// Order: larger requests are served first come, first served, so a large one
// is not passed over forever by others of its size, and together they take
// at most the limit less SmallRequestReserve. Requests of at most
// SmallRequestBytes are let in whenever they fit in the whole limit, even
// past waiting larger ones.
type Budget struct {
	limit int64
	// largeLimit is what larger requests may take together.
	largeLimit int64
	wait       time.Duration
	metrics    BudgetMetrics

	mu       sync.Mutex
	inFlight int64
	queue    []*budgetWaiter
}

type budgetWaiter struct {
	n       int64
	granted chan struct{} // closed once the bytes are taken for it
}

// NewBudget returns a Budget of limit bytes whose requests wait up to wait
// for room; m may be nil. Requests larger than SmallRequestBytes get at most
// limit-SmallRequestReserve together, but always room for one of largest
// bytes (the body limit).
func NewBudget(limit, largest int64, wait time.Duration, m BudgetMetrics) *Budget {
	return &Budget{limit: limit, largeLimit: min(limit, max(limit-SmallRequestReserve, largest)), wait: wait, metrics: m}
}

// Limit is the budget in bytes.
func (b *Budget) Limit() int64 { return b.limit }

// Wait is how long a request waits for room.
func (b *Budget) Wait() time.Duration { return b.wait }

// InFlight is the number of bytes taken now.
func (b *Budget) InFlight() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inFlight
}

// acquire takes n bytes, waiting up to the budget's wait or until ctx ends;
// it reports whether it got them. The caller gives them back with release.
// A large request is charged at most what large requests may take (config
// validation keeps the largest body below it).
func (b *Budget) acquire(ctx context.Context, n int64) bool {
	n = b.charge(n)
	b.mu.Lock()
	if b.fits(n) && (isSmall(n) || !b.largeWaiting()) {
		b.inFlight += n
		b.mu.Unlock()
		return true
	}
	if b.wait <= 0 {
		b.mu.Unlock()
		b.observe(BudgetRefused)
		return false
	}
	w := &budgetWaiter{n: n, granted: make(chan struct{})}
	b.queue = append(b.queue, w)
	b.mu.Unlock()

	t := time.NewTimer(b.wait)
	defer t.Stop()
	select {
	case <-w.granted:
		b.observe(BudgetQueued)
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.granted: // granted while timing out: keep it
		b.observe(BudgetQueued)
		return true
	default:
	}
	b.remove(w)
	// A large request leaving the head of the queue may let those behind it in.
	b.grant()
	b.observe(BudgetRefused)
	return false
}

// tryAcquire takes n bytes if they fit at once, as acquire would let them
// in without waiting; a request that finds no room is reported as streamed
// (its handler reads it without the budget: GuardOrStream).
func (b *Budget) tryAcquire(n int64) bool {
	n = b.charge(n)
	b.mu.Lock()
	ok := b.fits(n) && (isSmall(n) || !b.largeWaiting())
	if ok {
		b.inFlight += n
	}
	b.mu.Unlock()
	if !ok {
		b.observe(BudgetStreamed)
	}
	return ok
}

// release gives back n bytes taken by acquire and lets waiting requests in.
func (b *Budget) release(n int64) {
	n = b.charge(n)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inFlight -= n
	b.grant()
}

func (b *Budget) charge(n int64) int64 {
	if isSmall(n) {
		return n
	}
	return min(n, b.largeLimit)
}

// fits reports whether n more bytes are within the limit, or for a large
// request within the limit less the reserve.
func (b *Budget) fits(n int64) bool {
	if isSmall(n) {
		return b.inFlight+n <= b.limit
	}
	return b.inFlight+n <= b.largeLimit
}

func isSmall(n int64) bool { return n <= SmallRequestBytes }

func (b *Budget) largeWaiting() bool {
	for _, w := range b.queue {
		if !isSmall(w.n) {
			return true
		}
	}
	return false
}

// grant lets in, in order, the waiting requests that fit: larger ones only
// while none before them is still waiting, small ones whenever they fit.
// Called with mu held.
func (b *Budget) grant() {
	largeBlocked := false
	kept := b.queue[:0]
	for _, w := range b.queue {
		small := isSmall(w.n)
		if b.fits(w.n) && (small || !largeBlocked) {
			b.inFlight += w.n
			close(w.granted)
			continue
		}
		if !small {
			largeBlocked = true
		}
		kept = append(kept, w)
	}
	clear(b.queue[len(kept):])
	b.queue = kept
}

// remove drops w from the queue. Called with mu held.
func (b *Budget) remove(w *budgetWaiter) {
	if i := slices.Index(b.queue, w); i >= 0 {
		b.queue = slices.Delete(b.queue, i, i+1)
	}
}

func (b *Budget) observe(outcome string) {
	if b.metrics != nil {
		b.metrics.ObserveRequestBudget(outcome)
	}
}
