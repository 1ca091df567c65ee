package config

import "time"

// Defaults and limits of the autoscaler block.
const (
	DefaultAutoscalerSyncPeriod = 30 * time.Second
	MinAutoscalerSyncPeriod     = time.Second
	MaxAutoscalerSyncPeriod     = time.Hour

	// DefaultAutoscalerSyncBudget is what one sync of one SeedAutoscaler
	// may take: a sync of the 16 metrics a spec may have, on 1,000 seeds
	// and 100,000 Shoots, takes well under a second (BENCHMARKS.md §23).
	DefaultAutoscalerSyncBudget = 5 * time.Second
	MinAutoscalerSyncBudget     = 100 * time.Millisecond
	// MaxAutoscalerSyncBudget leaves a sync (one minute at most) the time
	// to write its status.
	MaxAutoscalerSyncBudget = 30 * time.Second
)

// Autoscaler configures the SeedAutoscaler controller (internal/autoscaler),
// which scales ManagedSeedSets through their scale subresource. It runs only
// when serving a cluster, on the elected leader.
type Autoscaler struct {
	// Enabled runs the controller. Default: false (opt-in: it writes
	// ManagedSeedSets' replicas).
	Enabled bool `json:"enabled,omitempty"`
	// DryRun computes and reports (status, events, metrics) but never
	// writes the scale subresource, for every SeedAutoscaler. Default: false.
	DryRun bool `json:"dryRun,omitempty"`
	// SyncPeriod is how often each SeedAutoscaler is recomputed.
	// Default: 30s; 1s to 1h.
	SyncPeriod Duration `json:"syncPeriod,omitempty"`
	// SyncBudget bounds one sync of one SeedAutoscaler (its reads and its
	// recommendation); a sync past it stops, writes no replicas and says
	// so in the status. Default: 5s; 100ms to 30s.
	SyncBudget Duration `json:"syncBudget,omitempty"`
}

func (c *Config) applyAutoscalerDefaults() {
	if !c.Autoscaler.SyncPeriod.set {
		c.Autoscaler.SyncPeriod = NewDuration(DefaultAutoscalerSyncPeriod)
	}
	if !c.Autoscaler.SyncBudget.set {
		c.Autoscaler.SyncBudget = NewDuration(DefaultAutoscalerSyncBudget)
	}
}

func (c *Config) validateAutoscaler(p *problems) {
	validateDurationRange(p, "autoscaler.syncPeriod", c.Autoscaler.SyncPeriod, MinAutoscalerSyncPeriod, MaxAutoscalerSyncPeriod)
	validateDurationRange(p, "autoscaler.syncBudget", c.Autoscaler.SyncBudget, MinAutoscalerSyncBudget, MaxAutoscalerSyncBudget)
}
