package main

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/pending"
	"github.com/seedwarden/seedwarden/internal/seeddrain"
)

// seedDrainDeps is what the SeedDrain controller shares with the webhooks:
// the Store (landscape and reservations), the cross-replica reserver (nil:
// local), and the cache's sync and staleness.
type seedDrainDeps struct {
	store     *cache.Store
	cluster   handlers.ClusterReserver
	synced    func() bool
	staleness handlers.StalenessGuard
}

// setupSeedDrain adds the SeedDrain controller (seedDrain.enabled), which
// runs on the leader only. The cordon needs no setup here: the Store
// watches SeedDrains on every replica (newStore).
func setupSeedDrain(mgr ctrl.Manager, cfg *config.Config, deps seedDrainDeps, leader leaderOnly, m *metrics.Recorder, log logr.Logger) error {
	if !cfg.SeedDrain.Enabled {
		return nil
	}
	// Checked once here: a bad configuration stops the process at startup.
	if _, err := newSeedDrain(cfg, deps, m).NewController(mgr, mgr.GetCache()); err != nil {
		return err
	}
	leader.runner.Add(seeddrain.ControllerName, func(ctx context.Context, c crcache.Cache) error {
		return newSeedDrain(cfg, deps, m).Run(ctx, mgr, c)
	})
	log.Info("SeedDrain controller enabled", append([]any{"syncPeriod", cfg.SeedDrain.SyncPeriod.Duration}, leader.election.logValues()...)...)
	return nil
}

// newSeedDrain is the controller the configuration describes: it decides
// with the webhooks' placement options and binds as the retry controller.
func newSeedDrain(cfg *config.Config, deps seedDrainDeps, m *metrics.Recorder) *seeddrain.Reconciler {
	r := &seeddrain.Reconciler{
		Metrics:    m,
		Store:      deps.store,
		Options:    placementOptions(cfg),
		BindMode:   pending.Mode(cfg.PendingShoots.BindMode),
		SyncPeriod: cfg.SeedDrain.SyncPeriod.Duration,
		Ready: func() bool {
			_, stale := deps.staleness.StaleBeyond(time.Now())
			return deps.synced() && !stale
		},
	}
	if c, ok := deps.cluster.(pending.ClusterReserver); ok && c != nil {
		r.Cluster = c
	}
	return r
}
