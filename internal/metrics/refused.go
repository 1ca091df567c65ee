package metrics

import "github.com/prometheus/client_golang/prometheus"

// ReservationsRefusedName counts placements that were made without a
// reservation because a limit on live reservations was reached
// (config reservations.maxPerNamespace, reservations.maxTotal).
const ReservationsRefusedName = "seedwarden_reservations_refused_total"

// Label values of ReservationsRefusedName: where the reservation was refused
// (store), and which limit (reason). No namespace label: the namespaces are
// the requester's choice.
const (
	RefusedStoreMemory    = "memory"
	RefusedStoreAPIServer = "apiserver"

	RefusedReasonNamespace = "namespace"
	RefusedReasonTotal     = "total"
)

func newRefusedCollector() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: ReservationsRefusedName,
		Help: "Reservations not taken because a limit on live reservations was reached, by store " +
			"(memory: this replica's; apiserver: the reservation ConfigMaps this replica writes) and reason " +
			"(namespace: reservations.maxPerNamespace; total: reservations.maxTotal). The mutating webhook then admits the Shoot without a seed (the retry controller places it); the capacity webhook checks the user's seed without reserving.",
	}, []string{"store", "reason"})
}

// ObserveReservationRefused counts one reservation a limit refused (store
// RefusedStoreMemory or RefusedStoreAPIServer, reason RefusedReasonNamespace
// or RefusedReasonTotal).
func (m *Recorder) ObserveReservationRefused(store, reason string) {
	if m == nil {
		return
	}
	m.refused.WithLabelValues(store, reason).Inc()
}
