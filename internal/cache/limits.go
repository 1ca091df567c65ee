package cache

import (
	"fmt"
	"time"

	"github.com/seedwarden/seedwarden/internal/metrics"
)

// Limits on unconfirmed reservations: anyone who can send a CREATE (or, without
// client authentication, reach the webhook) makes seedwarden reserve a place,
// and a CREATE that a later admission step refuses never confirms it. Until
// the confirm window ends, such a reservation holds a place. The limits bound
// how many one namespace and one user hold, and all together, so that a
// flood of refused requests cannot take the places of the others. A
// reservation a limit refuses is simply not taken. Confirmed reservations
// (their Shoot exists and waits without a seed) count against PerNamespace
// only, with the unconfirmed ones, so that a namespace's pending Shoots hold
// a bounded number of places; a reservation for a Shoot that exists is never
// refused (the retry controller binding a backlog).
//
// A user's limit grows with the user's confirmed reservations:
// PerUser + userCreditPerConfirmed × (the user's Shoots that exist and wait
// for a seed). A CREATE that a later step refuses never confirms, so a user
// whose CREATEs are all refused holds PerUser, as before; an automation
// user's burst earns room as its Shoots appear (20, then 60, 180, ...: the
// confirmations of one round pay for the next), bounded still by
// PerNamespace and Total. docs/design.md has the arithmetic.

// Defaults of Limits, equal to the configuration file's (reservations), as
// those of Options.
const (
	DefaultMaxReservationsPerNamespace = 100
	DefaultMaxReservationsPerUser      = 20
	DefaultMaxReservationsTotal        = 1000
)

// totalExemptPerNamespace is how many unconfirmed reservations a namespace
// may hold beyond Limits.Total: a flood spread over many namespaces that
// reaches the total must not leave every other namespace without a seed, so
// a namespace with nothing in flight gets its place. The total can be
// exceeded by this much per namespace of a Project.
const totalExemptPerNamespace = 1

// userCreditPerConfirmed is how many more unconfirmed reservations a user
// may hold per confirmed one: each costs the user a real Shoot that exists,
// so a refused CREATE can only be paid for by a real one, and two per one
// makes a burst's room grow by a factor of three per round of
// confirmations.
const userCreditPerConfirmed = 2

// Limits bound the unconfirmed reservations. Zero fields take the defaults.
type Limits struct {
	PerNamespace int
	PerUser      int
	Total        int
}

// WithDefaults fills the zero fields.
func (l Limits) WithDefaults() Limits {
	if l.PerNamespace <= 0 {
		l.PerNamespace = DefaultMaxReservationsPerNamespace
	}
	if l.PerUser <= 0 {
		l.PerUser = DefaultMaxReservationsPerUser
	}
	if l.Total <= 0 {
		l.Total = DefaultMaxReservationsTotal
	}
	return l
}

// Held counts unconfirmed reservations: of a namespace, of a user, in all;
// and Confirmed, the namespace's confirmed ones whose Shoot is not bound
// yet, which Limits.PerNamespace bounds together with the unconfirmed;
// UserConfirmed, the user's confirmed ones, which raise the user's limit.
type Held struct {
	Namespace, User, Total int
	Confirmed              int
	UserConfirmed          int
}

// UserLimit is the limit on c's user's unconfirmed reservations when the
// user holds held.
func (l Limits) UserLimit(held Held) int {
	return l.PerUser + userCreditPerConfirmed*held.UserConfirmed
}

// Check returns the *LimitError of one more reservation for c, whose
// namespace and user (and all together) hold held, or nil. A request
// without a user is bounded by its namespace and the total only.
func (l Limits) Check(c Claim, held Held) error {
	switch {
	case held.Namespace+held.Confirmed >= l.PerNamespace:
		return &LimitError{Namespace: c.Namespace, Reason: metrics.RefusedReasonNamespace, Limit: l.PerNamespace}
	case c.User != "" && held.User >= l.UserLimit(held):
		return &LimitError{Namespace: c.Namespace, User: c.User, Reason: metrics.RefusedReasonUser, Limit: l.UserLimit(held)}
	case held.Total >= l.Total && held.Namespace >= totalExemptPerNamespace:
		return &LimitError{Namespace: c.Namespace, Reason: metrics.RefusedReasonTotal, Limit: l.Total}
	}
	return nil
}

// LimitError says a reservation was not taken because a limit on live
// reservations was reached: no place is held, so nothing may be placed on
// its strength. Callers can errors.As it.
type LimitError struct {
	Namespace, User string
	// Reason is metrics.RefusedReasonNamespace, RefusedReasonUser or
	// RefusedReasonTotal.
	Reason string
	Limit  int
}

func (e *LimitError) Error() string {
	switch e.Reason {
	case metrics.RefusedReasonNamespace:
		return fmt.Sprintf("namespace %q holds %d reservations of Shoots not yet on their seed, the limit (reservations.maxPerNamespace); no place is reserved for this Shoot until some end",
			e.Namespace, e.Limit)
	case metrics.RefusedReasonUser:
		return fmt.Sprintf("user %q holds %d unconfirmed reservations, the limit (reservations.maxPerUser, and %d more per confirmed one); no place is reserved for this Shoot until some end",
			e.User, e.Limit, userCreditPerConfirmed)
	}
	return fmt.Sprintf("%d unconfirmed reservations are held, the limit (reservations.maxTotal); no place is reserved for this Shoot until some end", e.Limit)
}

// ReservationRecorder counts what happens to reservations (*metrics.Recorder).
type ReservationRecorder interface {
	ObserveReservationRefused(store, reason string)
	// ObserveReservationConfirmed records the time from a reservation to
	// the watch showing its Shoot.
	ObserveReservationConfirmed(d time.Duration)
	// ObserveReservationExpired counts one reservation that ended by time,
	// confirmed (its Shoot was seen) or not.
	ObserveReservationExpired(confirmed bool)
}

// HeldCounts counts unconfirmed reservations by namespace, by user and in
// all, the Held that Limits.Check judges: the Store's, and the entries a
// seedreserve ledger wrote. Not safe for concurrent use: its owner locks.
type HeldCounts struct {
	namespace, user map[string]int
	total           int
}

// NewHeldCounts returns empty counts.
func NewHeldCounts() HeldCounts {
	return HeldCounts{namespace: map[string]int{}, user: map[string]int{}}
}

// Held is what c's namespace and user (and all together) hold.
func (u *HeldCounts) Held(c Claim) Held {
	h := Held{Namespace: u.namespace[c.Namespace], Total: u.total}
	if c.User != "" {
		h.User = u.user[c.User]
	}
	return h
}

// Add counts c's reservation in (delta 1) or out (-1).
func (u *HeldCounts) Add(c Claim, delta int) {
	u.total += delta
	bump(u.namespace, c.Namespace, delta)
	if c.User != "" {
		bump(u.user, c.User, delta)
	}
}

func bump(m map[string]int, k string, delta int) {
	if m[k] += delta; m[k] <= 0 {
		delete(m, k)
	}
}

// ReservationCounts returns the unconfirmed reservations of namespace and
// of all namespaces.
func (s *Store) ReservationCounts(namespace string) (inNamespace, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.now())
	held := s.unconfirmed.Held(Claim{Namespace: namespace})
	return held.Namespace, held.Total
}

// checkLimitsLocked returns the *LimitError of a new reservation for c, old
// being the key's reservation it replaces (or nil).
func (s *Store) checkLimitsLocked(c Claim, old *reservation) error {
	if c.Exists {
		return nil
	}
	held := s.unconfirmed.Held(c)
	confirmed := s.confirmed.Held(c)
	held.Confirmed, held.UserConfirmed = confirmed.Namespace, confirmed.User
	if old != nil && old.confirmed && c.User != "" && old.User == c.User {
		held.UserConfirmed--
	}
	switch {
	case old != nil && !old.confirmed:
		held.Total--
		if old.Namespace == c.Namespace {
			held.Namespace--
		}
		if c.User != "" && old.User == c.User {
			held.User--
		}
	case old != nil && old.Namespace == c.Namespace:
		held.Confirmed--
	}
	err := s.limits.Check(c, held)
	if le, ok := err.(*LimitError); ok && s.recorder != nil {
		s.recorder.ObserveReservationRefused(metrics.RefusedStoreMemory, le.Reason)
	}
	return err
}

func (s *Store) observeConfirmed(r *reservation) {
	if s.recorder != nil {
		s.recorder.ObserveReservationConfirmed(s.now().Sub(r.reserved))
	}
}

func (s *Store) observeExpired(r *reservation) {
	if s.recorder != nil {
		s.recorder.ObserveReservationExpired(r.confirmed)
	}
}
