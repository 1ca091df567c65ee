package config

// Limits on the reservations a placement takes: anyone who can reach the
// webhook can send admission reviews, and every placement holds a place on
// its seed until the Shoot arrives or reservationTTL passes. The limits
// bound how many places such reviews can hold at once.

// Defaults of reservations (internal/cache's Limits default to the same, a
// test in cmd/webhook keeps them equal): far above what a garden holds in normal
// operation, where a reservation lives from admission until the Shoot shows
// up in the watch (milliseconds), or reservationTTL for a CREATE that a later
// admission step refused.
const (
	DefaultMaxReservationsPerNamespace = 100
	DefaultMaxReservationsTotal        = 1000
	// MaxMaxReservations bounds both fields.
	MaxMaxReservations = 1_000_000
)

// Reservations limits the live (unexpired, not yet consumed by their Shoot)
// reservations one replica holds. A placement beyond a limit is still made,
// without a reservation.
type Reservations struct {
	// MaxPerNamespace bounds the live reservations of one namespace, so
	// that a flood in one namespace leaves room for the others. Default: 100.
	MaxPerNamespace int `json:"maxPerNamespace,omitempty"`
	// MaxTotal bounds the live reservations of all namespaces together.
	// Default: 1000; at least maxPerNamespace.
	MaxTotal int `json:"maxTotal,omitempty"`
}

func (c *Config) applyReservationDefaults() {
	setDefault(&c.Reservations.MaxPerNamespace, DefaultMaxReservationsPerNamespace)
	setDefault(&c.Reservations.MaxTotal, DefaultMaxReservationsTotal)
}

func (c *Config) validateReservations(p *problems) {
	r := c.Reservations
	ok := true
	for _, f := range []struct {
		path string
		n    int
	}{{"reservations.maxPerNamespace", r.MaxPerNamespace}, {"reservations.maxTotal", r.MaxTotal}} {
		if f.n < 1 || f.n > MaxMaxReservations {
			p.add(f.path, "%d out of range 1-%d", f.n, MaxMaxReservations)
			ok = false
		}
	}
	if ok && r.MaxTotal < r.MaxPerNamespace {
		p.add("reservations.maxTotal", "%d is less than reservations.maxPerNamespace %d", r.MaxTotal, r.MaxPerNamespace)
	}
}
