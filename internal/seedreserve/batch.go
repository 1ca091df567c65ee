package seedreserve

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// One goroutine per seed with requests writes them in batches: a batch is
// decided on one GET and written in one update, so concurrent admissions for
// one seed on one replica cost one write, not one conflict each.

// queue batches one seed's requests on this replica.
type queue struct {
	mu      sync.Mutex
	pending []*request
	busy    bool // a run goroutine is draining pending

	// Only the run goroutine reads and writes these (lastcopy.go).
	last   *corev1.ConfigMap // as last read or written; nil: none or stale
	lastAt time.Time         // when last was read or written
	stale  time.Time         // when the copy was last found stale

	// contended: UnixNano of the last write another replica's beat
	// (contention.go); read by any goroutine.
	contended atomic.Int64
}

func (r *Reserver) queue(seed string) *queue {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.queues[seed]
	if q == nil {
		q = &queue{}
		r.queues[seed] = q
	}
	return q
}

// run commits the queued requests batch by batch until none are left.
func (r *Reserver) run(seed string, q *queue) {
	for {
		q.mu.Lock()
		batch := q.pending
		q.pending = nil
		if len(batch) == 0 {
			q.busy = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		r.metrics.observeBatch(len(batch))
		r.commit(seed, q, batch)
	}
}

// commit decides and writes one batch: GET, decide every request in order,
// one write; on a conflict with another replica, again from a fresh GET.
func (r *Reserver) commit(seed string, q *queue, batch []*request) {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	var lastErr error
	for attempt := 1; attempt <= r.maxAttempts; attempt++ {
		live := unanswered(batch, true)
		if len(live) == 0 {
			return
		}
		conflict := r.attempt(ctx, seed, q, live, attempt)
		if conflict == nil {
			return
		}
		lastErr = conflict
	}
	rest := unanswered(batch, false)
	answer(rest, nil, fmt.Errorf("reserving a place on seed %q: %d attempts conflicted with other replicas' updates of ConfigMap %s/%s (last: %v)",
		seed, r.maxAttempts, r.namespace, ConfigMapName(seed), lastErr))
}

// unanswered returns the requests of batch not answered yet, and, with
// skipAbandoned, only those whose caller still waits.
func unanswered(batch []*request, skipAbandoned bool) []*request {
	out := batch[:0:0]
	for _, req := range batch {
		if !req.answered && (!skipAbandoned || !req.abandoned.Load()) {
			out = append(out, req)
		}
	}
	return out
}

// attempt is one round of commit: it answers live unless the write
// conflicted with another replica's; then, after a short backoff, it returns
// that conflict for commit to try again (nil: every request is answered).
func (r *Reserver) attempt(ctx context.Context, seed string, q *queue, live []*request, attempt int) (conflict error) {
	if done, conflict := r.attemptFromCopy(ctx, seed, q, live); done {
		return conflict
	}
	q.last = nil
	cm, exists, err := r.get(ctx, seed)
	if err != nil {
		answer(live, nil, err)
		return nil
	}
	d := r.decide(seed, cm.Data, live, r.now())
	if !d.write {
		if exists {
			q.keep(cm, r.now())
		}
		answer(live, d.results, nil)
		return nil
	}
	cm.Data = d.data
	err = r.write(ctx, seed, cm, exists)
	switch {
	case err == nil:
		q.keep(cm, r.now())
		answer(live, d.results, nil)
		return nil
	case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) || (exists && apierrors.IsNotFound(err)):
		// Another replica wrote first (or created the object, or
		// someone deleted it): decide again on what is there now.
		r.metrics.conflict()
		q.markContended(r.now())
		r.log.V(1).Info("Reservation write conflicted; retrying", "seed", seed, "attempt", attempt, "requests", len(live), "error", err.Error())
		if err := sleep(ctx, jitter(attempt)); err != nil {
			answer(live, nil, fmt.Errorf("reserving a place on seed %q through the API server: %w", seed, err))
			return nil
		}
		return err
	default:
		// The denials stand (they were decided on what the API
		// server holds); the places could not be taken.
		answer(live, d.results, err)
		return nil
	}
}

// answer delivers results[i] to reqs[i]; a non-nil writeErr replaces every
// nil result (a place that was granted but could not be written).
func answer(reqs []*request, results []error, writeErr error) {
	for i, req := range reqs {
		var err error
		if results != nil {
			err = results[i]
		}
		if err == nil {
			err = writeErr
		}
		req.answered = true
		req.done <- err
	}
}

// jitter is a small random backoff that grows with the attempt: replicas
// that conflicted should not collide again at once.
func jitter(attempt int) time.Duration {
	return time.Millisecond + rand.N(time.Duration(attempt)*4*time.Millisecond)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
