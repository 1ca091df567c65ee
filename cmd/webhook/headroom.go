package main

import (
	"fmt"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/headroom"
	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/metrics"
)

// Capacity reporting: the per-seed gauges with the allowlisted
// Seed labels, and the headroom runner both serve modes start.

// registerSeedStats exports the Store's per-seed gauges with the Seed
// labels metrics.seedLabels allowlists.
func registerSeedStats(cfg *config.Config, store *cache.Store, m *metrics.Recorder) {
	keys := cfg.Metrics.SeedLabels
	m.RegisterSeeds(cfg.SeedLabelNames(), func() []metrics.SeedStat { return store.SeedStats(keys) })
}

// checkHeadroom: every headroom profile's shoot is one
// core.gardener.cloud/v1beta1 Shoot, decoded as simulate decodes --shoot.
func checkHeadroom(cfg *config.Config) []string {
	if cfg.Headroom == nil {
		return nil
	}
	var out []string
	for i, p := range cfg.Headroom.Profiles {
		if len(p.Shoot) == 0 {
			continue // config reports it missing
		}
		if _, err := landscape.DecodeShoot(p.Shoot); err != nil {
			out = append(out, fmt.Sprintf("headroom.profiles[%d].shoot: %v", i, err))
		}
	}
	return out
}

// headroomProfiles are the configured profiles with their templates
// decoded (checkHeadroom has vetted them).
func headroomProfiles(cfg *config.Config) ([]headroom.Profile, error) {
	if cfg.Headroom == nil {
		return nil, nil
	}
	out := make([]headroom.Profile, len(cfg.Headroom.Profiles))
	for i, p := range cfg.Headroom.Profiles {
		shoot, err := landscape.DecodeShoot(p.Shoot)
		if err != nil {
			return nil, fmt.Errorf("headroom.profiles[%d].shoot: %w", i, err)
		}
		out[i] = headroom.Profile{Name: p.Name, Shoot: shoot, Limit: p.Limit, AlertBelow: p.AlertBelow}
	}
	return out, nil
}

// newHeadroomRunner is the headroom runner the configuration describes,
// counting on store with the webhooks' placement options while ready
// says the cache may be trusted (nil: always); nil without a headroom
// block.
func newHeadroomRunner(cfg *config.Config, store *cache.Store, ready func() bool, m *metrics.Recorder, log logr.Logger) (*headroom.Runner, error) {
	profiles, err := headroomProfiles(cfg)
	if err != nil || profiles == nil {
		return nil, err
	}
	return &headroom.Runner{
		Profiles: profiles,
		Interval: cfg.Headroom.Interval.Duration,
		Options:  placementOptions(cfg),
		Snapshot: store.Snapshot,
		Ready:    ready,
		Metrics:  m,
		Log:      log.WithName("headroom"),
	}, nil
}

// headroomGroup is the headroom collectors' group when profiles are
// configured.
func headroomGroup(cfg *config.Config) []metrics.Group {
	if cfg.Headroom == nil {
		return nil
	}
	return []metrics.Group{metrics.GroupHeadroom}
}

// setupHeadroom adds the headroom runner to every replica (it needs no
// leadership), counting only once the informers have synced and while the
// cache is fresh enough to place from.
func setupHeadroom(mgr ctrl.Manager, cfg *config.Config, store *cache.Store, synced func() bool, staleness handlers.StalenessGuard, m *metrics.Recorder, log logr.Logger) error {
	ready := func() bool {
		if !synced() {
			return false
		}
		_, stale := staleness.StaleBeyond(time.Now())
		return !stale
	}
	runner, err := newHeadroomRunner(cfg, store, ready, m, log)
	if err != nil || runner == nil {
		return err
	}
	return mgr.Add(runner)
}
