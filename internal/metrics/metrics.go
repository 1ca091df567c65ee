// Package metrics holds seedwarden's Prometheus collectors: every metric
// name, help text and label is defined here, and every package records
// through one Recorder. Names are stable: dashboards and alerts depend on
// them.
package metrics

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
	// RejectReasonManagedFields: metadata.managedFields over their limit.
	RejectReasonManagedFields = "managed_fields"
)

// Metric names.
const (
	DecisionsTotalName         = "seedwarden_scheduling_decisions_total"
	DurationName               = "seedwarden_scheduling_duration_seconds"
	SeedChargedShootsName      = "seedwarden_seed_charged_shoots"
	SeedAllocatableShootsName  = "seedwarden_seed_allocatable_shoots"
	SeedShootsName             = "seedwarden_seed_shoots"
	SeedUtilizationName        = "seedwarden_seed_utilization_ratio"
	ValidationsTotalName       = "seedwarden_validations_total"
	RejectedResourcesTotalName = "seedwarden_rejected_resources_total"
	CacheStaleSecondsName      = "seedwarden_cache_stale_seconds"
	CacheMaxStalenessName      = "seedwarden_cache_max_staleness_seconds"
	ClusterConflictsTotalName  = "seedwarden_scheduling_cluster_capacity_conflicts_total"
	ClientRejectionsTotalName  = "seedwarden_webhook_client_rejections_total"
	ServingCertExpiryName      = "seedwarden_webhook_serving_certificate_expiry_timestamp_seconds"
)

// Label names that are not obvious. None is a target label Prometheus adds
// at scrape time (namespace, pod, job, instance, service, container,
// endpoint): a metric's own would be renamed exported_<name>.
const (
	// RejectedNamespaceLabel is the namespace of a write the resource-size
	// webhook rejected.
	RejectedNamespaceLabel = "resource_namespace"
	// CertificateNamespaceLabel and CertificateNameLabel name the webhook's
	// cert-manager Certificate.
	CertificateNamespaceLabel = "certificate_namespace"
	CertificateNameLabel      = "certificate"
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

// Recorder records every seedwarden metric. A nil *Recorder is valid and
// records nothing, so callers need no nil checks. Consumers may declare the
// few methods they use as an interface of their own.
type Recorder struct {
	reg prometheus.Registerer

	// The webhooks' (registered by New).
	decisions   *prometheus.CounterVec
	duration    prometheus.Histogram
	validations *prometheus.CounterVec
	rejected    *prometheus.CounterVec
	// The request-derived label values of rejected (bounded.go).
	rejectedKinds, rejectedNamespaces *boundedValues
	conflicts                         prometheus.Counter
	clientRejections                  *prometheus.CounterVec
	servingCertExpiry                 *prometheus.GaugeVec   // no labels: nothing exported until set
	refused                           *prometheus.CounterVec // refused.go
	lifecycle                         reservationLifecycle   // refused.go
	requestBudgetWaits                *prometheus.CounterVec // requestbudget.go
	guardRefusals                     *prometheus.CounterVec // guards.go

	// The optional parts' (Group).
	pending      pendingCollectors
	reservations reservationCollectors
	certificates certificateCollectors
	headroom     headroomCollectors
	autoscaler   autoscalerCollectors
	leadership   leadershipCollectors
	seedDrain    seedDrainCollectors
	audit        auditCollectors
}

// Group is the collectors of a part of seedwarden that may be off; they are
// registered only when it runs, so that a disabled part exports nothing.
type Group int

// Groups of collectors besides the webhooks'.
const (
	// GroupPending is the retry controller's (internal/pending).
	GroupPending Group = iota + 1
	// GroupReservations is the cluster-wide capacity reservations'
	// (internal/seedreserve).
	GroupReservations
	// GroupCertificates is the serving certificate watch's
	// (internal/certwatch).
	GroupCertificates
	// GroupHeadroom is the headroom profiles' (internal/headroom).
	GroupHeadroom
	// GroupAutoscaler is the SeedAutoscaler controller's
	// (internal/autoscaler).
	GroupAutoscaler
	// GroupLeadership is the election's of the leader-only work
	// (internal/leadership).
	GroupLeadership
	// GroupSeedDrain is the SeedDrain controller's (internal/seeddrain).
	GroupSeedDrain
	// GroupAudit is the placement audit's (internal/audit).
	GroupAudit
)

// New creates the collectors and registers the webhooks' and those of
// groups on reg (controller-runtime's metrics.Registry in production).
// Collectors are created per call rather than as package globals, so fresh
// registries (tests) each get their own. If reg already holds identical
// collectors, those are reused. A nil reg leaves the collectors
// unregistered. A conflicting registration (same name, different shape) is a
// programming error and panics, like MustRegister.
func New(reg prometheus.Registerer, groups ...Group) *Recorder {
	m := &Recorder{
		rejectedKinds:      newBoundedValues(MaxRejectedKinds),
		rejectedNamespaces: newBoundedValues(MaxRejectedNamespaces),
		reg:                reg,
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
			Help: "Writes the resource-size webhook rejected, or would have rejected under enforcement warn or dryrun (operationMode log), by operation, kind, resource_namespace (the object's namespace) and reason (size, count).",
		}, []string{"operation", "kind", RejectedNamespaceLabel, "reason"}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: ClusterConflictsTotalName,
			Help: "Seeds the placing webhook chose from its replica's view that the cluster-wide reservation found full (capacity.coordination apiserver); each is followed by the next-best seed.",
		}),
		clientRejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: ClientRejectionsTotalName,
			Help: "TLS handshakes on the webhook port refused by client authentication (server.clientAuth), by reason (missing, untrusted, name_not_allowed).",
		}, []string{"reason"}),
		servingCertExpiry: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: ServingCertExpiryName,
			Help: "notAfter of the certificate the webhook port served to the last readiness probe, in Unix seconds: what this replica really serves, after the kubelet's Secret sync and the server's reload.",
		}, nil),
		refused:       newRefusedCollector(),
		guardRefusals: newGuardRefusals(),
		lifecycle:     newReservationLifecycle(),
		pending:       newPendingCollectors(),
		reservations:  newReservationCollectors(),
		certificates:  newCertificateCollectors(),
		headroom:      newHeadroomCollectors(),
		autoscaler:    newAutoscalerCollectors(),
		leadership:    newLeadershipCollectors(),
		seedDrain:     newSeedDrainCollectors(),
		audit:         newAuditCollectors(),
	}
	if reg == nil {
		return m
	}
	m.decisions = Register(reg, m.decisions)
	m.duration = Register(reg, m.duration)
	m.validations = Register(reg, m.validations)
	m.rejected = Register(reg, m.rejected)
	m.conflicts = Register(reg, m.conflicts)
	m.clientRejections = Register(reg, m.clientRejections)
	m.servingCertExpiry = Register(reg, m.servingCertExpiry)
	m.refused = Register(reg, m.refused)
	m.guardRefusals = Register(reg, m.guardRefusals)
	m.lifecycle.confirmation = Register(reg, m.lifecycle.confirmation)
	m.lifecycle.expired = Register(reg, m.lifecycle.expired)
	for _, g := range groups {
		switch g {
		case GroupPending:
			m.pending.register(reg)
		case GroupReservations:
			m.reservations.register(reg)
		case GroupCertificates:
			m.certificates.register(reg)
		case GroupHeadroom:
			m.headroom.register(reg)
		case GroupAutoscaler:
			m.autoscaler.register(reg)
		case GroupLeadership:
			m.leadership.register(reg)
		case GroupSeedDrain:
			m.seedDrain.register(reg)
		case GroupAudit:
			m.audit.register(reg)
		default:
			panic(fmt.Sprintf("seedwarden metrics: unknown group %d", g))
		}
	}
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

// ObserveClientRejection counts one webhook client refused by client
// authentication; reason is one of internal/server's ClientCert values.
func (m *Recorder) ObserveClientRejection(reason string) {
	if m == nil {
		return
	}
	m.clientRejections.WithLabelValues(reason).Inc()
}

// SetServingCertificateExpiry records the notAfter of the certificate the
// webhook port served (server.SelfProbe's handshake).
func (m *Recorder) SetServingCertificateExpiry(notAfter time.Time) {
	if m == nil {
		return
	}
	m.servingCertExpiry.WithLabelValues().Set(float64(notAfter.Unix()))
}

// ObserveDecision counts one handled admission and records how long it took.
func (m *Recorder) ObserveDecision(result, strategy string, d time.Duration) {
	if m == nil {
		return
	}
	m.decisions.WithLabelValues(result, strategy).Inc()
	m.duration.Observe(d.Seconds())
}

// ObserveValidation counts one admission of a validating webhook.
func (m *Recorder) ObserveValidation(webhook, result string) {
	if m == nil {
		return
	}
	m.validations.WithLabelValues(webhook, result).Inc()
}

// ObserveRejectedResource counts one write the resource-size webhook rejected
// (or, under enforcement warn or dryrun, would have rejected). The request's kind and
// namespace are bounded (bounded.go); the operation is CREATE or UPDATE.
func (m *Recorder) ObserveRejectedResource(operation, kind, namespace, reason string) {
	if m == nil {
		return
	}
	m.rejected.WithLabelValues(operation, m.rejectedKinds.value(kind), m.rejectedNamespaces.value(namespace), reason).Inc()
}

// ObserveClusterCapacityConflict counts one seed the placing webhook chose
// that turned out full across replicas.
func (m *Recorder) ObserveClusterCapacityConflict() {
	if m == nil {
		return
	}
	m.conflicts.Inc()
}

// registerReplacing registers c on m's registry, replacing an equal
// collector registered before (the collector of an earlier server's Store in
// the same process, as in tests); any other failure panics.
func (m *Recorder) registerReplacing(c prometheus.Collector) {
	if m == nil || m.reg == nil {
		return
	}
	err := m.reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		m.reg.Unregister(are.ExistingCollector)
		err = m.reg.Register(c)
	}
	if err != nil {
		panic(err)
	}
}
