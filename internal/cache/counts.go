package cache

import (
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// Shoots only move per-seed counters: each Shoot's charge (the seeds it
// counts against) is remembered so an update or delete can undo it.

// counter is a seed's live usage. Writes happen under Store.mu (so capacity
// checks are exact); reads from snapshots are lock-free.
type counter struct {
	name     string // also the interned seed name kept in charges
	shoots   atomic.Int64
	reserved atomic.Int64
}

func (c *counter) usage() int64 { return c.shoots.Load() + c.reserved.Load() }

// charge is what one Shoot counts against: placement.ChargedSeeds.
type charge struct{ spec, status string }

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
	return s.chargedToLocked(namespace+"/"+name, seed)
}

// ShootsOnSeed returns how many Shoots count against seed (reservations
// excluded) and, for each of keys ("namespace/name"), whether that Shoot is
// one of them. Both come from one instant of the Store, so a Shoot that
// arrives meanwhile is never missed by one and counted by the other. Cost is
// O(len(keys)).
func (s *Store) ShootsOnSeed(seed string, keys []string) (shoots int64, charged []bool) {
	charged = make([]bool, len(keys))
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.counters[seed]; c != nil {
		shoots = c.shoots.Load()
	}
	for i, k := range keys {
		charged[i] = s.chargedToLocked(k, seed)
	}
	return shoots, charged
}

func (s *Store) chargedToLocked(key, seed string) bool {
	if seed == "" {
		return false
	}
	c, ok := s.shoots[key]
	return ok && (c.spec == seed || c.status == seed)
}

// ShootsInNamespace counts the Shoots known in a namespace.
func (s *Store) ShootsInNamespace(ns string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.namespaces[ns]
}

func shootKey(o client.Object) string { return o.GetNamespace() + "/" + o.GetName() }

func (s *Store) applyShoot(o *api.Shoot) {
	spec, _ := placement.ChargedSeeds(o)
	if s.countShoot(o) && s.arrived != nil {
		s.arrived(o, spec)
	}
}

// countShoot counts the Shoot; it reports whether the Shoot fulfilled a
// reservation its admission took (the reservation annotation).
func (s *Store) countShoot(o *api.Shoot) (fulfilled bool) {
	key := shootKey(o)
	spec, status := placement.ChargedSeeds(o)

	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.now())
	next := charge{spec: s.intern(spec), status: s.intern(status)}
	old, known := s.shoots[key]
	if !known {
		s.namespaces[o.Namespace]++
	}
	if !known || old != next {
		// Add before subtracting: lock-free readers may briefly overcount
		// (harmless) but never undercount.
		s.addCharge(next, 1)
		if known {
			s.addCharge(old, -1)
		}
		s.moveSpreadLocked(o.Namespace, old, next) // old is zero when !known
	}
	s.shoots[key] = next
	if spec != "" {
		if k := o.Annotations[AnnotationReservation]; k != "" && s.reservations[k] != nil {
			s.releaseLocked(k) // the Shoot itself now holds the place
			fulfilled = true
		}
		// A manual placement (validated binding or spec.seedName set by a
		// user) ends when the Shoot shows up on the seed it reserved; an
		// event still showing the old seed leaves it in place.
		if r := s.reservations[ManualReservationKey(o.Namespace, o.Name)]; r != nil && r.ctr.name == spec {
			s.releaseLocked(r.key)
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

func (s *Store) removeShoot(o *api.Shoot) {
	key := shootKey(o)
	s.mu.Lock()
	defer s.mu.Unlock()
	// Undo what was counted, not what the (possibly stale) final object says.
	old, known := s.shoots[key]
	if !known {
		return
	}
	delete(s.shoots, key)
	if s.namespaces[o.Namespace]--; s.namespaces[o.Namespace] <= 0 {
		delete(s.namespaces, o.Namespace)
	}
	s.addCharge(old, -1)
	s.moveSpreadLocked(o.Namespace, old, charge{})
}

// intern returns the seed name shared with its counter, so 100k Shoots on a
// few hundred seeds do not hold 100k copies of the names.
func (s *Store) intern(seed string) string {
	if seed == "" {
		return ""
	}
	return s.counterLocked(seed).name
}

func (s *Store) counterLocked(seed string) *counter {
	c := s.counters[seed]
	if c == nil {
		c = &counter{name: seed}
		s.counters[seed] = c
	}
	return c
}

func (s *Store) addCharge(c charge, delta int64) {
	for _, seed := range [2]string{c.spec, c.status} {
		if seed == "" {
			continue
		}
		ctr := s.counterLocked(seed)
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
	}
}
