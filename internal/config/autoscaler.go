package config

import "time"

// Defaults and limits of the autoscaler block.
const (
	DefaultAutoscalerSyncPeriod = 30 * time.Second
	MinAutoscalerSyncPeriod     = time.Second
	MaxAutoscalerSyncPeriod     = time.Hour
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
}

func (c *Config) applyAutoscalerDefaults() {
	if !c.Autoscaler.SyncPeriod.set {
		c.Autoscaler.SyncPeriod = NewDuration(DefaultAutoscalerSyncPeriod)
	}
}

func (c *Config) validateAutoscaler(p *problems) {
	validateDurationRange(p, "autoscaler.syncPeriod", c.Autoscaler.SyncPeriod, MinAutoscalerSyncPeriod, MaxAutoscalerSyncPeriod)
}
