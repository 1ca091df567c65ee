package config

import "time"

// Defaults and limits of the audit block.
const (
	// DefaultAuditInterval: what an operator changed on a seed shows in a
	// report within minutes, and a scan of 100,000 Shoots a round costs the
	// leader well under 1 % of a core (BENCHMARKS.md §28).
	DefaultAuditInterval = 5 * time.Minute
	MinAuditInterval     = 10 * time.Second
	MaxAuditInterval     = 24 * time.Hour
	// DefaultAuditResultsLimit bounds a report's results, as Gatekeeper's
	// constraintViolationsLimit does a constraint's status; the summary
	// still counts them all.
	DefaultAuditResultsLimit = 100
	// MaxAuditResultsLimit keeps a report far below etcd's object size
	// limit (about 600 bytes a result).
	MaxAuditResultsLimit = 1000
)

// Audit configures the placement audit (internal/audit): on the elected
// leader, a periodic check of every bound Shoot against the rules of
// staying on its seed, written as OpenReports Reports (one per project
// namespace) and metrics. Cluster mode only.
type Audit struct {
	// Enabled runs the audit. Default: false (opt-in: it writes Reports,
	// whose CRD must be installed).
	Enabled bool `json:"enabled,omitempty"`
	// Interval is the time between two audits. Default: 5m; 10s to 24h.
	Interval Duration `json:"interval,omitempty"`
	// ResultsLimit is the most results one report lists; the summary
	// counts all. Default: 100; 1 to 1000.
	ResultsLimit int `json:"resultsLimit,omitempty"`
}

func (c *Config) applyAuditDefaults() {
	if !c.Audit.Interval.set {
		c.Audit.Interval = NewDuration(DefaultAuditInterval)
	}
	setDefault(&c.Audit.ResultsLimit, DefaultAuditResultsLimit)
}

func (c *Config) validateAudit(p *problems) {
	validateDurationRange(p, "audit.interval", c.Audit.Interval, MinAuditInterval, MaxAuditInterval)
	if n := c.Audit.ResultsLimit; n < 1 || n > MaxAuditResultsLimit {
		p.add("audit.resultsLimit", "%d is out of range (want 1 to %d)", n, MaxAuditResultsLimit)
	}
}
