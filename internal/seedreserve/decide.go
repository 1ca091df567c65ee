package seedreserve

import (
	"time"

	"github.com/seedwarden/seedwarden/internal/cache"
)

// MaxClockSkew is the clock skew between replicas that the ledger
// tolerates (package doc, "Clock skew"): up to it, no replica ends an
// entry's confirm window or TTL early, whichever replica wrote the entry.
// An entry whose expiry lies more than reservationTTL + MaxClockSkew ahead
// of the reader's clock was not written by a replica whose clock agrees that
// well: it is counted as live (conservative) and, when the object is written
// next, given one TTL from the reader's now.
const MaxClockSkew = 10 * time.Second

// decision is what one batch does to a seed's reservations.
type decision struct {
	results []error           // per request: nil or a *cache.CapacityError
	data    map[string]string // the ConfigMap data to write
	write   bool              // some request took a place
	// kept counts the requests answered by keeping an announced Shoot's
	// admission entry (decideRequests); a batch of only those may be
	// answered from this replica's copy (lastcopy.go).
	kept int
}

// entry is one reservation of the seed while a batch is decided: stored in
// the ConfigMap, or taken by a request of the batch.
type entry struct {
	key     string
	id      string // the identity of the Shoot it was taken for ("": none)
	expires time.Time
	age     time.Duration // see entryAge
	rewrite bool          // unreadable, implausible, or taken by this batch
	dropped bool
	counted bool // holds a place on top of the Shoots
	// shootIdx is in the refs given to the cache; -1 for a key
	// seedwarden did not write.
	shootIdx int
}

// decide counts the seed's usage from the stored entries and this replica's
// cache and decides every request in order. It does not touch the API.
func (r *Reserver) decide(seed string, stored map[string]string, reqs []*request, now time.Time) decision {
	entries, refs := r.readEntries(seed, stored, len(reqs), now)
	reqIdx := len(refs)
	for _, req := range reqs {
		refs = append(refs, req.ref)
	}
	shoots, states := r.local.ShootsOnSeed(seed, refs)
	count := shoots + r.countLive(entries, states)
	d := decideRequests(seed, entries, reqs, states[reqIdx:], shoots, count, r.keptUntil(now))
	if !d.write {
		return d
	}
	d.data = newData(entries, stored, expiryString(now.Add(r.ttl)))
	r.seen.written(seed, d.data, now)
	return d
}

// readEntries parses the stored entries; refs holds the Shoot of each live
// entry seedwarden wrote, at the entry's shootIdx, with room for nReqs more.
func (r *Reserver) readEntries(seed string, stored map[string]string, nReqs int, now time.Time) (map[string]*entry, []cache.ShootRef) {
	entries := make(map[string]*entry, len(stored)+nReqs)
	refs := make([]cache.ShootRef, 0, len(stored)+nReqs)
	firstSeen := r.seen.observe(seed, stored, now)
	for k, v := range stored {
		e := &entry{key: k, shootIdx: -1}
		exp, id, err := parseValue(v)
		switch {
		case err != nil || exp.After(now.Add(r.ttl+MaxClockSkew)):
			// Counted as live (conservative) and, when written, given one
			// TTL from now, so that it does end.
			e.expires, e.rewrite = now.Add(r.ttl), true
		default:
			e.expires = exp
		}
		e.id = id
		e.age = entryAge(r.ttl, e.expires, now, firstSeen[k])
		if !e.rewrite && e.age >= r.ttl {
			e.dropped = true // expired
		}
		if sk := decodeKey(k); sk != "" && !e.dropped {
			e.shootIdx = len(refs)
			refs = append(refs, cache.ShootRef{Key: sk, ID: e.id})
		}
		entries[k] = e
	}
	return entries, refs
}

// entryAge is how old an entry is taken to be. Its expiry (written + TTL,
// rounded up to the millisecond) says w on this replica's clock, which is
// too old by the skew when the writer's clock ran behind; so it is taken no
// older than the time this replica has seen it, unless that is more than
// MaxClockSkew below w (an entry first seen late, by an honest clock). A
// writer whose clock runs ahead makes its entries look younger: they count
// longer (conservative). So up to MaxClockSkew, whichever way, no entry is
// taken for older than it is, and with clocks that agree, an entry this
// replica saw from its writing is taken for exactly its age.
func entryAge(ttl time.Duration, expires, now, firstSeen time.Time) time.Duration {
	w := ttl - expires.Sub(now)
	if firstSeen.IsZero() {
		return w
	}
	return min(w, max(now.Sub(firstSeen), w-MaxClockSkew))
}

// countLive judges every entry by cache.Lifetime and returns how many hold
// a place on top of the Shoots. An entry whose Shoot is counted on the
// seed (fulfilled) holds nothing and is dropped once older than pruneAfter,
// so that replicas whose watch lags still count one of the two; an ended one
// (its window passed with no Shoot of its identity, its Shoot deleted, the
// TTL passed) is dropped. A key seedwarden did not write counts until it
// expires.
func (r *Reserver) countLive(entries map[string]*entry, states []cache.ShootState) int64 {
	var count int64
	for _, e := range entries {
		if e.dropped {
			continue
		}
		if e.shootIdx < 0 {
			e.counted = true
			count++
			continue
		}
		// The window is judged by the oldest the entry can be (its expiry
		// was rounded up), so that an unconfirmed entry never outlives it;
		// pruning by the youngest.
		switch st := r.life.Standing(e.age+time.Millisecond, states[e.shootIdx]); {
		case st == cache.Fulfilled && e.age >= r.pruneAfter:
			e.dropped = true // the Shoot counts itself, everywhere by now
		case st == cache.Fulfilled:
		case st.Holds():
			e.counted = true
			count++
		default:
			e.dropped = true
		}
	}
	return count
}

// keptUntil is how long past now an entry must last on every replica's clock
// for the bind of an announced Shoot to keep the admission's entry instead
// of writing it again (decideRequests): through the bind and then every
// replica's watch of the bound Shoot (the confirm window, by the package's
// assumption), so at least two confirm windows; at least half the TTL, so
// that keeping costs at most half the margin a fresh entry gives; and
// MaxClockSkew more, for a replica whose clock runs ahead of this one's
// ends the entry that much earlier. With the defaults (30 s, 5 s): kept
// while at most 5 s old, which a bind of an announced Shoot is by far.
func (r *Reserver) keptUntil(now time.Time) time.Time {
	return now.Add(max(r.ttl/2, 2*r.life.ConfirmWindow) + MaxClockSkew)
}

// decideRequests grants or denies each request in order against count, the
// seed's usage; states[i] says whether the cache already charges request
// i's Shoot to the seed. An announced Shoot keeps the admission's entry only
// while it expires no earlier than keep (Reserver.keptUntil): the place is
// held by the entry until the bound Shoot holds it itself, on every replica.
func decideRequests(seed string, entries map[string]*entry, reqs []*request, states []cache.ShootState, shoots, count int64, keep time.Time) decision {
	d := decision{results: make([]error, len(reqs))}
	for i, req := range reqs {
		replaced := entries[req.key]
		live := replaced != nil && !replaced.dropped
		announced := live && req.announced != "" && replaced.id == req.announced &&
			!replaced.rewrite && !replaced.expires.Before(keep)
		if announced {
			d.kept++
		}
		if live && (replaced.id == req.ref.ID || announced) {
			// Retried, a duplicate in this batch, or the bind of the Shoot
			// the admission's entry was taken for: already counted, and
			// not renewed, so that sending a request again never holds a
			// place beyond the TTL of the first.
			continue
		}
		if req.refused != nil {
			d.results[i] = req.refused
			continue
		}
		// An entry of another Shoot of that name (a re-CREATE, or an entry
		// of an earlier version) is replaced by the request's own, decided
		// afresh, with the place it held; a denied request leaves it.
		held := count
		if live && replaced.counted {
			held--
		}
		if held+1 > req.alloc {
			d.results[i] = &cache.CapacityError{Seed: seed, Shoots: shoots, Reserved: held - shoots, Allocatable: req.alloc}
			continue
		}
		count = held
		e := &entry{key: req.key, id: req.ref.ID, rewrite: true, counted: states[i] != cache.ShootOnSeed}
		entries[req.key] = e
		if e.counted {
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
			out[k] = formatValue(renewed, e.id)
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
