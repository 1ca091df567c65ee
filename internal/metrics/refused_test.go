package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

func TestObserveReservationRefused(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg)
	m.ObserveReservationRefused(RefusedStoreMemory, RefusedReasonNamespace)
	m.ObserveReservationRefused(RefusedStoreMemory, RefusedReasonNamespace)
	m.ObserveReservationRefused(RefusedStoreMemory, RefusedReasonUser)
	m.ObserveReservationRefused(RefusedStoreAPIServer, RefusedReasonTotal)
	(*Recorder)(nil).ObserveReservationRefused(RefusedStoreMemory, RefusedReasonTotal)

	want := `
# HELP seedwarden_reservations_refused_total Reservations not taken because a limit on unconfirmed reservations was reached, by store (memory: this replica's; apiserver: the reservation ConfigMaps this replica writes) and reason (namespace: reservations.maxPerNamespace; user: reservations.maxPerUser; total: reservations.maxTotal). The mutating webhook then admits the Shoot without a seed (the retry controller places it); the capacity webhook denies the seed choice.
# TYPE seedwarden_reservations_refused_total counter
seedwarden_reservations_refused_total{reason="namespace",store="memory"} 2
seedwarden_reservations_refused_total{reason="total",store="apiserver"} 1
seedwarden_reservations_refused_total{reason="user",store="memory"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), ReservationsRefusedName))
}

func TestObserveReservationLifecycle(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg)
	m.ObserveReservationConfirmed(30 * time.Millisecond)
	m.ObserveReservationConfirmed(2 * time.Second)
	m.ObserveReservationExpired(false)
	m.ObserveReservationExpired(false)
	m.ObserveReservationExpired(true)
	(*Recorder)(nil).ObserveReservationConfirmed(time.Second)
	(*Recorder)(nil).ObserveReservationExpired(true)

	want := `
# HELP seedwarden_reservation_confirmation_seconds Time from a reservation to the watch showing its Shoot, on the replica that reserved. reservations.confirmWindow must stay well above it: a reservation not confirmed within the window ends.
# TYPE seedwarden_reservation_confirmation_seconds histogram
seedwarden_reservation_confirmation_seconds_bucket{le="0.005"} 0
seedwarden_reservation_confirmation_seconds_bucket{le="0.01"} 0
seedwarden_reservation_confirmation_seconds_bucket{le="0.025"} 0
seedwarden_reservation_confirmation_seconds_bucket{le="0.05"} 1
seedwarden_reservation_confirmation_seconds_bucket{le="0.1"} 1
seedwarden_reservation_confirmation_seconds_bucket{le="0.25"} 1
seedwarden_reservation_confirmation_seconds_bucket{le="0.5"} 1
seedwarden_reservation_confirmation_seconds_bucket{le="1"} 1
seedwarden_reservation_confirmation_seconds_bucket{le="2.5"} 2
seedwarden_reservation_confirmation_seconds_bucket{le="5"} 2
seedwarden_reservation_confirmation_seconds_bucket{le="10"} 2
seedwarden_reservation_confirmation_seconds_bucket{le="30"} 2
seedwarden_reservation_confirmation_seconds_bucket{le="+Inf"} 2
seedwarden_reservation_confirmation_seconds_sum 2.03
seedwarden_reservation_confirmation_seconds_count 2
# HELP seedwarden_reservations_expired_total Reservations that ended by time, by state: unconfirmed (no Shoot showed up within reservations.confirmWindow: a later admission step refused the CREATE, or a forged review) or confirmed (the Shoot was seen but not placed within reservationTTL).
# TYPE seedwarden_reservations_expired_total counter
seedwarden_reservations_expired_total{state="confirmed"} 1
seedwarden_reservations_expired_total{state="unconfirmed"} 2
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), ReservationConfirmationName, ReservationsExpiredName))
}
