package main

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/pending"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedreserve"
)

// internal/config is plain data that imports no other package of
// seedwarden; this file translates it into each package's options and adds
// the checks that need another package's knowledge.

// configChecks are the configuration rules that need what other packages
// accept; loadConfig runs them with config's own validation.
var configChecks = []config.Check{checkKubeconfigAllowedFields, checkCountableResources, checkScorers, checkHeadroom, checkPolicies}

// loadConfig reads the configuration file of serve, plan, simulate and
// validate, with configChecks and then extra; the defaults without a file.
// A file that cannot be read is named by its flag, as every file named on
// the command line is; problems in its content name the file and the field.
func loadConfig(path string, extra ...config.Check) (*config.Config, error) {
	if path == "" {
		return config.Default(), nil
	}
	cfg, err := config.Load(path, append(slices.Clip(configChecks), extra...)...)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return nil, fmt.Errorf("--config %q: %w", path, err)
	}
	return cfg, err
}

// placementOptions are the decision options the configuration sets. The
// configuration's values are placement's (TestOptionsAcceptConfigValues).
// Every placer (mutating webhook, retry controller, simulate, the
// cluster-wide capacity reservations) takes its options from here, so they
// all rank with the same profile.
func placementOptions(cfg *config.Config) placement.Options {
	return placement.Options{
		Strategy:    placement.Strategy(cfg.Strategy),
		NetworkMode: placement.NetworkMode(cfg.NetworkOverlap),
		Scoring:     scoringProfile(cfg.Scoring),
		Policies:    placementPolicies(cfg.Policies),
	}
}

// placementPolicies converts the policies block, the one place every
// decision site gets them from (issue 39 item 5); nil (no block): none,
// though a Seed's policy annotations still act. A pool that does not
// convert (config validation parses the same selectors, so only a bug
// gets here) fails every decision rather than be ignored.
func placementPolicies(c *config.Policies) *placement.Policies {
	if c == nil {
		return nil
	}
	p := &placement.Policies{
		SoftLimitPercent: c.SoftLimitPercent,
		KeptSeats:        c.KeptSeats.Seats,
		KeptSeatsPercent: c.KeptSeats.Percent,
		Pools:            make([]placement.Pool, len(c.Pools)),
	}
	for i, cp := range c.Pools {
		pool, err := placement.NewPool(cp.Name, placement.PoolMode(cp.Mode), cp.Projects, cp.ProjectSelector, cp.SeedSelector)
		if err != nil {
			return placement.BrokenPolicies(fmt.Errorf("policies.pools[%d]: %w", i, err))
		}
		p.Pools[i] = pool
	}
	if err := p.Validate(); err != nil {
		return placement.BrokenPolicies(err)
	}
	return p
}

// scoringProfile converts the scoring block; nil (no block) is Gardener's
// rule.
func scoringProfile(s *config.Scoring) *placement.Profile {
	if s == nil {
		return nil
	}
	p := &placement.Profile{Scorers: make([]placement.WeightedScorer, len(s.Scorers)), DefaultCapacity: s.DefaultCapacity}
	for i, ws := range s.Scorers {
		p.Scorers[i] = placement.WeightedScorer{Name: placement.ScorerName(ws.Name), Weight: ws.Weight}
	}
	return p
}

// reservationLimits are the configured limits on live reservations, for
// the Store and the cluster-wide reservations alike.
func reservationLimits(cfg *config.Config) cache.Limits {
	r := cfg.Reservations
	return cache.Limits{PerNamespace: r.MaxPerNamespace, PerUser: r.MaxPerUser, Total: r.MaxTotal}
}

// The retry controller reserves its binds in the capacity webhook's ledger
// (serveCluster wires it by a type assertion, so check it compiles).
var _ pending.ClusterReserver = (*seedreserve.Reserver)(nil)

// pendingConfig is the retry controller's configuration.
func pendingConfig(cfg *config.Config) pending.Config {
	return pending.Config{
		Mode:               pending.Mode(cfg.PendingShoots.BindMode),
		SchedulerName:      cfg.SchedulerName,
		BackoffBase:        cfg.PendingShoots.BackoffBase.Duration,
		BackoffMax:         cfg.PendingShoots.BackoffMax.Duration,
		ConflictBackoffMax: cfg.PendingShoots.ConflictBackoffMax.Duration,
		Workers:            cfg.PendingShoots.Workers,
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

// checkScorers: scoring.scorers name placement's scorers with weights it
// accepts (config checks that the list is not empty and has no duplicate).
// Every entry is checked, so all problems are reported at once.
// checkPolicies converts the policies block as every decision will: config's
// own validation has parsed each selector, so this only catches what
// placement refuses beyond it.
func checkPolicies(cfg *config.Config) []string {
	if err := placementPolicies(cfg.Policies).Validate(); err != nil {
		return []string{fmt.Sprintf("policies: %v", err)}
	}
	return nil
}

func checkScorers(cfg *config.Config) []string {
	if cfg.Scoring == nil {
		return nil
	}
	known := make([]string, len(placement.ScorerNames))
	for i, n := range placement.ScorerNames {
		known[i] = string(n)
	}
	var out []string
	for i, ws := range cfg.Scoring.Scorers {
		if !slices.Contains(known, ws.Name) {
			out = append(out, fmt.Sprintf("scoring.scorers[%d].name: unknown scorer %q (want one of %s)", i, ws.Name, strings.Join(known, ", ")))
		}
		if ws.Weight < 1 || ws.Weight > placement.MaxWeight {
			out = append(out, fmt.Sprintf("scoring.scorers[%d].weight: %d for %s is out of range (want 1 to %d)", i, ws.Weight, ws.Name, placement.MaxWeight))
		}
	}
	return out
}
