package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names of the cluster-wide capacity reservations
// (internal/seedreserve).
const (
	ReservationDurationName  = "seedwarden_capacity_reservation_duration_seconds"
	ReservationConflictsName = "seedwarden_capacity_reservation_conflicts_total"
	ReservationBatchSizeName = "seedwarden_capacity_reservation_batch_size"
	ReservationDeferralsName = "seedwarden_capacity_reservation_deferrals_total"
)

// Label values of ReservationDurationName: operation, and result.
const (
	OperationReserve = "reserve"
	OperationCheck   = "check"

	ReservationOK    = "ok"
	ReservationFull  = "full"
	ReservationError = "error"
)

// reservationCollectors are GroupReservations'.
type reservationCollectors struct {
	duration  *prometheus.HistogramVec
	conflicts prometheus.Counter
	batch     prometheus.Histogram
	deferrals prometheus.Counter
}

func newReservationCollectors() reservationCollectors {
	return reservationCollectors{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: ReservationDurationName,
			Help: "Time of one cluster-wide capacity reservation (operation reserve) or dry-run check (check) " +
				"through the API server, waiting for this replica's earlier requests for the seed included; " +
				"result ok, full or error.",
			// Round trips to the API server: 1ms to 5s (the timeout is 3s by default).
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"operation", "result"}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: ReservationConflictsName,
			Help: "Writes of a seed's reservation ConfigMap that another replica's write beat (409 Conflict or AlreadyExists); each is retried.",
		}),
		batch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    ReservationBatchSizeName,
			Help:    "Reservations for one seed decided and written together by this replica.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128},
		}),
		deferrals: prometheus.NewCounter(prometheus.CounterOpts{
			Name: ReservationDeferralsName,
			Help: "Placements the mutating webhook of this replica, which does not lead, left to the leader because another replica's write " +
				"of the seed's reservation ConfigMap beat this replica's within the last 10 s; the Shoot is admitted without a seed " +
				"and the leader's retry controller places it.",
		}),
	}
}

func (c *reservationCollectors) register(reg prometheus.Registerer) {
	c.duration = Register(reg, c.duration)
	c.conflicts = Register(reg, c.conflicts)
	c.batch = Register(reg, c.batch)
	c.deferrals = Register(reg, c.deferrals)
}

// ObserveReservation records one reservation or check through the API
// server (operation OperationReserve or OperationCheck; result
// ReservationOK, ReservationFull or ReservationError) and how long it took.
func (m *Recorder) ObserveReservation(operation, result string, d time.Duration) {
	if m == nil {
		return
	}
	m.reservations.duration.WithLabelValues(operation, result).Observe(d.Seconds())
}

// ObserveReservationConflict counts one write of a reservation ConfigMap
// that another replica's write beat.
func (m *Recorder) ObserveReservationConflict() {
	if m == nil {
		return
	}
	m.reservations.conflicts.Inc()
}

// ObserveReservationBatch records the size of one batch of reservations for
// a seed.
func (m *Recorder) ObserveReservationBatch(n int) {
	if m == nil {
		return
	}
	m.reservations.batch.Observe(float64(n))
}

// ObserveReservationDeferred counts one placement left to the leader
// because other replicas were writing the seed's reservations.
func (m *Recorder) ObserveReservationDeferred() {
	if m == nil {
		return
	}
	m.reservations.deferrals.Inc()
}
