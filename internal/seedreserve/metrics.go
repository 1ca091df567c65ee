package seedreserve

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seedwarden/seedwarden/internal/cache"
)

// Metric names.
const (
	DurationName  = "seedwarden_capacity_reservation_duration_seconds"
	ConflictsName = "seedwarden_capacity_reservation_conflicts_total"
	BatchSizeName = "seedwarden_capacity_reservation_batch_size"
)

// Label values of DurationName.
const (
	opReserve = "reserve"
	opCheck   = "check"

	resultOK    = "ok"
	resultFull  = "full"
	resultError = "error"
)

// Metrics are the Reserver's collectors. A nil *Metrics records nothing.
type Metrics struct {
	duration  *prometheus.HistogramVec
	conflicts prometheus.Counter
	batch     prometheus.Histogram
}

// NewMetrics returns the collectors; register Collectors() where the
// process serves metrics.
func NewMetrics() *Metrics {
	return &Metrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: DurationName,
			Help: "Time of one cluster-wide capacity reservation (operation reserve) or dry-run check (check) " +
				"through the API server, waiting for this replica's earlier requests for the seed included; " +
				"result ok, full or error.",
			// Round trips to the API server: 1ms to 5s (the timeout is 3s by default).
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"operation", "result"}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: ConflictsName,
			Help: "Writes of a seed's reservation ConfigMap that another replica's write beat (409 Conflict or AlreadyExists); each is retried.",
		}),
		batch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    BatchSizeName,
			Help:    "Reservations for one seed decided and written together by this replica.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128},
		}),
	}
}

// Collectors returns every collector, for registration.
func (m *Metrics) Collectors() []prometheus.Collector {
	if m == nil {
		return nil
	}
	return []prometheus.Collector{m.duration, m.conflicts, m.batch}
}

func (m *Metrics) observe(op string, err error, d time.Duration) {
	if m == nil {
		return
	}
	result := resultOK
	var full *cache.CapacityError
	switch {
	case errors.As(err, &full):
		result = resultFull
	case err != nil:
		result = resultError
	}
	m.duration.WithLabelValues(op, result).Observe(d.Seconds())
}

func (m *Metrics) conflict() {
	if m != nil {
		m.conflicts.Inc()
	}
}

func (m *Metrics) observeBatch(n int) {
	if m != nil {
		m.batch.Observe(float64(n))
	}
}
