package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

func TestObserveReservationRefused(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg)
	m.ObserveReservationRefused(RefusedStoreMemory, RefusedReasonNamespace)
	m.ObserveReservationRefused(RefusedStoreMemory, RefusedReasonNamespace)
	m.ObserveReservationRefused(RefusedStoreAPIServer, RefusedReasonTotal)
	(*Recorder)(nil).ObserveReservationRefused(RefusedStoreMemory, RefusedReasonTotal)

	want := `
# HELP seedwarden_reservations_refused_total Reservations not taken because a limit on live reservations was reached, by store (memory: this replica's; apiserver: the reservation ConfigMaps this replica writes) and reason (namespace: reservations.maxPerNamespace; total: reservations.maxTotal). The mutating webhook then admits the Shoot without a seed (the retry controller places it); the capacity webhook checks the user's seed without reserving.
# TYPE seedwarden_reservations_refused_total counter
seedwarden_reservations_refused_total{reason="namespace",store="memory"} 2
seedwarden_reservations_refused_total{reason="total",store="apiserver"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), ReservationsRefusedName))
}
