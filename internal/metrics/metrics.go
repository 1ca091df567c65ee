// Package metrics holds seedwarden's Prometheus collectors. Names are stable:
// dashboards and alerts depend on them.
package metrics

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Results of one admission of the mutating webhook (label "result").
const (
	ResultScheduled     = "scheduled"
	ResultUnschedulable = "unschedulable"
	ResultSkipped       = "skipped"
	ResultError         = "error"
)

// Results of one admission of a validating webhook (label "result").
const (
	ValidationAllowed = "allowed"
	ValidationDenied  = "denied"
	ValidationError   = "error"
)

// Reasons of seedwarden_rejected_resources_total.
const (
	RejectReasonSize  = "size"
	RejectReasonCount = "count"
)

// Metric names.
const (
	DecisionsTotalName         = "seedwarden_scheduling_decisions_total"
	DurationName               = "seedwarden_scheduling_duration_seconds"
	SeedUsageName              = "seedwarden_seed_usage"
	SeedAllocatableName        = "seedwarden_seed_allocatable"
	ValidationsTotalName       = "seedwarden_validations_total"
	RejectedResourcesTotalName = "seedwarden_rejected_resources_total"
	CacheStaleSecondsName      = "seedwarden_cache_stale_seconds"
	ClusterConflictsTotalName  = "seedwarden_scheduling_cluster_capacity_conflicts_total"
)

// DurationBuckets span 1µs to 100ms: a decision from the in-memory cache costs
// microseconds, so the default buckets (5ms and up) would put everything in
// the first one.
var DurationBuckets = []float64{
	1e-6, 2.5e-6, 5e-6,
	1e-5, 2.5e-5, 5e-5,
	1e-4, 2.5e-4, 5e-4,
	1e-3, 2.5e-3, 5e-3,
	1e-2, 2.5e-2, 5e-2,
	0.1,
}

// Metrics are the per-decision collectors. A nil *Metrics is valid and records
// nothing, so handlers need no nil checks.
type Metrics struct {
	decisions   *prometheus.CounterVec
	duration    prometheus.Histogram
	validations *prometheus.CounterVec
	rejected    *prometheus.CounterVec
	conflicts   prometheus.Counter
}

// New creates the collectors and registers them on reg (controller-runtime's
// metrics.Registry in production). Collectors are created per call rather than
// as package globals, so fresh registries (tests) each get their own. If reg
// already holds identical collectors, those are reused. A nil reg leaves the
// collectors unregistered. A conflicting registration (same name, different
// shape) is a programming error and panics, like MustRegister.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: DecisionsTotalName,
			Help: "Shoot admissions handled by the placing webhook, by result (scheduled, unschedulable, skipped, error) and strategy.",
		}, []string{"result", "strategy"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    DurationName,
			Help:    "Time to handle one Shoot admission in the placing webhook, from decoding the request to the response.",
			Buckets: DurationBuckets,
		}),
		validations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: ValidationsTotalName,
			Help: "Admissions handled by the validating webhooks, by webhook (binding, capacity, resource-size) and result (allowed, denied, error).",
		}, []string{"webhook", "result"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: RejectedResourcesTotalName,
			Help: "Writes the resource-size webhook rejected, or would have rejected in operationMode log, by operation, kind, namespace and reason (size, count).",
		}, []string{"operation", "kind", "namespace", "reason"}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: ClusterConflictsTotalName,
			Help: "Seeds the placing webhook chose from its replica's view that the cluster-wide reservation found full (capacity.coordination apiserver); each is followed by the next-best seed.",
		}),
	}
	if reg == nil {
		return m
	}
	m.decisions = Register(reg, m.decisions)
	m.duration = Register(reg, m.duration)
	m.validations = Register(reg, m.validations)
	m.rejected = Register(reg, m.rejected)
	m.conflicts = Register(reg, m.conflicts)
	return m
}

// Register registers c on reg, or returns the identical collector already
// there (a second server in one process, as in tests); a conflicting
// registration panics, like MustRegister.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	panic(fmt.Sprintf("seedwarden metrics: %v", err))
}

// ObserveDecision counts one handled admission and records how long it took.
func (m *Metrics) ObserveDecision(result, strategy string, d time.Duration) {
	if m == nil {
		return
	}
	m.decisions.WithLabelValues(result, strategy).Inc()
	m.duration.Observe(d.Seconds())
}

// ObserveValidation counts one admission of a validating webhook.
func (m *Metrics) ObserveValidation(webhook, result string) {
	if m == nil {
		return
	}
	m.validations.WithLabelValues(webhook, result).Inc()
}

// ObserveRejectedResource counts one write the resource-size webhook rejected
// (or, in operationMode log, would have rejected).
func (m *Metrics) ObserveRejectedResource(operation, kind, namespace, reason string) {
	if m == nil {
		return
	}
	m.rejected.WithLabelValues(operation, kind, namespace, reason).Inc()
}

// ObserveClusterCapacityConflict counts one seed the placing webhook chose
// that turned out full across replicas.
func (m *Metrics) ObserveClusterCapacityConflict() {
	if m == nil {
		return
	}
	m.conflicts.Inc()
}

// SeedStat is the state of one seed at scrape time.
type SeedStat struct {
	Name           string
	Usage          int64
	Allocatable    int64
	HasAllocatable bool
}

var (
	seedUsageDesc = prometheus.NewDesc(SeedUsageName,
		"Shoots charged to the seed (spec and status seed names, plus in-flight reservations).",
		[]string{"seed"}, nil)
	seedAllocatableDesc = prometheus.NewDesc(SeedAllocatableName,
		"The seed's status.allocatable.shoots; absent when the seed sets no limit.",
		[]string{"seed"}, nil)
)

// seedCollector reads seed state at scrape time, so there are no per-event
// gauge updates and deleted seeds vanish from the output instead of lingering
// as stale series.
type seedCollector struct {
	list func() []SeedStat
}

// NewSeedCollector returns a collector producing seedwarden_seed_usage and
// seedwarden_seed_allocatable from list, called once per scrape (it must be
// safe for concurrent use and cheap: it runs on every scrape).
func NewSeedCollector(list func() []SeedStat) prometheus.Collector {
	return &seedCollector{list: list}
}

func (c *seedCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- seedUsageDesc
	ch <- seedAllocatableDesc
}

func (c *seedCollector) Collect(ch chan<- prometheus.Metric) {
	if c.list == nil {
		return
	}
	stats := c.list()
	// A duplicate name would fail the whole scrape ("collected before with
	// the same name and label values"); keep the first.
	seen := sets.New[string]()
	for _, s := range stats {
		if seen.Has(s.Name) {
			continue
		}
		seen.Insert(s.Name)
		// NewConstMetric only fails for label values that are not valid
		// UTF-8, which seed names (DNS labels) never are; skipping such a
		// seed beats failing every scrape.
		m, err := prometheus.NewConstMetric(seedUsageDesc, prometheus.GaugeValue, float64(s.Usage), s.Name)
		if err != nil {
			continue
		}
		ch <- m
		if s.HasAllocatable {
			if m, err := prometheus.NewConstMetric(seedAllocatableDesc, prometheus.GaugeValue, float64(s.Allocatable), s.Name); err == nil {
				ch <- m
			}
		}
	}
}

// NewCacheStaleness returns a gauge, seedwarden_cache_stale_seconds, of how
// long the informer cache has been stale (some informer without an open
// watch: cache.Freshness), 0 while every informer watches. Alert on it
// above cache.maxStaleness: beyond that the replica does not place.
func NewCacheStaleness(staleFor func() time.Duration) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: CacheStaleSecondsName,
		Help: "How long the informer cache has been without a watch on some resource (the API server unreachable, a watch broken); 0 while every informer watches.",
	}, func() float64 { return staleFor().Seconds() })
}
