package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/pending"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// internal/config is plain data that imports no other package of
// seedwarden; this file translates it into each package's options and adds
// the checks that need another package's knowledge.

// configChecks are the configuration rules that need what other packages
// accept; loadConfig runs them with config's own validation.
var configChecks = []config.Check{checkKubeconfigAllowedFields, checkCountableResources}

// placementOptions are the decision options the configuration sets. The
// configuration's values are placement's (TestOptionsAcceptConfigValues).
func placementOptions(cfg *config.Config) placement.Options {
	return placement.Options{Strategy: placement.Strategy(cfg.Strategy), NetworkMode: placement.NetworkMode(cfg.NetworkOverlap)}
}

// reservationLimits are the configured limits on live reservations, for
// the Store and the cluster-wide reservations alike.
func reservationLimits(cfg *config.Config) cache.Limits {
	return cache.Limits{PerNamespace: cfg.Reservations.MaxPerNamespace, Total: cfg.Reservations.MaxTotal}
}

// pendingConfig is the retry controller's configuration.
func pendingConfig(cfg *config.Config) pending.Config {
	return pending.Config{
		Mode:          pending.Mode(cfg.PendingShoots.BindMode),
		SchedulerName: cfg.SchedulerName,
		BackoffBase:   cfg.PendingShoots.BackoffBase.Duration,
		BackoffMax:    cfg.PendingShoots.BackoffMax.Duration,
		Workers:       cfg.PendingShoots.Workers,
	}
}

// checkKubeconfigAllowedFields: kubeconfigSecret.allowedFields names fields
// the kubeconfig Secret validator knows.
func checkKubeconfigAllowedFields(cfg *config.Config) []string {
	if err := handlers.ValidateKubeconfigAllowedFields(cfg.KubeconfigSecret.AllowedFields); err != nil {
		return []string{"kubeconfigSecret.allowedFields: " + err.Error()}
	}
	return nil
}

// checkCountableResources: count limits name resources the cache counts
// (config checks the group).
func checkCountableResources(cfg *config.Config) []string {
	var out []string
	check := func(path string, resources []string) {
		countable := cache.CountableResources()
		var bad []string
		for _, res := range resources {
			if !slices.Contains(countable, res) {
				bad = append(bad, fmt.Sprintf("%q", res))
			}
		}
		if len(bad) > 0 {
			out = append(out, fmt.Sprintf("%s.resources: cannot count %s (countable: %s of %s)",
				path, strings.Join(bad, ", "), strings.Join(countable, ", "), config.GardenerGroup))
		}
	}
	for i, l := range cfg.ResourceSize.Counts {
		check(fmt.Sprintf("resourceSize.counts[%d]", i), l.Resources.Resources)
	}
	if ra := cfg.ResourceAdmission; ra != nil {
		for i, l := range ra.Limits {
			if l.Count != nil {
				check(fmt.Sprintf("resourceAdmission.limits[%d]", i), l.Resources)
			}
		}
	}
	return out
}
