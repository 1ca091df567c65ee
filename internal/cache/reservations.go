package cache

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/seedwarden/seedwarden/internal/api"
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
	Claim
	ctr *counter
	// reserved is when it was taken; expires is when it ends: the confirm
	// window after reserved until the watch shows its Shoot (confirmed), the
	// TTL after reserved from then on.
	reserved, expires time.Time
	confirmed         bool
	index             int // in Store.expiries
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

// Reserve takes one place on seed for c until Release(c.Key), the watch
// shows c's Shoot on a seed carrying c.Key in AnnotationReservation, or the
// reservation ends. It is provisional for the confirm window: a Shoot that
// does not show up by then (a later admission step refused the CREATE) holds
// nothing any more. Once the watch shows the Shoot without a seed (placement
// mode binding), it is confirmed and lasts until the TTL after it was taken.
// Reserving the same key for the same Shoot on the same seed again changes
// nothing; on another seed it moves the reservation, which keeps its expiry:
// sending the same request again never makes a place last longer. A key held
// for another Shoot is an error. It fails with a
// *CapacityError when usage+1 would exceed status.allocatable.shoots, with
// ErrUnknownSeed for a seed that is not in the landscape, and with a
// *LimitError when the seed has room but a new reservation would exceed the
// Limits.
func (s *Store) Reserve(seed string, c Claim) error {
	if c.Key == "" {
		return errors.New("reservation key must not be empty")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reserveLocked(seed, c, time.Time{})
}

// reserveLocked is Reserve; a reservation it takes ends no later than
// deadline, unless that is zero.
func (s *Store) reserveLocked(seed string, c Claim, deadline time.Time) error {
	now := s.now()
	s.sweepLocked(now)
	old := s.reservations[c.Key]
	if old != nil && !old.sameShoot(c) {
		// A key read off a request proves nothing: it must neither ride on
		// another Shoot's place nor move it.
		return fmt.Errorf("reservation key %q is held for another Shoot", c.Key)
	}
	if old != nil && old.ctr.name == seed {
		return nil
	}
	sd, ok := s.land.Load().seeds[seed]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownSeed, seed)
	}
	ctr := s.counterLocked(seed)
	if alloc, has := sd.Allocatable(); has {
		// Exact: every write to the counters happens under s.mu.
		shoots, reserved := ctr.shoots.Load(), ctr.reserved.Load()
		if shoots+reserved+1 > alloc {
			return &CapacityError{Seed: seed, Shoots: shoots, Reserved: reserved, Allocatable: alloc}
		}
	}
	// Exists is the caller's word; a forged review's must not escape the
	// limits: the Shoot must be in the cache.
	c.Exists = c.Exists && s.knownLocked(c.Namespace, c.Name)
	if err := s.checkLimitsLocked(c, old); err != nil {
		return err
	}
	st := Provisional
	if c.Exists {
		st = Confirmed
		// Only a user's own CREATE, confirmed, raises the user's limit.
		c.User = ""
	}
	r := &reservation{Claim: c, ctr: ctr, reserved: now, expires: s.life.Deadline(now, st), confirmed: c.Exists}
	if !deadline.IsZero() && deadline.Before(r.expires) {
		r.expires = deadline
	}
	if old != nil {
		r.reserved, r.expires, r.confirmed = old.reserved, old.expires, old.confirmed
		s.releaseLocked(c.Key)
	}
	s.addLocked(r)
	return nil
}

func (s *Store) knownLocked(namespace, name string) bool {
	_, ok := s.shoots[intern(namespace)][name]
	return ok
}

// addLocked enters r into the Store.
func (s *Store) addLocked(r *reservation) {
	r.ctr.reserved.Add(1)
	s.heldLocked(r).Add(r.Claim, 1)
	s.reserved.Store(r.Key, struct{}{})
	s.reservations[r.Key] = r
	heap.Push(&s.expiries, r)
	s.updateNextExpiryLocked()
}

// confirmLocked records that the watch shows r's Shoot (without a seed yet):
// it now lasts the TTL after it was taken.
func (s *Store) confirmLocked(r *reservation) {
	if r.confirmed {
		return
	}
	s.unconfirmed.Add(r.Claim, -1)
	r.confirmed = true
	s.confirmed.Add(r.Claim, 1)
	s.observeConfirmed(r)
	if end := s.life.Deadline(r.reserved, Confirmed); end.After(r.expires) {
		r.expires = end
		heap.Fix(&s.expiries, r.index)
		s.updateNextExpiryLocked()
	}
}

// takeExpiry ends the live reservation of c's key, if it was taken for c's
// Shoot, and returns its expiry (zero without one), so that the key can be
// reserved again no longer than it was.
func (s *Store) takeExpiry(c Claim) time.Time {
	if _, held := s.reserved.Load(c.Key); !held {
		return time.Time{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.now())
	r := s.reservations[c.Key]
	if r == nil || !r.sameShoot(c) {
		return time.Time{}
	}
	s.releaseLocked(c.Key)
	return r.expires
}

// ManualReservationKey is the reservation key of a placement a user made
// (spec.seedName on create, or a binding) for the Shoot namespace/name. The
// reservation ends when that Shoot arrives through the watch on the reserved
// seed, or when the TTL passes.
func ManualReservationKey(namespace, name string) string {
	return "manual/" + namespace + "/" + name
}

// Reservation returns the seed of the live reservation of key, whoever it
// was taken for (inspection; a key read off a request goes through
// ReservationFor).
func (s *Store) Reservation(key string) (seed string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.now())
	if r := s.reservations[key]; r != nil {
		return r.ctr.name, true
	}
	return "", false
}

// ReservationFor returns the seed of the live reservation of key if it was
// taken for the Shoot namespace/name (see Claim): a key read off a request
// proves nothing by itself.
func (s *Store) ReservationFor(key, namespace, name string) (seed string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.now())
	r := s.reservations[key]
	if r == nil || !r.heldFor(namespace, name) {
		return "", false
	}
	return r.ctr.name, true
}

// HoldsPlace reports whether a live reservation holds a place for the
// Shoot: the one its admission took (its reservation annotation) or a
// manual one (the retry controller's bind). That place is counted in the
// seed's usage already.
func (s *Store) HoldsPlace(shoot *api.Shoot) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.now())
	return s.holdsPlaceLocked(shoot)
}

func (s *Store) holdsPlaceLocked(shoot *api.Shoot) bool {
	for _, k := range []string{shoot.Annotations[AnnotationReservation], ManualReservationKey(shoot.Namespace, shoot.Name)} {
		if r := s.reservations[k]; k != "" && r != nil && r.heldFor(shoot.Namespace, shoot.Name) {
			return true
		}
	}
	return false
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

// ReleaseFor is Release for a key read off the Shoot namespace/name (its
// AnnotationReservation): it ends the reservation only if it was taken for
// that Shoot, so that a key copied onto another Shoot releases nothing.
func (s *Store) ReleaseFor(key, namespace, name string) {
	if _, held := s.reserved.Load(key); !held {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.reservations[key]; r != nil && r.heldFor(namespace, name) {
		s.releaseLocked(key)
	}
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
	s.heldLocked(r).Add(r.Claim, -1)
	s.gcCounterLocked(r.ctr)
	s.updateNextExpiryLocked()
}

// heldLocked is the count r is in: unconfirmed or confirmed.
func (s *Store) heldLocked(r *reservation) *HeldCounts {
	if r.confirmed {
		return &s.confirmed
	}
	return &s.unconfirmed
}

// judgeLocked applies the Lifetime to r, whose Shoot the watch shows in
// state shoot: it confirms r, leaves it, or ends it.
func (s *Store) judgeLocked(r *reservation, shoot ShootState, now time.Time) Standing {
	st := s.life.Standing(now.Sub(r.reserved), shoot)
	switch st {
	case Confirmed:
		s.confirmLocked(r)
	case Fulfilled:
		if !r.confirmed {
			s.observeConfirmed(r)
		}
		s.releaseLocked(r.Key) // the Shoot itself now holds the place
	case Ended:
		s.releaseLocked(r.Key)
	}
	return st
}

// sweepLocked ends every reservation whose deadline has passed.
func (s *Store) sweepLocked(now time.Time) {
	for len(s.expiries) > 0 && !s.expiries[0].expires.After(now) {
		r := s.expiries[0]
		s.observeExpired(r)
		s.releaseLocked(r.Key)
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
