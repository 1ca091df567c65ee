package metrics

import "github.com/prometheus/client_golang/prometheus"

// Metric names of the pending-Shoot controller (internal/pending).
const (
	PendingShootsName     = "seedwarden_pending_shoots"
	SchedulingRetriesName = "seedwarden_scheduling_retries_total"
)

// ResultConflict is a retry whose binding lost an optimistic-concurrency
// conflict (409); it is retried quietly.
const ResultConflict = "conflict"

// pendingCollectors are GroupPending's.
type pendingCollectors struct {
	pending prometheus.Gauge
	retries *prometheus.CounterVec
}

func newPendingCollectors() pendingCollectors {
	return pendingCollectors{
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: PendingShootsName,
			Help: "Shoots without a seed that the retry controller knows of and keeps trying to place (0 on replicas that are not the leader).",
		}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: SchedulingRetriesName,
			Help: "Placement attempts of the retry controller for pending Shoots, by result (scheduled, unschedulable, conflict, error).",
		}, []string{"result"}),
	}
}

func (c *pendingCollectors) register(reg prometheus.Registerer) {
	c.pending = Register(reg, c.pending)
	c.retries = Register(reg, c.retries)
}

// SetPending sets the number of pending Shoots.
func (m *Recorder) SetPending(n int) {
	if m == nil {
		return
	}
	m.pending.pending.Set(float64(n))
}

// ObserveRetry counts one placement attempt of the retry controller with
// its result.
func (m *Recorder) ObserveRetry(result string) {
	if m == nil {
		return
	}
	m.pending.retries.WithLabelValues(result).Inc()
}
