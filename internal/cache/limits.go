package cache

import (
	"fmt"

	"github.com/seedwarden/seedwarden/internal/metrics"
)

// Limits on live reservations: anyone who can reach the
// webhook can send admission reviews, and without a limit every review would
// hold a place on a seed for the reservation TTL. The per-namespace limit
// keeps a flood in one namespace from taking the places of the others; the
// total bounds a flood spread over many namespaces. A reservation a limit
// refuses is simply not taken: the placement stands, the Shoot is counted
// once it arrives, as if its reservation had expired.

// Defaults of Limits, equal to the configuration file's (reservations), as
// those of Options.
const (
	DefaultMaxReservationsPerNamespace = 100
	DefaultMaxReservationsTotal        = 1000
)

// Limits bound the live (unexpired, not yet consumed by their Shoot)
// reservations. Zero fields take the defaults.
type Limits struct {
	PerNamespace int
	Total        int
}

// WithDefaults fills the zero fields.
func (l Limits) WithDefaults() Limits {
	if l.PerNamespace <= 0 {
		l.PerNamespace = DefaultMaxReservationsPerNamespace
	}
	if l.Total <= 0 {
		l.Total = DefaultMaxReservationsTotal
	}
	return l
}

// Check returns the *LimitError of one more reservation in namespace, which
// holds inNamespace of the total live ones, or nil.
func (l Limits) Check(namespace string, inNamespace, total int) error {
	switch {
	case inNamespace >= l.PerNamespace:
		return &LimitError{Namespace: namespace, Reason: metrics.RefusedReasonNamespace, Limit: l.PerNamespace}
	case total >= l.Total:
		return &LimitError{Namespace: namespace, Reason: metrics.RefusedReasonTotal, Limit: l.Total}
	}
	return nil
}

// LimitError says a reservation was not taken because a limit on live
// reservations was reached: no place is held, so nothing may be placed on
// its strength. Callers can errors.As it.
type LimitError struct {
	Namespace string
	// Reason is metrics.RefusedReasonNamespace or metrics.RefusedReasonTotal.
	Reason string
	Limit  int
}

func (e *LimitError) Error() string {
	if e.Reason == metrics.RefusedReasonNamespace {
		return fmt.Sprintf("namespace %q holds %d live reservations, the limit (reservations.maxPerNamespace); no place is reserved for this Shoot until some end",
			e.Namespace, e.Limit)
	}
	return fmt.Sprintf("%d live reservations are held, the limit (reservations.maxTotal); no place is reserved for this Shoot until some end", e.Limit)
}

// RefusalRecorder counts refused reservations (*metrics.Recorder).
type RefusalRecorder interface {
	ObserveReservationRefused(store, reason string)
}

// ReservationCounts returns the live reservations of namespace and of all
// namespaces.
func (s *Store) ReservationCounts(namespace string) (inNamespace, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.now())
	return s.nsReservations[namespace], len(s.reservations)
}

// checkLimitsLocked returns the *LimitError of a new reservation in
// namespace, old being the key's reservation it replaces (or nil), and
// counts it.
func (s *Store) checkLimitsLocked(namespace string, old *reservation) error {
	inNamespace, total := s.nsReservations[namespace], len(s.reservations)
	if old != nil {
		total--
		if old.namespace == namespace {
			inNamespace--
		}
	}
	err := s.limits.Check(namespace, inNamespace, total)
	if le, ok := err.(*LimitError); ok && s.refusals != nil {
		s.refusals.ObserveReservationRefused(metrics.RefusedStoreMemory, le.Reason)
	}
	return err
}
