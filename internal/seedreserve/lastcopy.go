package seedreserve

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// A batch that writes is decided on the ConfigMap as this replica last read
// or wrote it, without a GET, while that copy served: the update is
// conditional on the copy's resourceVersion, so it succeeds only if the
// copy is what the API server holds, and the decision is then the one a
// fresh GET would have given. A stale copy (another replica wrote since)
// costs the refused update, and the seed is read first for staleCopyPause
// after, so that replicas writing the same seed in turn pay as before. A
// batch that writes nothing (a retried request, the bind of an announced
// Shoot) answers only from a fresh GET: no update would have checked it.

// staleCopyPause is how long after a stale copy the seed's batches read
// the ConfigMap first: other replicas are writing it.
const staleCopyPause = time.Second

// attemptFromCopy tries the batch on q's copy. done: it was answered, or
// the copy was stale (conflict, for commit's next attempt, which reads);
// otherwise the caller decides on a fresh GET.
func (r *Reserver) attemptFromCopy(ctx context.Context, seed string, q *queue, live []*request) (done bool, conflict error) {
	now := r.now()
	if q.last == nil || now.Sub(q.stale) < staleCopyPause {
		return false, nil
	}
	cm := q.last.DeepCopy()
	d := r.decide(seed, cm.Data, live, now)
	if !d.write {
		return false, nil
	}
	cm.Data = d.data
	switch err := r.write(ctx, seed, cm, true); {
	case err == nil:
		q.last = cm
		answer(live, d.results, nil)
		return true, nil
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		// Another replica wrote since (or someone deleted it): the next
		// attempt decides on what is there now, at once (no backoff:
		// nobody collided).
		r.metrics.conflict()
		q.last, q.stale = nil, now
		return true, err
	default:
		// Decided on a copy no update confirmed: only the error stands.
		q.last = nil
		answer(live, nil, err)
		return true, nil
	}
}
