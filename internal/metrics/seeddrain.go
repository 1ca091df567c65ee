package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names of the SeedDrain controller (internal/seeddrain).
const (
	SeedDrainShootsName = "seedwarden_seeddrain_shoots"
	// SeedDrainLastProgressName is when a drain (not a dry run) last
	// started or finished a migration: the SeedwardenSeedDrainStuck alert
	// reads it.
	SeedDrainLastProgressName    = "seedwarden_seeddrain_last_progress_timestamp_seconds"
	SeedDrainMigrationsTotalName = "seedwarden_seeddrain_migrations_total"
	SeedDrainNameLabel           = "drain"
	SeedDrainStateLabel          = "state"
	SeedDrainResultLabel         = "result"
)

// Values of the result label of seedwarden_seeddrain_migrations_total.
const (
	MigrationStarted   = "started"
	MigrationSucceeded = "succeeded"
	MigrationFailed    = "failed"
)

// seedDrainCollectors are GroupSeedDrain's.
type seedDrainCollectors struct {
	shoots, progress *prometheus.GaugeVec
	migrations       *prometheus.CounterVec
}

func newSeedDrainCollectors() seedDrainCollectors {
	return seedDrainCollectors{
		shoots: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: SeedDrainShootsName,
			Help: "Shoots of a SeedDrain by state (Planned, Waiting, Migrating, Moved, Failed, OptedOut, Unplaceable).",
		}, []string{SeedDrainNameLabel, SeedDrainStateLabel}),
		progress: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: SeedDrainLastProgressName,
			Help: "When a SeedDrain (not a dry run) last started or finished a migration, or was first seen (Unix seconds).",
		}, []string{SeedDrainNameLabel}),
		migrations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: SeedDrainMigrationsTotalName,
			Help: "Control-plane migrations of SeedDrains by result: started (binding written), succeeded (Restore on the destination succeeded), failed (Gardener reported Failed or Error, or the binding was refused).",
		}, []string{SeedDrainResultLabel}),
	}
}

func (c *seedDrainCollectors) register(reg prometheus.Registerer) {
	c.shoots = Register(reg, c.shoots)
	c.progress = Register(reg, c.progress)
	c.migrations = Register(reg, c.migrations)
}

// SetSeedDrain records a drain's Shoots per state and, unless it is a
// dry run (zero last), when it last progressed.
func (m *Recorder) SetSeedDrain(drain string, byState map[string]int, last time.Time) {
	if m == nil {
		return
	}
	c := &m.seedDrain
	for state, n := range byState {
		c.shoots.WithLabelValues(drain, state).Set(float64(n))
	}
	if last.IsZero() {
		c.progress.DeleteLabelValues(drain)
		return
	}
	c.progress.WithLabelValues(drain).Set(float64(last.Unix()))
}

// CountSeedDrainMigration counts a migration by result (MigrationStarted, ...).
func (m *Recorder) CountSeedDrainMigration(result string) {
	if m == nil {
		return
	}
	m.seedDrain.migrations.WithLabelValues(result).Inc()
}

// DeleteSeedDrain drops the series of a deleted SeedDrain.
func (m *Recorder) DeleteSeedDrain(drain string) {
	if m == nil {
		return
	}
	id := prometheus.Labels{SeedDrainNameLabel: drain}
	m.seedDrain.shoots.DeletePartialMatch(id)
	m.seedDrain.progress.Delete(id)
}
