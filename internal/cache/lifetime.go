package cache

import "time"

// The life of a reservation, one rule for both books that hold places: the
// Store's reservations in memory (reservations.go) and the entries of the
// cluster-wide ledger (internal/seedreserve). A reservation is provisional
// for the confirm window; once its own Shoot is seen waiting without a seed
// it is confirmed until the TTL after it was taken; its Shoot ends it, by
// being counted on the reserved seed (the Shoot holds the place itself) or
// by being deleted. Nothing else makes it last: a Shoot of the same name that
// is not the one it was taken for confirms nothing (ShootRef.ID).

// Standing is what a reservation does at one moment.
type Standing uint8

const (
	// Provisional: younger than the confirm window, its Shoot not seen
	// (yet). It holds its place.
	Provisional Standing = iota
	// Confirmed: its Shoot waits without a seed. It holds its place until
	// the TTL after it was taken.
	Confirmed
	// Fulfilled: its Shoot is counted on the reserved seed and holds the
	// place itself; the reservation holds nothing.
	Fulfilled
	// Ended: the window passed without its Shoot (a later admission step
	// refused the CREATE), its Shoot was deleted, or the TTL passed.
	Ended
)

// Holds reports whether a reservation of this standing counts on its seed.
func (s Standing) Holds() bool { return s == Provisional || s == Confirmed }

// Lifetime is the rule, with the two durations of the configuration
// (reservations.confirmWindow, reservationTTL).
type Lifetime struct {
	ConfirmWindow, TTL time.Duration
}

// Standing judges a reservation taken age ago whose Shoot is in state shoot
// (as to the reserved seed and the reservation's identity).
func (l Lifetime) Standing(age time.Duration, shoot ShootState) Standing {
	switch {
	case shoot == ShootOnSeed:
		return Fulfilled
	case shoot == ShootDeleted || age >= l.TTL:
		return Ended
	case shoot == ShootPending:
		return Confirmed
	case age < l.ConfirmWindow:
		return Provisional
	}
	return Ended
}

// Deadline is when a reservation taken at taken ends by time alone, as long
// as its standing st does not change: the window's end while provisional,
// the TTL's while confirmed, taken itself otherwise.
func (l Lifetime) Deadline(taken time.Time, st Standing) time.Time {
	switch st {
	case Provisional:
		return taken.Add(l.ConfirmWindow)
	case Confirmed:
		return taken.Add(l.TTL)
	}
	return taken
}
