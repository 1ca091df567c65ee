package config

import "time"

// Defaults and limits of the seedDrain block.
const (
	// DefaultSeedDrainSyncPeriod: a migration takes minutes, so a look
	// every 15 s frees a budget slot soon after it ends without costing
	// the leader more than a list of Shoots from its cache.
	DefaultSeedDrainSyncPeriod = 15 * time.Second
	MinSeedDrainSyncPeriod     = time.Second
	MaxSeedDrainSyncPeriod     = 10 * time.Minute
)

// SeedDrain configures SeedDrains (internal/seeddrain): on every replica,
// their cordon (a drained seed takes no new Shoots), and on the elected
// leader, the controller that migrates the seeds' Shoots. It needs the
// SeedDrain CRD installed and runs only when serving a cluster.
type SeedDrain struct {
	// Enabled watches SeedDrains and runs the controller. Default: false
	// (opt-in: it moves control planes).
	Enabled bool `json:"enabled,omitempty"`
	// SyncPeriod is how often each SeedDrain is looked at again.
	// Default: 15s; 1s to 10m.
	SyncPeriod Duration `json:"syncPeriod,omitempty"`
}

func (c *Config) applySeedDrainDefaults() {
	if !c.SeedDrain.SyncPeriod.set {
		c.SeedDrain.SyncPeriod = NewDuration(DefaultSeedDrainSyncPeriod)
	}
}

func (c *Config) validateSeedDrain(p *problems) {
	validateDurationRange(p, "seedDrain.syncPeriod", c.SeedDrain.SyncPeriod, MinSeedDrainSyncPeriod, MaxSeedDrainSyncPeriod)
}
