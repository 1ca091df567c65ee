package cache

import (
	"strings"
	"sync/atomic"
	"unique"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// Shoots only move per-seed counters: each Shoot's charge (the seeds it
// counts against) is remembered so an update or delete can undo it.

// counter is a seed's live usage. Writes happen under Store.mu (so capacity
// checks are exact); reads from snapshots are lock-free.
type counter struct {
	name     string
	id       uint32 // its index in Store.seedIDs, which charges keep
	shoots   atomic.Int64
	reserved atomic.Int64
}

func (c *counter) usage() int64 { return c.shoots.Load() + c.reserved.Load() }

// charge is what one Shoot counts against (placement.ChargedSeeds): the
// ids of the seeds' counters, 0 for none. A charged counter is never
// dropped (its count is not zero), so its id stays its own.
type charge struct{ spec, status uint32 }

// seedsLocked are a charge's seed names, "" for none.
func (s *Store) seedsLocked(c charge) [2]string {
	var out [2]string
	for i, id := range [2]uint32{c.spec, c.status} {
		if id != 0 {
			out[i] = s.seedIDs[id].name
		}
	}
	return out
}

// shootID keys a Shoot in the Store: the namespace interned, the name
// sharing the cached object's string, so the key costs no allocation.
type shootID struct {
	namespace unique.Handle[string]
	name      string
}

// shootIDOf parses "namespace/name".
func shootIDOf(key string) shootID {
	ns, name, _ := strings.Cut(key, "/")
	return shootID{namespace: intern(ns), name: name}
}

// shootFacts are what the Store reads of a Shoot, from either form.
type shootFacts struct {
	id           shootID
	spec, status string // placement.ChargedSeeds
	reservation  string // AnnotationReservation
	// ident is read only of a Shoot charged to no seed (the uid of a
	// ReducedShoot costs a string): the only ones that confirm anything.
	ident shootIdentity
}

func factsOf(o *api.Shoot) shootFacts {
	spec, status := placement.ChargedSeeds(o)
	return shootFacts{
		id:   shootID{namespace: intern(o.Namespace), name: o.Name},
		spec: spec, status: status,
		reservation: o.Annotations[AnnotationReservation],
		ident:       identityOf(o),
	}
}

func reducedFacts(r *ReducedShoot) shootFacts {
	spec, status := r.chargedSeeds()
	f := shootFacts{
		id:   shootID{namespace: r.namespace, name: r.name},
		spec: spec, status: status,
		reservation: r.annotation(AnnotationReservation),
	}
	if spec == "" && status == "" {
		f.ident = reducedIdentity(r)
	}
	return f
}

// Usage returns a seed's Shoots plus live reservations; it works for seeds
// whose Seed object has not arrived yet.
func (s *Store) Usage(seed string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.now())
	if c := s.counters[seed]; c != nil {
		return c.usage()
	}
	return 0
}

// ShootChargedTo reports whether the Shoot namespace/name counts against
// seed: its spec.seedName, or its status.seedName while it migrates (as
// placement.ChargedSeeds says). O(1).
func (s *Store) ShootChargedTo(namespace, name, seed string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chargedToLocked(shootID{namespace: intern(namespace), name: name}, seed)
}

// ShootState is what the cache knows of a Shoot, as to one seed.
type ShootState uint8

const (
	// ShootAbsent is a Shoot not in the cache.
	ShootAbsent ShootState = iota
	// ShootPending is in the cache, counted against no seed yet.
	ShootPending
	// ShootOnSeed is counted against the seed asked about.
	ShootOnSeed
	// ShootElsewhere is in the cache, but neither counted against the seed
	// asked about nor waiting with the identity asked about: counted
	// against other seeds, or another Shoot of that name.
	ShootElsewhere
	// ShootDeleted is not in the cache any more: the watch showed the
	// Shoot carrying the identity asked about deleted, within the confirm
	// window.
	ShootDeleted
)

// ShootsOnSeed returns how many Shoots count against seed (reservations
// excluded) and, for each of refs, that Shoot's state: ShootPending only
// for a Shoot carrying the ref's ID (see ShootRef). Both come from one
// instant of the Store, so a Shoot that arrives meanwhile is never missed
// by one and counted by the other. Cost is O(len(refs)).
func (s *Store) ShootsOnSeed(seed string, refs []ShootRef) (shoots int64, states []ShootState) {
	states = make([]ShootState, len(refs))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetDeletedLocked(s.now())
	if c := s.counters[seed]; c != nil {
		shoots = c.shoots.Load()
	}
	for i, ref := range refs {
		states[i] = s.stateLocked(shootIDOf(ref.Key), seed, ref.ID)
	}
	return shoots, states
}

func (s *Store) stateLocked(id shootID, seed, identity string) ShootState {
	c, ok := s.shoots[id.namespace][id.name]
	seeds := s.seedsLocked(c)
	switch {
	case !ok && s.deletedLocked(id, identity):
		return ShootDeleted
	case !ok:
		return ShootAbsent
	case seed != "" && (seeds[0] == seed || seeds[1] == seed):
		return ShootOnSeed
	case c == charge{} && s.pending[id].carries(identity):
		return ShootPending
	}
	return ShootElsewhere
}

func (s *Store) chargedToLocked(id shootID, seed string) bool {
	if seed == "" {
		return false
	}
	c, ok := s.shoots[id.namespace][id.name]
	seeds := s.seedsLocked(c)
	return ok && (seeds[0] == seed || seeds[1] == seed)
}

// ShootsInNamespace counts the Shoots known in a namespace.
func (s *Store) ShootsInNamespace(ns string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.shoots[intern(ns)])
}

// applyShoot counts the Shoot; shoot gives the *api.Shoot to tell OnArrival
// about (called only then: a ReducedShoot is expanded for it alone).
func (s *Store) applyShoot(f shootFacts, shoot func() *api.Shoot) {
	if s.countShoot(f) && s.arrived != nil {
		s.arrived(shoot(), f.spec)
	}
}

// countShoot counts the Shoot; it reports whether the Shoot fulfilled a
// reservation its admission took (the reservation annotation).
func (s *Store) countShoot(f shootFacts) (fulfilled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.sweepLocked(now)
	next := charge{spec: s.chargeTo(f.spec), status: s.chargeTo(f.status)}
	byName := s.shoots[f.id.namespace]
	if byName == nil {
		byName = map[string]charge{}
		s.shoots[f.id.namespace] = byName
	}
	old, known := byName[f.id.name]
	namespace := str(f.id.namespace)
	if !known || old != next {
		// Names first: subtracting old may drop its counters.
		oldSeeds, nextSeeds := s.seedsLocked(old), s.seedsLocked(next)
		// Add before subtracting: lock-free readers may briefly overcount
		// (harmless) but never undercount.
		s.addCharge(next, 1)
		if known {
			s.addCharge(old, -1)
		}
		s.moveSpreadLocked(namespace, oldSeeds, nextSeeds) // old is zero when !known
	}
	byName[f.id.name] = next
	if next == (charge{}) {
		s.pending[f.id] = f.ident
	} else if known && old == (charge{}) {
		delete(s.pending, f.id)
	}
	if k := f.reservation; k != "" {
		// The key is the admission's identity: only the Shoot it created
		// carries it (identity.go).
		if r := s.reservations[k]; r != nil && r.heldFor(namespace, f.id.name) {
			// On any seed, the admission's place has served: the Shoot
			// holds the one it is on.
			state := ShootPending
			if f.spec != "" {
				state = ShootOnSeed
			}
			fulfilled = s.judgeLocked(r, state, now) == Fulfilled
		}
	}
	if f.spec != "" {
		// A manual placement (validated binding or spec.seedName set by a
		// user) ends when the Shoot shows up on the seed it reserved; an
		// event still showing the old seed leaves it in place.
		if len(s.reservations) == 0 {
			return fulfilled // the common case: no key to build
		}
		if r := s.reservations[ManualReservationKey(namespace, f.id.name)]; r != nil && r.ctr.name == f.spec {
			s.judgeLocked(r, ShootOnSeed, now)
		}
	}
	return fulfilled
}

// OnArrival sets f to be told, outside the Store's lock, of every Shoot that
// shows up on a seed under the reservation an admission through this Store
// took: once per placement, on the replica that made it. The placement mode
// "patch" records its success event there, since the admission itself
// happens before the Shoot exists. Set it before the Store is fed.
func (s *Store) OnArrival(f func(shoot *api.Shoot, seed string)) { s.arrived = f }

// removeShoot uncounts the Shoot id, recognised by ident, and ends the
// reservations taken for it: its admission's (ident.reservation) and a
// manual one taken for this very Shoot (Claim.UID).
func (s *Store) removeShoot(id shootID, ident shootIdentity) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.rememberDeletedLocked(id, ident, now)
	namespace := str(id.namespace)
	if r := s.reservations[ident.reservation]; ident.reservation != "" && r != nil && r.heldFor(namespace, id.name) {
		s.judgeLocked(r, ShootDeleted, now)
	}
	if r := s.reservations[ManualReservationKey(namespace, id.name)]; r != nil && ident.uid != "" && r.UID == ident.uid {
		s.judgeLocked(r, ShootDeleted, now)
	}
	// Undo what was counted, not what the (possibly stale) final object says.
	byName := s.shoots[id.namespace]
	old, known := byName[id.name]
	if !known {
		return
	}
	delete(s.pending, id)
	if delete(byName, id.name); len(byName) == 0 {
		delete(s.shoots, id.namespace)
	}
	seeds := s.seedsLocked(old)
	s.addCharge(old, -1)
	s.moveSpreadLocked(namespace, seeds, [2]string{})
}

// chargeTo is the id of a charged seed's counter, 0 for none. Shoots keep
// ids, not names: 4 bytes each.
func (s *Store) chargeTo(seed string) uint32 {
	if seed == "" {
		return 0
	}
	return s.counterLocked(seed).id
}

func (s *Store) counterLocked(seed string) *counter {
	c := s.counters[seed]
	if c == nil {
		c = &counter{name: seed}
		if n := len(s.freeIDs); n > 0 {
			c.id, s.freeIDs = s.freeIDs[n-1], s.freeIDs[:n-1]
			s.seedIDs[c.id] = c
		} else {
			c.id = uint32(len(s.seedIDs))
			s.seedIDs = append(s.seedIDs, c)
		}
		s.counters[seed] = c
	}
	return c
}

func (s *Store) addCharge(c charge, delta int64) {
	for _, id := range [2]uint32{c.spec, c.status} {
		if id == 0 {
			continue
		}
		ctr := s.seedIDs[id]
		ctr.shoots.Add(delta)
		s.gcCounterLocked(ctr)
	}
}

// gcCounterLocked drops a counter that nothing refers to any more.
func (s *Store) gcCounterLocked(c *counter) {
	if c.shoots.Load() != 0 || c.reserved.Load() != 0 {
		return
	}
	if _, inLandscape := s.land.Load().counters[c.name]; inLandscape {
		return
	}
	if s.counters[c.name] == c {
		delete(s.counters, c.name)
		s.seedIDs[c.id] = nil
		s.freeIDs = append(s.freeIDs, c.id)
	}
}
