package seedreserve

import (
	"time"

	"github.com/seedwarden/seedwarden/internal/cache"
)

// maxExpiryAhead bounds how far in the future an entry's expiry may lie (the
// longest reservationTTL the configuration accepts, plus clock skew); a
// later one, like an unreadable one, was not written by seedwarden and is
// rewritten to expire one TTL from now the next time the object is written.
const maxExpiryAhead = time.Hour + time.Minute

// decision is what one batch does to a seed's reservations.
type decision struct {
	results []error           // per request: nil or a *cache.CapacityError
	data    map[string]string // the ConfigMap data to write
	write   bool              // some request took a place
}

// entry is one reservation of the seed while a batch is decided: stored in
// the ConfigMap, or taken by a request of the batch.
type entry struct {
	key      string
	expires  time.Time
	rewrite  bool // unreadable or implausible expiry
	dropped  bool
	charged  bool // the cache charges its Shoot to the seed
	shootIdx int  // in keys; -1 for a key seedwarden did not write
}

// decide counts the seed's usage from the stored entries and this replica's
// cache and decides every request in order. It does not touch the API.
func (r *Reserver) decide(seed string, stored map[string]string, reqs []*request, now time.Time) decision {
	entries, keys := r.readEntries(stored, len(reqs), now)
	reqIdx := len(keys)
	for _, req := range reqs {
		keys = append(keys, req.shootKey)
	}
	shoots, states := r.local.ShootsOnSeed(seed, keys)
	count := shoots + r.countLive(entries, states, now)
	d := decideRequests(seed, entries, reqs, states[reqIdx:], shoots, count)
	if !d.write {
		return d
	}
	d.data = newData(entries, stored, expiryString(now.Add(r.ttl)))
	return d
}

// readEntries parses the stored entries; keys holds the Shoot key of each
// live entry seedwarden wrote, at the entry's shootIdx, with room for
// nReqs more.
func (r *Reserver) readEntries(stored map[string]string, nReqs int, now time.Time) (map[string]*entry, []string) {
	entries := make(map[string]*entry, len(stored)+nReqs)
	keys := make([]string, 0, len(stored)+nReqs)
	for k, v := range stored {
		e := &entry{key: k, shootIdx: -1}
		exp, err := time.Parse(time.RFC3339, v)
		switch {
		case err != nil || exp.After(now.Add(maxExpiryAhead)):
			// Counted as live (conservative) and, when written, given one
			// TTL from now, so that it does end.
			e.expires, e.rewrite = now.Add(r.ttl), true
		case !exp.After(now):
			e.dropped = true // expired
		default:
			e.expires = exp
		}
		if sk := decodeKey(k); sk != "" && !e.dropped {
			e.shootIdx = len(keys)
			keys = append(keys, sk)
		}
		entries[k] = e
	}
	return entries, keys
}

// countLive returns how many live entries count on top of the Shoots: those
// whose Shoot the cache does not charge to the seed, while provisional or
// confirmed. An entry whose Shoot is charged is dropped once older than
// pruneAfter; one past the confirm window whose Shoot the cache does not
// hold without a seed was never confirmed (a later admission step refused
// the CREATE) and is dropped too.
func (r *Reserver) countLive(entries map[string]*entry, states []cache.ShootState, now time.Time) int64 {
	var count int64
	for _, e := range entries {
		if e.dropped {
			continue
		}
		state := cache.ShootAbsent
		if e.shootIdx >= 0 {
			state = states[e.shootIdx]
		}
		e.charged = state == cache.ShootOnSeed
		// Its expiry was rounded up to the millisecond: the entry is at
		// least age old and at most a millisecond older. Pruning waits for
		// the youngest it can be; the window ends by the oldest, so that an
		// unconfirmed entry never outlives the window.
		age := r.ttl - e.expires.Sub(now)
		switch {
		case e.charged && age >= r.pruneAfter:
			e.dropped = true // the Shoot counts itself, everywhere by now
		case e.charged:
		case e.shootIdx >= 0 && age+time.Millisecond >= r.confirmWindow && state != cache.ShootPending:
			e.dropped = true // unconfirmed: no Shoot came of it
		default:
			count++
		}
	}
	return count
}

// decideRequests grants or denies each request in order against count, the
// seed's usage; states[i] says whether the cache already charges request
// i's Shoot to the seed.
func decideRequests(seed string, entries map[string]*entry, reqs []*request, states []cache.ShootState, shoots, count int64) decision {
	d := decision{results: make([]error, len(reqs))}
	for i, req := range reqs {
		if e := entries[req.key]; e != nil && !e.dropped {
			// Retried, or a duplicate in this batch: already counted, and
			// not renewed, so that sending a request again never holds a
			// place beyond the TTL of the first.
			continue
		}
		if req.refused != nil {
			d.results[i] = req.refused
			continue
		}
		if count+1 > req.alloc {
			d.results[i] = &cache.CapacityError{Seed: seed, Shoots: shoots, Reserved: count - shoots, Allocatable: req.alloc}
			continue
		}
		entries[req.key] = &entry{key: req.key, rewrite: true}
		if states[i] != cache.ShootOnSeed {
			count++
		}
		d.write = true
	}
	return d
}

// newData is the ConfigMap data after a batch: dropped entries left out,
// rewritten ones expiring at renewed, the rest as stored.
func newData(entries map[string]*entry, stored map[string]string, renewed string) map[string]string {
	out := make(map[string]string, len(entries))
	for k, e := range entries {
		switch {
		case e.dropped:
		case e.rewrite:
			out[k] = renewed
		default:
			out[k] = stored[k]
		}
	}
	return out
}

// expiryLayout is RFC 3339 with milliseconds where there are any: the
// confirm window is reckoned back from the expiry, so a whole second of
// rounding would cut it short; time.RFC3339 parsing (and so a replica
// of an earlier version) reads the fraction.
const expiryLayout = "2006-01-02T15:04:05.999Z07:00"

// expiryString rounds t up to the millisecond, so that an entry never ends
// before its TTL.
func expiryString(t time.Time) string {
	if t.Truncate(time.Millisecond) != t {
		t = t.Truncate(time.Millisecond).Add(time.Millisecond)
	}
	return t.UTC().Format(expiryLayout)
}
