package metrics

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names of the pending-Shoot controller (internal/pending).
const (
	PendingShootsName         = "seedwarden_pending_shoots"
	PendingOldestAgeName      = "seedwarden_pending_shoots_oldest_age_seconds"
	PendingLongestBackoffName = "seedwarden_pending_shoots_longest_backoff_seconds"
	SchedulingRetriesName     = "seedwarden_scheduling_retries_total"
	RetryControllerLeaderName = "seedwarden_retry_controller_leader"
)

// ResultConflict is a retry whose binding lost an optimistic-concurrency
// conflict (409); it is retried quietly.
const ResultConflict = "conflict"

// ResultRefused is a retry whose bind the cluster-wide reservations refused
// (another replica holds the seed's last place); it is retried on the short
// conflict backoff.
const ResultRefused = "refused"

// pendingCollectors are GroupPending's.
type pendingCollectors struct {
	pending prometheus.Gauge
	retries *prometheus.CounterVec
	leader  prometheus.Gauge
	// oldest is read at scrape time from the function the controller sets
	// (SetPendingOldestAge), so the age grows between events without a
	// ticker and without API calls.
	oldest    prometheus.Collector
	oldestAge *atomic.Pointer[func() time.Duration]
	// longest reads the longest backoff step the same way
	// (SetPendingLongestBackoff).
	longest        prometheus.Collector
	longestBackoff *atomic.Pointer[func() time.Duration]
	// reasons reads the pending Shoots per reason code the same way
	// (SetPendingReasons).
	reasons *pendingReasons
}

func newPendingCollectors() pendingCollectors {
	age := &atomic.Pointer[func() time.Duration]{}
	backoff := &atomic.Pointer[func() time.Duration]{}
	return pendingCollectors{
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: PendingShootsName,
			Help: "Shoots without a seed that the retry controller knows of and keeps trying to place (0 on replicas that are not the leader).",
		}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: SchedulingRetriesName,
			Help: "Placement attempts of the retry controller for pending Shoots, by result (scheduled, unschedulable, conflict, refused, error).",
		}, []string{"result"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: RetryControllerLeaderName,
			Help: "1 while this replica runs the retry controller for pending Shoots (it holds the leader lease, or leader election is off), else 0.",
		}),
		oldest: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: PendingOldestAgeName,
			Help: "Age (since creationTimestamp) of the oldest Shoot the retry controller knows to be pending; 0 when none is, and on replicas that are not the leader.",
		}, readDuration(age)),
		oldestAge: age,
		longest: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: PendingLongestBackoffName,
			Help: "The longest backoff step a pending Shoot is at: the wait its last failed attempt set (pendingShoots.backoffBase, doubled per failure, up to backoffMax); attempts triggered by Seed or Shoot events do not count as failures. 0 when no pending Shoot has failed, and on replicas that are not the leader.",
		}, readDuration(backoff)),
		longestBackoff: backoff,
		reasons:        newPendingReasons(),
	}
}

// readDuration reads the function f points to, 0 while unset.
func readDuration(f *atomic.Pointer[func() time.Duration]) func() float64 {
	return func() float64 {
		if g := f.Load(); g != nil {
			return (*g)().Seconds()
		}
		return 0
	}
}

func (c *pendingCollectors) register(reg prometheus.Registerer) {
	c.pending = Register(reg, c.pending)
	c.retries = Register(reg, c.retries)
	c.leader = Register(reg, c.leader)
	c.oldest = registerFunc(reg, c.oldest)
	c.longest = registerFunc(reg, c.longest)
	c.reasons = registerFunc(reg, c.reasons).(*pendingReasons)
}

// registerFunc registers a GaugeFunc. The GaugeFunc of an earlier Recorder
// on reg (a second server in one process, as in tests) reads that
// Recorder's pointer: it is unregistered so the value comes from this one.
func registerFunc(reg prometheus.Registerer, c prometheus.Collector) prometheus.Collector {
	if existing := Register(reg, c); existing != c {
		reg.Unregister(existing)
		return Register(reg, c)
	}
	return c
}

// SetPending sets the number of pending Shoots.
func (m *Recorder) SetPending(n int) {
	if m == nil {
		return
	}
	m.pending.pending.Set(float64(n))
}

// SetPendingOldestAge makes the oldest-pending gauge read age at each
// scrape; age must be cheap and safe for concurrent use.
func (m *Recorder) SetPendingOldestAge(age func() time.Duration) {
	if m == nil {
		return
	}
	m.pending.oldestAge.Store(&age)
}

// SetPendingLongestBackoff makes the longest-backoff gauge read longest at
// each scrape; longest must be cheap and safe for concurrent use.
func (m *Recorder) SetPendingLongestBackoff(longest func() time.Duration) {
	if m == nil {
		return
	}
	m.pending.longestBackoff.Store(&longest)
}

// SetRetryControllerLeader records whether this replica runs the retry
// controller.
func (m *Recorder) SetRetryControllerLeader(running bool) {
	if m == nil {
		return
	}
	v := 0.0
	if running {
		v = 1
	}
	m.pending.leader.Set(v)
}

// ObserveRetry counts one placement attempt of the retry controller with
// its result.
func (m *Recorder) ObserveRetry(result string) {
	if m == nil {
		return
	}
	m.pending.retries.WithLabelValues(result).Inc()
}
