package main

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscaler"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// autoscalerDeps is what the autoscaler shares with the webhooks: the
// Store's landscape, the watch's pending Shoots and the cache's sync and
// staleness.
type autoscalerDeps struct {
	store     *cache.Store
	watched   *cache.PendingShoots
	synced    func() bool
	staleness handlers.StalenessGuard
}

// setupAutoscaler adds the SeedAutoscaler controller (autoscaler.enabled),
// which runs on the leader only.
func setupAutoscaler(ctx context.Context, mgr ctrl.Manager, cfg *config.Config, deps autoscalerDeps, leader leaderOnly, m *metrics.Recorder, log logr.Logger) error {
	if !cfg.Autoscaler.Enabled {
		return nil
	}
	r, err := newAutoscaler(cfg, deps, m)
	if err != nil {
		return err
	}
	if err := forgetDeletedShoots(ctx, mgr, deps.watched); err != nil {
		return err
	}
	// Checked once here: a bad configuration stops the process at startup.
	if _, err := r.NewController(mgr, mgr.GetCache()); err != nil {
		return err
	}
	// A new Reconciler each term: behavior's history starts afresh, as with
	// a new leader.
	leader.runner.Add(autoscaler.ControllerName, func(ctx context.Context, c crcache.Cache) error {
		r, err := newAutoscaler(cfg, deps, m)
		if err != nil {
			return err
		}
		return r.Run(ctx, mgr, c)
	})
	log.Info("SeedAutoscaler controller enabled", append([]any{"dryRun", cfg.Autoscaler.DryRun, "syncPeriod", cfg.Autoscaler.SyncPeriod.Duration,
		"headroomProfiles", len(r.Profiles)}, leader.election.logValues()...)...)
	if !leader.election.elected {
		log.Info("leaderElection.enabled is false: every replica runs the SeedAutoscaler controller; run a single replica")
	}
	return nil
}

// newAutoscaler is the controller the configuration describes, deciding
// with the webhooks' placement options and the headroom profiles.
func newAutoscaler(cfg *config.Config, deps autoscalerDeps, m *metrics.Recorder) (*autoscaler.Reconciler, error) {
	profiles, err := headroomProfiles(cfg)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*api.Shoot, len(profiles))
	for _, p := range profiles {
		byName[p.Name] = p.Shoot
	}
	r := &autoscaler.Reconciler{
		Metrics:    m,
		Snapshot:   deps.store.Snapshot,
		Options:    placementOptions(cfg),
		Profiles:   byName,
		DryRun:     cfg.Autoscaler.DryRun,
		SyncPeriod: cfg.Autoscaler.SyncPeriod.Duration,
		SyncBudget: cfg.Autoscaler.SyncBudget.Duration,
		Ready: func() bool {
			_, stale := deps.staleness.StaleBeyond(time.Now())
			return deps.synced() && !stale
		},
	}
	// The pending Shoots are listed before the Store's lock is taken:
	// PendingShoots, updated in the informer's transform, is ahead of the
	// Store's handlers, and PendingView leaves out what the Store counts.
	r.View = func() (*placement.Snapshot, []*api.Shoot) {
		var pending []*api.Shoot
		if deps.watched != nil {
			pending = deps.watched.List()
		}
		return deps.store.PendingView(pending)
	}
	return r, nil
}

// forgetDeletedShoots drops a deleted Shoot from the pending ones: the
// watch's last state of a Shoot deleted while pending still looks pending,
// and without the retry controller nothing else forgets it.
func forgetDeletedShoots(ctx context.Context, mgr ctrl.Manager, watched *cache.PendingShoots) error {
	if watched == nil {
		return nil
	}
	inf, err := mgr.GetCache().GetInformer(ctx, &api.Shoot{})
	if err != nil {
		return fmt.Errorf("watching Shoots for the autoscaler: %w", err)
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		key, err := toolscache.DeletionHandlingMetaNamespaceKeyFunc(obj)
		if err != nil {
			return
		}
		ns, name, err := toolscache.SplitMetaNamespaceKey(key)
		if err == nil {
			watched.Forget(types.NamespacedName{Namespace: ns, Name: name})
		}
	}})
	return err
}
