package main

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/go-logr/logr"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/audit"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/metrics"
)

// setupAudit adds the placement audit (audit.enabled), which runs on the
// leader only: every audit.interval it checks the Shoots of the watch
// cache against the Store's landscape and writes the reports that changed.
func setupAudit(mgr ctrl.Manager, cfg *config.Config, store *cache.Store, synced func() bool, staleness handlers.StalenessGuard, leader leaderOnly, m *metrics.Recorder, log logr.Logger) {
	if !cfg.Audit.Enabled {
		return
	}
	leader.runner.Add(audit.ControllerName, func(ctx context.Context, _ crcache.Cache) error {
		// The manager's cache, not the term's: the audit adds no event
		// handler to remove, it only walks the informer's store.
		shoots, err := cachedShoots(ctx, mgr.GetCache())
		if err != nil {
			return err
		}
		r := &audit.Reconciler{
			Client: mgr.GetClient(), Reader: mgr.GetAPIReader(),
			Snapshot: store.Snapshot, Shoots: shoots,
			Ready: func() bool {
				_, stale := staleness.StaleBeyond(time.Now())
				return synced() && !stale
			},
			Interval: cfg.Audit.Interval.Duration, Limit: cfg.Audit.ResultsLimit,
			Metrics: m, Log: log.WithName(audit.ControllerName),
		}
		return r.Run(ctx)
	})
	log.Info("Placement audit enabled", append([]any{"interval", cfg.Audit.Interval.Duration, "resultsLimit", cfg.Audit.ResultsLimit}, leader.election.logValues()...)...)
}

// cachedShoots walks the Shoot informer's store: the reduced Shoots the
// watch holds, without a List from the API server.
func cachedShoots(ctx context.Context, c crcache.Cache) (func() iter.Seq[*cache.ReducedShoot], error) {
	inf, err := c.GetInformer(ctx, &api.Shoot{})
	if err != nil {
		return nil, fmt.Errorf("the Shoot informer: %w", err)
	}
	withStore, ok := inf.(interface{ GetStore() toolscache.Store })
	if !ok {
		return nil, fmt.Errorf("the Shoot informer (%T) has no store to read", inf)
	}
	return func() iter.Seq[*cache.ReducedShoot] {
		return func(yield func(*cache.ReducedShoot) bool) {
			for _, obj := range withStore.GetStore().List() {
				if s, ok := obj.(*cache.ReducedShoot); ok && !yield(s) {
					return
				}
			}
		}
	}, nil
}
