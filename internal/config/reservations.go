package config

import "time"

// A placement reserves a place on its seed at admission, before the later
// admission steps run. The reservation is provisional: unless the watch shows
// its Shoot within the confirm window, it ends (a later step refused the
// CREATE, or the review was forged). The limits bound how many unconfirmed
// reservations a namespace, a user and everyone together hold at once.

// Defaults of reservations (internal/cache's default to the same, a test in
// cmd/webhook keeps them equal). A real CREATE is confirmed within 2.5 s
// even in a burst of 300 through three replicas on two shared cores
// (seedwarden_reservation_confirmation_seconds, docs/design.md): the window
// is twice that. The limits are above what one user or namespace has in
// flight outside a burst.
const (
	DefaultConfirmWindow               = 5 * time.Second
	DefaultMaxReservationsPerNamespace = 100
	DefaultMaxReservationsPerUser      = 20
	DefaultMaxReservationsTotal        = 1000
	// MaxMaxReservations bounds the limits.
	MaxMaxReservations = 1_000_000
	// MinConfirmWindow: expiries are stored to the second.
	MinConfirmWindow = time.Second
)

// Reservations bounds the unconfirmed reservations one replica holds. Beyond
// a limit no place is reserved: the mutating webhook admits the Shoot without
// a seed (the retry controller places it), the capacity webhook denies.
type Reservations struct {
	// ConfirmWindow is how long a reservation holds its place before the
	// watch shows its Shoot; then it lasts until the Shoot is placed or
	// reservationTTL passes. Default: 5s, or reservationTTL if shorter;
	// 1s to reservationTTL.
	ConfirmWindow Duration `json:"confirmWindow,omitempty"`
	// MaxPerNamespace bounds the reservations of one namespace whose Shoot
	// is not on its seed yet, unconfirmed and confirmed together, so that a
	// flood in one namespace leaves room for the others. Default: 100.
	MaxPerNamespace int `json:"maxPerNamespace,omitempty"`
	// MaxPerUser bounds the unconfirmed reservations of one user
	// (userInfo.username of the request), plus 2 per confirmed one of the
	// user's (its Shoot exists and waits for a seed). Default: 20.
	MaxPerUser int `json:"maxPerUser,omitempty"`
	// MaxTotal bounds the unconfirmed reservations of all namespaces
	// together; past it a namespace holding none still gets one.
	// Default: 1000; at least maxPerNamespace.
	MaxTotal int `json:"maxTotal,omitempty"`
}

func (c *Config) applyReservationDefaults() {
	if !c.Reservations.ConfirmWindow.set {
		// Within a shorter reservationTTL, which configurations written
		// before the window existed may set.
		window := max(MinConfirmWindow, min(DefaultConfirmWindow, c.ReservationTTL.Duration))
		c.Reservations.ConfirmWindow = Duration{Duration: window, set: true}
	}
	setDefault(&c.Reservations.MaxPerNamespace, DefaultMaxReservationsPerNamespace)
	setDefault(&c.Reservations.MaxPerUser, DefaultMaxReservationsPerUser)
	setDefault(&c.Reservations.MaxTotal, DefaultMaxReservationsTotal)
}

func (c *Config) validateReservations(p *problems) {
	r := c.Reservations
	ok := true
	for _, f := range []struct {
		path string
		n    int
	}{{"reservations.maxPerNamespace", r.MaxPerNamespace}, {"reservations.maxPerUser", r.MaxPerUser}, {"reservations.maxTotal", r.MaxTotal}} {
		if f.n < 1 || f.n > MaxMaxReservations {
			p.add(f.path, "%d out of range 1-%d", f.n, MaxMaxReservations)
			ok = false
		}
	}
	validateDurationRange(p, "reservations.confirmWindow", r.ConfirmWindow, MinConfirmWindow, max(MinConfirmWindow, c.ReservationTTL.Duration))
	if ok && r.MaxTotal < r.MaxPerNamespace {
		p.add("reservations.maxTotal", "%d is less than reservations.maxPerNamespace %d", r.MaxTotal, r.MaxPerNamespace)
	}
}
