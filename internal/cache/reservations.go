package cache

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrUnknownSeed is returned by Reserve for a seed the landscape does not
// hold: a place cannot be held on a seed whose capacity is unknown.
var ErrUnknownSeed = errors.New("unknown seed")

// CapacityError says a seed has no place left. Validators can errors.As it.
type CapacityError struct {
	Seed        string
	Shoots      int64 // Shoots counted on the seed
	Reserved    int64 // live reservations on the seed
	Allocatable int64 // status.allocatable.shoots
}

func (e *CapacityError) Error() string {
	return fmt.Sprintf("seed %q is full: usage %d (%d shoots + %d reservations) + 1 would exceed allocatable shoots %d",
		e.Seed, e.Shoots+e.Reserved, e.Shoots, e.Reserved, e.Allocatable)
}

type reservation struct {
	key       string
	namespace string // of the Shoot, for Limits
	ctr       *counter
	expires   time.Time
	index     int // in Store.expiries
}

// reservationHeap orders reservations by deadline so expiry is a peek.
type reservationHeap []*reservation

func (h reservationHeap) Len() int           { return len(h) }
func (h reservationHeap) Less(i, j int) bool { return h[i].expires.Before(h[j].expires) }
func (h reservationHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *reservationHeap) Push(x any) {
	r := x.(*reservation)
	r.index = len(*h)
	*h = append(*h, r)
}
func (h *reservationHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	r.index = -1
	return r
}

// Reserve takes one place on seed for key, a Shoot in namespace, until
// Release(key), the Shoot carrying the key in AnnotationReservation arrives,
// or the TTL passes. Reserving the same key on the same seed again changes
// nothing; on another seed it moves the reservation, which keeps its expiry:
// sending the same request again never makes a place last longer than one
// TTL. It fails with a *CapacityError when usage+1 would exceed
// status.allocatable.shoots, with ErrUnknownSeed for a seed that is not in
// the landscape, and with a *LimitError when the seed has room but a new
// reservation would exceed the Limits.
func (s *Store) Reserve(namespace, seed, key string) error {
	if key == "" {
		return errors.New("reservation key must not be empty")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reserveLocked(namespace, seed, key, time.Time{})
}

// reserveLocked is Reserve; a reservation it takes ends at the TTL or at
// deadline, if earlier and not zero.
func (s *Store) reserveLocked(namespace, seed, key string, deadline time.Time) error {
	now := s.now()
	s.sweepLocked(now)
	old := s.reservations[key]
	if old != nil && old.ctr.name == seed {
		return nil
	}
	sd, ok := s.land.Load().seeds[seed]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownSeed, seed)
	}
	c := s.counterLocked(seed)
	if alloc, has := sd.Allocatable(); has {
		// Exact: every write to the counters happens under s.mu.
		shoots, reserved := c.shoots.Load(), c.reserved.Load()
		if shoots+reserved+1 > alloc {
			return &CapacityError{Seed: seed, Shoots: shoots, Reserved: reserved, Allocatable: alloc}
		}
	}
	if err := s.checkLimitsLocked(namespace, old); err != nil {
		return err
	}
	expires := now.Add(s.ttl)
	if !deadline.IsZero() && deadline.Before(expires) {
		expires = deadline
	}
	if old != nil {
		expires = old.expires
		s.releaseLocked(key)
	}
	r := &reservation{key: key, namespace: namespace, ctr: c, expires: expires}
	c.reserved.Add(1)
	s.nsReservations[namespace]++
	s.reserved.Store(key, struct{}{})
	s.reservations[key] = r
	heap.Push(&s.expiries, r)
	s.updateNextExpiryLocked()
	return nil
}

// takeExpiry ends the live reservation of key, if any, and returns its
// expiry (zero without one), so that the key can be reserved again no
// longer than it was.
func (s *Store) takeExpiry(key string) time.Time {
	if _, held := s.reserved.Load(key); !held {
		return time.Time{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.now())
	r := s.reservations[key]
	if r == nil {
		return time.Time{}
	}
	s.releaseLocked(key)
	return r.expires
}

// ManualReservationKey is the reservation key of a placement a user made
// (spec.seedName on create, or a binding) for the Shoot namespace/name. The
// reservation ends when that Shoot arrives through the watch on the reserved
// seed, or when the TTL passes.
func ManualReservationKey(namespace, name string) string {
	return "manual/" + namespace + "/" + name
}

// Reservation returns the seed of the live reservation of key.
func (s *Store) Reservation(key string) (seed string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.now())
	r := s.reservations[key]
	if r == nil {
		return "", false
	}
	return r.ctr.name, true
}

// CheckCapacity answers what Reserve(seed, key) would, without reserving
// (for dry runs): nil when key already holds a place on seed or one more
// Shoot fits, else a *CapacityError, or ErrUnknownSeed.
func (s *Store) CheckCapacity(seed, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.now())
	if r := s.reservations[key]; key != "" && r != nil && r.ctr.name == seed {
		return nil
	}
	sd, ok := s.land.Load().seeds[seed]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownSeed, seed)
	}
	if alloc, has := sd.Allocatable(); has {
		var shoots, reserved int64
		if c := s.counters[seed]; c != nil {
			shoots, reserved = c.shoots.Load(), c.reserved.Load()
		}
		if shoots+reserved+1 > alloc {
			return &CapacityError{Seed: seed, Shoots: shoots, Reserved: reserved, Allocatable: alloc}
		}
	}
	return nil
}

// Release ends the reservation of key, if any. For a key without one it
// takes no lock (Place releases every fresh admission UID first) and leaves
// expired reservations to the next sweep (Reserve, maybeSweep), which every
// reader of the usage runs first.
func (s *Store) Release(key string) {
	if _, held := s.reserved.Load(key); !held {
		// Linearizes here: a key in s.reservations is in s.reserved, so
		// key held no reservation at the Load.
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked(key)
	s.sweepLocked(s.now())
}

func (s *Store) releaseLocked(key string) {
	r := s.reservations[key]
	if r == nil {
		return
	}
	delete(s.reservations, key)
	s.reserved.Delete(key)
	heap.Remove(&s.expiries, r.index)
	r.ctr.reserved.Add(-1)
	if s.nsReservations[r.namespace]--; s.nsReservations[r.namespace] <= 0 {
		delete(s.nsReservations, r.namespace)
	}
	s.gcCounterLocked(r.ctr)
	s.updateNextExpiryLocked()
}

// sweepLocked ends every reservation whose deadline has passed.
func (s *Store) sweepLocked(now time.Time) {
	for len(s.expiries) > 0 && !s.expiries[0].expires.After(now) {
		s.releaseLocked(s.expiries[0].key)
	}
}

func (s *Store) updateNextExpiryLocked() {
	next := int64(math.MaxInt64)
	if len(s.expiries) > 0 {
		next = s.expiries[0].expires.UnixNano()
	}
	s.nextExpiry.Store(next)
}

// maybeSweep expires reservations lazily; it only takes the lock when one is due.
func (s *Store) maybeSweep() {
	if s.nextExpiry.Load() > s.now().UnixNano() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.now())
}
