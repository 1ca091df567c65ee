package cache

import (
	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// PlaceOn keeps a placement the mutating webhook announced (placement mode
// "binding"): the Shoot goes to seed if seed still admits it
// (placement.Admits), however the usage of other seeds moved meanwhile.
//
// The place the admission reserved under from moves to key to (the key the
// binding is counted under), so the Shoot never competes with its own
// reservation and is never counted twice; without one (placed by another
// replica, or expired) a place is reserved under to. It reports false, with
// nothing held under to, when the seed is full or no longer admits the
// Shoot; the caller then decides again. Either way from holds nothing after.
// The Shoot exists, so no limit refuses its reservation.
func (s *Store) PlaceOn(shoot *api.Shoot, opts placement.Options, seed, from, to string) bool {
	if from != "" {
		defer s.ReleaseFor(from, shoot.Namespace, shoot.Name)
	}
	held := s.transfer(shoot, seed, from, to)
	if !held {
		claim := ClaimFor(shoot, to, "")
		claim.Exists, claim.UID = true, string(shoot.UID)
		if s.Reserve(seed, claim) != nil {
			return false
		}
	}
	snap := *s.Snapshot()
	usage := snap.Usage
	// The Shoot's own place is in the usage; Decide would not count it.
	snap.Usage = func(sd *placement.Seed) int64 {
		if sd.Name == seed {
			return usage(sd) - 1
		}
		return usage(sd)
	}
	if placement.Admits(&snap, shoot, opts, seed) {
		return true
	}
	s.Release(to)
	return false
}

// transfer moves the live reservation of from, if it is on seed and was
// taken for shoot, to key to, confirmed (the Shoot exists) with a fresh
// expiry. It reports whether to now holds a place on seed.
func (s *Store) transfer(shoot *api.Shoot, seed, from, to string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.sweepLocked(now)
	if r := s.reservations[to]; r != nil {
		return r.ctr.name == seed
	}
	r := s.reservations[from]
	if from == "" || r == nil || r.ctr.name != seed || !r.heldFor(shoot.Namespace, shoot.Name) {
		return false
	}
	s.releaseLocked(from)
	moved := &reservation{Claim: r.Claim, ctr: r.ctr, reserved: now, expires: s.life.Deadline(now, Confirmed), confirmed: true}
	moved.Key, moved.Exists, moved.UID = to, true, string(shoot.UID)
	s.addLocked(moved)
	return true
}
