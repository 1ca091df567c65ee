package pending

import (
	"cmp"
	"context"
	"math"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// Waking pending Shoots when a seed has room for them: a Seed appeared or
// changed in what placement reads, or a Shoot charged to it went away.

// maxUncheckedWakes bounds how many pending Shoots one wake queues without
// checking them (their full copy is not in Watched: evicted, or no
// Watched), on top of the room of a seed without a limit.
const maxUncheckedWakes = 64

// rewakeBuffer bounds the seeds waiting to be woken again; a full buffer
// drops the wake (the backoff still retries).
const rewakeBuffer = 256

// wake queues the pending Shoots seed could take now (placement.Admits on
// the Store's snapshot: every filter, the capacity and the strategy),
// oldest first, as many as it has free places. A Shoot already queued by
// another wake is left to that one, so that seeds appearing together wake
// different Shoots. The cost is one Admits per pending Shoot the watch
// holds a copy of (cache.MaxPendingShoots at most) per event that matters
// for placement, and the queued Shoots are bounded by the seed's room.
func (r *Reconciler) wake(q queue, seed string) {
	r.init()
	sd, ok := r.Store.Seed(seed)
	if !ok {
		return
	}
	snap := r.Store.Snapshot()
	room := int64(math.MaxInt64)
	if alloc, limited := sd.Allocatable(); limited {
		room = alloc - usage(snap, sd)
	}
	if room <= 0 {
		return
	}
	var unchecked []types.NamespacedName
	for _, key := range r.wakeCandidates() {
		if room == 0 {
			return
		}
		shoot, ok := r.watchedCopy(key)
		if !ok {
			unchecked = append(unchecked, key)
			continue
		}
		if placement.Admits(snap, shoot, r.Options, seed) && r.markWoken(key, seed) {
			q.Add(reconcile.Request{NamespacedName: key})
			room--
		}
	}
	// Those it cannot check, as far as the room goes.
	for _, key := range unchecked[:min(int64(len(unchecked)), room, maxUncheckedWakes)] {
		if r.markWoken(key, seed) {
			q.Add(reconcile.Request{NamespacedName: key})
		}
	}
}

// usage is the seed's usage in snap: Shoots and live reservations.
func usage(snap *placement.Snapshot, sd *placement.Seed) int64 {
	if snap.Usage == nil {
		return 0
	}
	return snap.Usage(sd)
}

// wakeCandidates are the pending Shoots no wake has queued since their last
// attempt, the longest known first.
func (r *Reconciler) wakeCandidates() []types.NamespacedName {
	type candidate struct {
		key   types.NamespacedName
		since int64
	}
	r.mu.Lock()
	out := make([]candidate, 0, len(r.pending))
	for key, st := range r.pending {
		if st.wokenFor == "" {
			out = append(out, candidate{key, st.since.UnixNano()})
		}
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.since, b.since), cmp.Compare(a.key.Namespace, b.key.Namespace), cmp.Compare(a.key.Name, b.key.Name))
	})
	keys := make([]types.NamespacedName, len(out))
	for i, c := range out {
		keys[i] = c.key
	}
	return keys
}

// watchedCopy is the watch's full copy of the pending Shoot, if it has one.
func (r *Reconciler) watchedCopy(key types.NamespacedName) (*api.Shoot, bool) {
	if r.Watched == nil {
		return nil, false
	}
	return r.Watched.Get(key)
}

// markWoken records that seed's wake queues key; false when another wake
// did meanwhile or key is no longer pending.
func (r *Reconciler) markWoken(key types.NamespacedName, seed string) bool {
	marked := false
	r.withState(key, func(st *shootState) {
		if st.wokenFor == "" {
			st.wokenFor, marked = seed, true
		}
	})
	return marked
}

// rewake wakes seed again: a Shoot woken for it took a place elsewhere.
func (r *Reconciler) rewake(seed string) {
	r.init()
	select {
	case r.rewakes <- event.GenericEvent{Object: &api.Seed{ObjectMeta: metav1.ObjectMeta{Name: seed}}}:
	default:
	}
}

func (r *Reconciler) rewakeHandler() handler.Funcs {
	return handler.Funcs{
		GenericFunc: func(_ context.Context, e event.GenericEvent, q queue) {
			r.wake(q, e.Object.GetName())
		},
	}
}
