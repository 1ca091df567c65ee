package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Names of the metrics of the reservations' lifecycle: refused by a limit on
// unconfirmed reservations (config reservations.maxPerNamespace, maxPerUser,
// maxTotal), confirmed by the watch, or ended by time.
const (
	ReservationsRefusedName     = "seedwarden_reservations_refused_total"
	ReservationConfirmationName = "seedwarden_reservation_confirmation_seconds"
	ReservationsExpiredName     = "seedwarden_reservations_expired_total"
)

// Label values of ReservationsRefusedName: where the reservation was refused
// (store), and which limit (reason). No namespace label: the namespaces are
// the requester's choice.
const (
	RefusedStoreMemory    = "memory"
	RefusedStoreAPIServer = "apiserver"

	RefusedReasonNamespace = "namespace"
	RefusedReasonUser      = "user"
	RefusedReasonTotal     = "total"
)

// Label values of ReservationsExpiredName's state.
const (
	ExpiredUnconfirmed = "unconfirmed"
	ExpiredConfirmed   = "confirmed"
)

func newRefusedCollector() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: ReservationsRefusedName,
		Help: "Reservations not taken because a limit on unconfirmed reservations was reached, by store " +
			"(memory: this replica's; apiserver: the reservation ConfigMaps this replica writes) and reason " +
			"(namespace: reservations.maxPerNamespace; user: reservations.maxPerUser; total: reservations.maxTotal). " +
			"The mutating webhook then admits the Shoot without a seed (the retry controller places it); the capacity webhook denies the seed choice.",
	}, []string{"store", "reason"})
}

// reservationLifecycle are the collectors of a reservation's end in this
// replica's memory.
type reservationLifecycle struct {
	confirmation prometheus.Histogram
	expired      *prometheus.CounterVec
}

func newReservationLifecycle() reservationLifecycle {
	return reservationLifecycle{
		confirmation: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: ReservationConfirmationName,
			Help: "Time from a reservation to the watch showing its Shoot, on the replica that reserved. " +
				"reservations.confirmWindow must stay well above it: a reservation not confirmed within the window ends.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		expired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: ReservationsExpiredName,
			Help: "Reservations that ended by time, by state: unconfirmed (no Shoot showed up within reservations.confirmWindow: " +
				"a later admission step refused the CREATE, or a forged review) or confirmed (the Shoot was seen but not placed within reservationTTL).",
		}, []string{"state"}),
	}
}

// ObserveReservationConfirmed records the time from a reservation to the
// watch showing its Shoot.
func (m *Recorder) ObserveReservationConfirmed(d time.Duration) {
	if m == nil {
		return
	}
	m.lifecycle.confirmation.Observe(d.Seconds())
}

// ObserveReservationExpired counts one reservation that ended by time.
func (m *Recorder) ObserveReservationExpired(confirmed bool) {
	if m == nil {
		return
	}
	state := ExpiredUnconfirmed
	if confirmed {
		state = ExpiredConfirmed
	}
	m.lifecycle.expired.WithLabelValues(state).Inc()
}

// ObserveReservationRefused counts one reservation a limit refused (store
// RefusedStoreMemory or RefusedStoreAPIServer, reason RefusedReasonNamespace,
// RefusedReasonUser or RefusedReasonTotal).
func (m *Recorder) ObserveReservationRefused(store, reason string) {
	if m == nil {
		return
	}
	m.refused.WithLabelValues(store, reason).Inc()
}
