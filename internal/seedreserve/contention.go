package seedreserve

import (
	"fmt"
	"time"
)

// Replicas behind one Service all choose the least-used seed, so at a high
// rate they write the same seed's ConfigMap in turn and most of their
// updates are refused: each costs a GET and another update, and three
// replicas place slower than one. With Options.Leading the replica whose
// retry controller leads holds a contended seed: one that does not lead
// stays out of a seed for deferAfterConflict once another replica's write
// beat its own there (Defers). Its mutating webhook admits the Shoot
// without a seed, and the leader's retry controller reserves it, batched
// with the leader's own admissions in one queue. The leader, whose copy
// the others then rarely change, decides on its copy again at once after a
// conflict instead of reading first for staleCopyPause. Nothing is placed
// without a reservation, so no guarantee depends on any of it.

// deferAfterConflict is how long a replica that does not lead stays out of
// a seed after another replica's write beat its own there. Each return
// costs the leader one refused update and a read (its copy went stale), so
// it is long against the leader's batches (milliseconds) and short against
// a burst.
const deferAfterConflict = 10 * time.Second

// markContended records that another replica's write beat this replica's
// for the seed at at.
func (q *queue) markContended(at time.Time) {
	q.contended.Store(at.UnixNano())
}

// Defers reports whether this replica leaves the reservation of a place on
// seed to the leader (ClusterPlacer.Defer): with Options.Leading, while it
// does not lead and another replica's write of the seed's ConfigMap beat
// one of its own within deferAfterConflict.
func (r *Reserver) Defers(seed string) bool {
	if r.leading == nil || r.leading() {
		return false
	}
	r.mu.Lock()
	q := r.queues[seed]
	r.mu.Unlock()
	if q == nil {
		return false
	}
	at := q.contended.Load()
	return at != 0 && r.now().Sub(time.Unix(0, at)) < deferAfterConflict
}

// copyPaused reports whether q's batches read the ConfigMap first at now,
// after a stale copy: for staleCopyPause, except on the leader (Defers).
func (r *Reserver) copyPaused(q *queue, now time.Time) bool {
	if r.leading != nil && r.leading() {
		return false
	}
	return now.Sub(q.stale) < staleCopyPause
}

// DeferredError is why ClusterPlacer reserved nothing on Seed: other
// replicas are writing its reservations and this one does not lead.
type DeferredError struct{ Seed string }

func (e *DeferredError) Error() string {
	return fmt.Sprintf("other replicas are writing the reservations of seed %q, so this replica, which does not lead, leaves the place to the leader", e.Seed)
}
