package seedreserve

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/seedwarden/seedwarden/internal/cache"
)

// The ledger bounds the entries this replica writes (Options.Limits), like
// cache.Store bounds its reservations: a forged capacity review must not be
// able to fill the ConfigMaps. It counts per replica, as the Store does: the
// entries of all replicas together are bounded by the replicas times the
// limits. Counting across replicas would need a read of every seed's
// ConfigMap per reservation.

// pruneEvery bounds how often a request at a limit looks for entries that
// ended: a flood at the limit would otherwise scan the ledger, and take the
// cache's lock per seed, on every request. A slot that ends is found at
// most this much later.
const pruneEvery = time.Second

// ledger counts the entries this replica wrote, by Shoot key: the
// unconfirmed ones against every limit, the confirmed ones (their Shoot waits
// without a seed, or exists: a binding) against Limits.PerNamespace only.
type ledger struct {
	limits cache.Limits
	life   cache.Lifetime
	local  LocalShoots

	mu        sync.Mutex
	entries   map[string]ledgerEntry // by Shoot key "<namespace>/<name>"
	held      cache.HeldCounts       // of the unconfirmed entries
	confirmed cache.HeldCounts       // of the confirmed ones
	pruned    time.Time              // last pruneLocked
}

type ledgerEntry struct {
	seed string
	cache.Claim
	id        string // the identity it was taken for
	confirmed bool
	taken     time.Time
	// expires is no earlier than the written entry's expiry; zero while
	// the request is decided.
	expires time.Time
}

func newLedger(limits cache.Limits, life cache.Lifetime, local LocalShoots) *ledger {
	return &ledger{limits: limits.WithDefaults(), life: life, local: local,
		entries: map[string]ledgerEntry{}, held: cache.NewHeldCounts(), confirmed: cache.NewHeldCounts()}
}

// take counts a new entry for h on seed, or returns the *cache.LimitError
// that refuses it. An entry for a Shoot that exists (h.Exists, and the cache
// holds a Shoot of that name: a forged review's word is not enough) is never
// refused: it counts as confirmed. The same request counted already within
// the confirm window (sent again, or the mutating and the capacity webhook
// of this replica for one Shoot) is not counted twice: taken is false. An
// entry for another identity under the key is replaced.
func (l *ledger) take(seed string, h cache.Holder, now time.Time) (taken bool, err error) {
	namespace, _, _ := strings.Cut(h.Key, "/")
	c := cache.Claim{Key: h.Key, Namespace: namespace, User: h.User}
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.entries[h.Key]; ok {
		// Past the confirm window the request may write its entry afresh
		// (the old one never confirmed): it counts afresh, or pruning
		// would drop the count of a place the new entry holds.
		provisional := l.life.Standing(now.Sub(e.taken), cache.ShootAbsent) == cache.Provisional
		if e.id == h.ID && (e.expires.IsZero() || e.expires.After(now)) && provisional {
			return false, nil
		}
		l.dropLocked(h.Key)
	}
	exists := h.Exists && l.known(seed, h.ShootRef)
	if !exists {
		if l.limits.Check(c, l.heldLocked(c)) != nil && now.Sub(l.pruned) >= pruneEvery {
			l.pruneLocked(now)
		}
		if err := l.limits.Check(c, l.heldLocked(c)); err != nil {
			return false, err
		}
	}
	if exists {
		// Only a user's own CREATE, confirmed, raises the user's limit;
		// a binding of an existing Shoot earns its sender nothing.
		c.User = ""
	}
	e := ledgerEntry{seed: seed, Claim: c, id: h.ID, confirmed: exists, taken: now}
	l.entries[h.Key] = e
	l.countsLocked(e).Add(c, 1)
	return true, nil
}

// known reports whether the cache holds the Shoot of ref.
func (l *ledger) known(seed string, ref cache.ShootRef) bool {
	_, states := l.local.ShootsOnSeed(seed, []cache.ShootRef{ref})
	return states[0] != cache.ShootAbsent && states[0] != cache.ShootDeleted
}

// heldLocked is what Limits.Check judges for c.
func (l *ledger) heldLocked(c cache.Claim) cache.Held {
	held := l.held.Held(c)
	confirmed := l.confirmed.Held(c)
	held.Confirmed, held.UserConfirmed = confirmed.Namespace, confirmed.User
	return held
}

func (l *ledger) countsLocked(e ledgerEntry) *cache.HeldCounts {
	if e.confirmed {
		return &l.confirmed
	}
	return &l.held
}

// settle records how a request that took an entry ended: a denial (the
// seed is full) wrote nothing and gives it back; otherwise the entry counts
// until expires. Other errors may have written it (a timed-out batch), so
// they keep it too.
func (l *ledger) settle(key string, err error, expires time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.entries[key]
	if !ok {
		return
	}
	if full := (*cache.CapacityError)(nil); errors.As(err, &full) {
		l.dropLocked(key)
		return
	}
	e.expires = expires
	l.entries[key] = e
}

// pruneLocked judges the entries by cache.Lifetime, on this replica's
// clock and cache: it drops those that ended or whose Shoot is counted on
// the seed (it holds the place itself), and moves the confirmed ones to the
// confirmed counts. It runs only at a limit, so a garden that never reaches
// one never pays for it.
func (l *ledger) pruneLocked(now time.Time) {
	l.pruned = now
	bySeed := map[string][]string{}
	for key, e := range l.entries {
		switch {
		case e.expires.IsZero():
		case !e.expires.After(now):
			l.dropLocked(key)
		default:
			bySeed[e.seed] = append(bySeed[e.seed], key)
		}
	}
	for seed, keys := range bySeed {
		refs := make([]cache.ShootRef, len(keys))
		for i, key := range keys {
			refs[i] = cache.ShootRef{Key: key, ID: l.entries[key].id}
		}
		_, states := l.local.ShootsOnSeed(seed, refs)
		for i, key := range keys {
			e := l.entries[key]
			switch st := l.life.Standing(now.Sub(e.taken), states[i]); {
			case !st.Holds():
				l.dropLocked(key)
			case st == cache.Confirmed && !e.confirmed:
				l.held.Add(e.Claim, -1)
				e.confirmed = true
				l.entries[key] = e
				l.confirmed.Add(e.Claim, 1)
			}
		}
	}
}

func (l *ledger) dropLocked(key string) {
	e, ok := l.entries[key]
	if !ok {
		return
	}
	delete(l.entries, key)
	l.countsLocked(e).Add(e.Claim, -1)
}

// counts returns the unconfirmed entries counted for namespace and in all.
func (l *ledger) counts(namespace string) (inNamespace, total int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	held := l.held.Held(cache.Claim{Namespace: namespace})
	return held.Namespace, held.Total
}
