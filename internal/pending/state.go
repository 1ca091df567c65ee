package pending

import (
	"time"

	"github.com/seedwarden/seedwarden/internal/placement"

	"k8s.io/apimachinery/pkg/types"
)

// What the controller keeps per pending Shoot, and how attempts count
// against its backoff.

// shootState is this replica's knowledge of one pending Shoot.
type shootState struct {
	// since is when this replica first saw it pending: the oldest pending
	// age (metrics) without API calls. The reduced Shoots of the cache
	// carry no creationTimestamp, and a new leader starts counting afresh.
	since time.Time
	// announcedRefused: binding it to its announced seed failed, so it is
	// decided afresh.
	announcedRefused bool
	// due is when the backoff's own next attempt runs, and wait the backoff
	// step that set it (zero before the first failure). An attempt an
	// event triggers before due is not a failure: only the attempts the
	// backoff schedules step it.
	due  time.Time
	wait time.Duration
	// outdated is a resourceVersion a bind found outdated (a conflict): the
	// watch's copy of that version is not decided from again, but it stays
	// in cache.PendingShoots, where the SeedAutoscaler counts it pending,
	// until the watch delivers a newer one.
	outdated string
	// wokenFor is the seed whose wake queued it (wake.go), until its
	// attempt ends.
	wokenFor string
	// codes are the reason codes of its last attempt that found no seed
	// (placement.CodeSummary.All; nil after one that found a seed), with
	// its provider type and region: the pending-reasons metric (reasons.go).
	codes            []placement.ReasonCode
	provider, region string
}

// track records a pending Shoot (idempotent).
func (r *Reconciler) track(key types.NamespacedName) {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.pending[key]; !ok {
		r.pending[key] = &shootState{since: r.Now()}
		r.Metrics.SetPending(len(r.pending))
	}
}

// forget drops a Shoot that is no longer pending (bound, deleted, another
// scheduler's), with its backoff and the watch's copy of it.
func (r *Reconciler) forget(key types.NamespacedName) {
	r.init()
	if r.Watched != nil {
		r.Watched.Forget(key)
	}
	r.backoff.Forget(key)
	r.conflicts.Forget(key)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.pending[key]; ok {
		delete(r.pending, key)
		r.Metrics.SetPending(len(r.pending))
	}
}

// withState runs f on key's state under the lock, if key is tracked.
func (r *Reconciler) withState(key types.NamespacedName, f func(st *shootState)) {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, ok := r.pending[key]; ok {
		f(st)
	}
}

// afterUnschedulable is the wait after an attempt found no seed. Only the
// attempt the backoff scheduled (or the first) is a failure and steps the
// backoff; one an event triggered earlier leaves the schedule as it was, so
// a flurry of Seed and Shoot events cannot run a Shoot's backoff up to its
// cap.
func (r *Reconciler) afterUnschedulable(key types.NamespacedName) time.Duration {
	now := r.Now()
	var wait time.Duration
	tracked := false
	r.withState(key, func(st *shootState) {
		tracked = true
		if now.Before(st.due) {
			wait = st.due.Sub(now)
			return
		}
		wait = r.step(st, key, now)
	})
	if !tracked {
		// Forgotten meanwhile: the backoff alone.
		wait = r.backoff.When(key)
	}
	return wait
}

// afterBindError is the wait after a bind failed other than by a refusal
// the conflict backoff covers: always a failure.
func (r *Reconciler) afterBindError(key types.NamespacedName) time.Duration {
	now := r.Now()
	var wait time.Duration
	tracked := false
	r.withState(key, func(st *shootState) { wait, tracked = r.step(st, key, now), true })
	if !tracked {
		wait = r.backoff.When(key)
	}
	return wait
}

// step counts a failure: the next backoff step, due from now.
func (r *Reconciler) step(st *shootState, key types.NamespacedName, now time.Time) time.Duration {
	wait := r.backoff.When(key)
	st.due, st.wait = now.Add(wait), wait
	return wait
}

// markOutdated records that a bind found version rv of the Shoot outdated.
func (r *Reconciler) markOutdated(key types.NamespacedName, rv string) {
	r.withState(key, func(st *shootState) { st.outdated = rv })
}

func (r *Reconciler) outdatedVersion(key types.NamespacedName) string {
	var rv string
	r.withState(key, func(st *shootState) { rv = st.outdated })
	return rv
}

// wokenFor is the seed whose wake queued key ("" for none). The mark stays
// while the attempt goes on (short retries after a conflict or a refusal
// included), so that other wakes leave the Shoot to it; it ends with the
// Shoot (forget), or with clearWoken when the attempt ends without a place.
func (r *Reconciler) wokenFor(key types.NamespacedName) string {
	var seed string
	r.withState(key, func(st *shootState) { seed = st.wokenFor })
	return seed
}

// clearWoken ends key's wake mark: its attempt found no place, or failed.
// Its seed is not woken again: the Shoot that the seed admitted did not fit
// it after all, and passing the wake on could go round in circles.
func (r *Reconciler) clearWoken(key types.NamespacedName) {
	r.withState(key, func(st *shootState) { st.wokenFor = "" })
}

// Pending returns the number of pending Shoots the controller knows of.
func (r *Reconciler) Pending() int {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}

// Backoff returns the backoff step a pending Shoot is at: the wait its last
// failed attempt set (0 before any), and whether the Shoot is tracked.
func (r *Reconciler) Backoff(key types.NamespacedName) (time.Duration, bool) {
	var wait time.Duration
	tracked := false
	r.withState(key, func(st *shootState) { wait, tracked = st.wait, true })
	return wait, tracked
}
