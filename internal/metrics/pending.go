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

// Pending are the collectors of the pending-Shoot controller. A nil *Pending
// is valid and records nothing.
type Pending struct {
	pending prometheus.Gauge
	retries *prometheus.CounterVec
}

// NewPending creates the collectors and registers them on reg like New does
// (identical collectors already there are reused; nil leaves them
// unregistered).
func NewPending(reg prometheus.Registerer) *Pending {
	p := &Pending{
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: PendingShootsName,
			Help: "Shoots without a seed that the retry controller knows of and keeps trying to place (0 on replicas that are not the leader).",
		}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: SchedulingRetriesName,
			Help: "Placement attempts of the retry controller for pending Shoots, by result (scheduled, unschedulable, conflict, error).",
		}, []string{"result"}),
	}
	if reg == nil {
		return p
	}
	p.pending = Register(reg, p.pending)
	p.retries = Register(reg, p.retries)
	return p
}

// SetPending sets the number of pending Shoots.
func (p *Pending) SetPending(n int) {
	if p == nil {
		return
	}
	p.pending.Set(float64(n))
}

// ObserveRetry counts one placement attempt with its result.
func (p *Pending) ObserveRetry(result string) {
	if p == nil {
		return
	}
	p.retries.WithLabelValues(result).Inc()
}
