package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names of the placement audit (internal/audit).
const (
	// AuditViolatingShootsName is read by the SeedwardenPlacementViolations
	// alert.
	AuditViolatingShootsName = "seedwarden_audit_violating_shoots"
	// AuditLastRunName is when the last audit completed: the
	// SeedwardenPlacementAuditStale alert reads it.
	AuditLastRunName  = "seedwarden_audit_last_run_timestamp_seconds"
	AuditDurationName = "seedwarden_audit_duration_seconds"
	AuditSeedLabel    = "seed"
	AuditRuleLabel    = "rule"
)

// auditCollectors are GroupAudit's.
type auditCollectors struct {
	violating *prometheus.GaugeVec
	lastRun   *prometheus.GaugeVec // no labels: nothing exported until set
	duration  *prometheus.GaugeVec // no labels: nothing exported until set
}

func newAuditCollectors() auditCollectors {
	return auditCollectors{
		violating: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: AuditViolatingShootsName,
			Help: "Shoots whose seed breaks a placement rule today, by seed and rule (a placement reason code), as of the last audit.",
		}, []string{AuditSeedLabel, AuditRuleLabel}),
		lastRun: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: AuditLastRunName,
			Help: "When the last placement audit completed, reports written (Unix seconds); only the leader exports it.",
		}, nil),
		duration: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: AuditDurationName,
			Help: "How long the last placement audit took: the scan of the cache and the report writes.",
		}, nil),
	}
}

func (c *auditCollectors) register(reg prometheus.Registerer) {
	c.violating = Register(reg, c.violating)
	c.lastRun = Register(reg, c.lastRun)
	c.duration = Register(reg, c.duration)
}

// AuditKey is a (seed, rule) pair of seedwarden_audit_violating_shoots.
type AuditKey struct{ Seed, Rule string }

// SetAudit records a completed audit: the Shoots in violation per seed and
// rule (pairs absent now are dropped), when it completed and how long it
// took.
func (m *Recorder) SetAudit(violating map[AuditKey]int, done time.Time, took time.Duration) {
	if m == nil {
		return
	}
	c := &m.audit
	c.violating.Reset()
	for k, n := range violating {
		c.violating.WithLabelValues(k.Seed, k.Rule).Set(float64(n))
	}
	c.lastRun.WithLabelValues().Set(float64(done.Unix()))
	c.duration.WithLabelValues().Set(took.Seconds())
}

// ForgetAudit drops the audit's series when a term ends: only the leader
// audits, and a replica that no longer does must not export old findings.
func (m *Recorder) ForgetAudit() {
	if m == nil {
		return
	}
	m.audit.violating.Reset()
	m.audit.lastRun.Reset()
	m.audit.duration.Reset()
}
