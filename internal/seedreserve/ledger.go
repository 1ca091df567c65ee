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

// ledger counts the unconfirmed entries this replica wrote, by Shoot key.
type ledger struct {
	limits        cache.Limits
	confirmWindow time.Duration
	local         LocalShoots

	mu      sync.Mutex
	entries map[string]ledgerEntry // by Shoot key "<namespace>/<name>"
	held    cache.HeldCounts       // of the entries
	pruned  time.Time              // last pruneLocked
}

type ledgerEntry struct {
	seed string
	cache.Claim
	taken time.Time
	// expires is no earlier than the written entry's expiry; zero while
	// the request is decided.
	expires time.Time
}

func newLedger(limits cache.Limits, confirmWindow time.Duration, local LocalShoots) *ledger {
	return &ledger{limits: limits.WithDefaults(), confirmWindow: confirmWindow, local: local,
		entries: map[string]ledgerEntry{}, held: cache.NewHeldCounts()}
}

// take counts a new entry for key (a Shoot of namespace) on seed, or returns
// the *cache.LimitError that refuses it; an entry for a Shoot the cache holds
// is not counted. A key counted already within the
// confirm window (the request sent again, or the mutating and the capacity
// webhook of this replica for one Shoot) is not counted twice: taken is
// false.
func (l *ledger) take(seed, key, user string, now time.Time) (taken bool, err error) {
	namespace, _, _ := strings.Cut(key, "/")
	c := cache.Claim{Key: key, Namespace: namespace, User: user}
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.entries[key]; ok {
		// Past the confirm window the request may write its entry afresh
		// (the old one never confirmed): it counts afresh, or pruning
		// would drop the count of a place the new entry holds.
		if (e.expires.IsZero() || e.expires.After(now)) && now.Sub(e.taken) < l.confirmWindow {
			return false, nil
		}
		l.dropLocked(key)
	}
	if _, states := l.local.ShootsOnSeed(seed, []string{key}); states[0] != cache.ShootAbsent {
		// A Shoot that exists (a binding, or its entry confirmed): one
		// entry per real Shoot, bounded by them, not by the limits.
		return false, nil
	}
	if l.limits.Check(c, l.held.Held(c)) != nil && now.Sub(l.pruned) >= pruneEvery {
		l.pruneLocked(now)
	}
	if err := l.limits.Check(c, l.held.Held(c)); err != nil {
		return false, err
	}
	l.entries[key] = ledgerEntry{seed: seed, Claim: c, taken: now}
	l.held.Add(c, 1)
	return true, nil
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

// pruneLocked drops the entries that ended: expired, their Shoot counted on
// the seed now (it arrived), or past the confirm window without their Shoot
// waiting in the cache (refused); and drops from the counts the confirmed
// ones, whose Shoot waits for its binding. It runs only at a limit, so a
// garden that never reaches one never pays for it.
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
		_, states := l.local.ShootsOnSeed(seed, keys)
		for i, key := range keys {
			// Past the confirm window an entry leaves the counts either
			// way: its Shoot waits for its binding (confirmed, bounded
			// by the Shoots that exist, not by the limits) or never came.
			if states[i] == cache.ShootOnSeed || now.Sub(l.entries[key].taken) >= l.confirmWindow {
				l.dropLocked(key)
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
	l.held.Add(e.Claim, -1)
}

// counts returns the entries counted for namespace and in all.
func (l *ledger) counts(namespace string) (inNamespace, total int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	held := l.held.Held(cache.Claim{Namespace: namespace})
	return held.Namespace, held.Total
}
