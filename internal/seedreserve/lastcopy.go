package seedreserve

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// A batch that writes is decided on the ConfigMap as this replica last read
// or wrote it, without a GET, while that copy served: the update is
// conditional on the copy's resourceVersion, so it succeeds only if the
// copy is what the API server holds, and the decision is then the one a
// fresh GET would have given. A stale copy (another replica wrote since)
// costs the refused update, and the seed is read first for staleCopyPause
// after, so that replicas writing the same seed in turn pay as before (not
// on the leader, which the others leave the seed to: contention.go).
//
// A batch that writes nothing is answered from a fresh GET (no update would
// check the copy), except a batch of only binds that keep their announced
// Shoot's admission entry (decision.kept) on a copy younger than the confirm
// window: that is answered from the copy, with no request at all. Safe,
// because another replica's write since the copy cannot have taken that
// entry away while the bind can still succeed (docs/design.md, "A bind that
// keeps the admission's entry"): no replica ends it by time before keptUntil
// says (MaxClockSkew included); one ends it early only when its cache shows
// the Shoot on the seed (it then holds its own place), deleted, or no longer
// pending past the window, and the bind, conditional on the resourceVersion
// this replica's cache holds, fails for a Shoot that changed; and the copy
// is no older than the cache the bind is decided on may lag (the package's
// assumption: every watch within the confirm window).

// staleCopyPause is how long after a stale copy the seed's batches read
// the ConfigMap first: other replicas are writing it.
const staleCopyPause = time.Second

// attemptFromCopy tries the batch on q's copy. done: it was answered, or
// the copy was stale (conflict, for commit's next attempt, which reads);
// otherwise the caller decides on a fresh GET.
func (r *Reserver) attemptFromCopy(ctx context.Context, seed string, q *queue, live []*request) (done bool, conflict error) {
	now := r.now()
	if q.last == nil || r.copyPaused(q, now) {
		return false, nil
	}
	cm := q.last.DeepCopy()
	d := r.decide(seed, cm.Data, live, now)
	if !d.write {
		if d.kept < len(live) || now.Sub(q.lastAt) >= r.life.ConfirmWindow {
			return false, nil
		}
		answer(live, d.results, nil)
		return true, nil
	}
	cm.Data = d.data
	switch err := r.write(ctx, seed, cm, true); {
	case err == nil:
		q.keep(cm, now)
		answer(live, d.results, nil)
		return true, nil
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		// Another replica wrote since (or someone deleted it): the next
		// attempt decides on what is there now, at once (no backoff:
		// nobody collided).
		r.metrics.conflict()
		q.markContended(now)
		q.last, q.stale = nil, now
		return true, err
	default:
		// Decided on a copy no update confirmed: only the error stands.
		q.last = nil
		answer(live, nil, err)
		return true, nil
	}
}

// keep makes cm, as read or written at at, the seed's copy.
func (q *queue) keep(cm *corev1.ConfigMap, at time.Time) {
	q.last, q.lastAt = cm, at
}
