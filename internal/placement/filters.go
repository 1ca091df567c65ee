package placement

// The specification: gardener-scheduler's seed filters in the order it
// applies them (docs/placement.md, "How a decision is made"), one file filter_*.go
// each, as kube-scheduler keeps one plugin per file. A filter returns the
// seeds it keeps or, when it keeps none, the unschedulable Decision naming
// its step. The fast path (fast.go) is held to this list.
type seedFilter func(d *decider, seeds []*Seed) ([]*Seed, Decision)

// perSeedFilters are steps 1-6: each keeps a seed by the seed alone (zone
// selection looks at the others only to fall back), so the fast path can
// apply them all in one pass instead. seedwarden's Required seed pools (4b;
// Gardener has none: without them it keeps every seed) come before the
// first step that looks at the other seeds (the zone fallback; step 8 asks
// whether any seed left has the Shoot's domain): a Shoot bound by them is
// decided as Gardener would decide it in a garden of the seeds they allow.
var perSeedFilters = [...]seedFilter{
	(*decider).filterUsable,               // 1: filter_usable.go
	(*decider).filterCloudProfileSelector, // 2: filter_selectors.go
	(*decider).filterShootSelector,        // 3: filter_selectors.go
	(*decider).filterProvider,             // 4: filter_provider.go
	(*decider).filterPools,                // 4b: policies_step.go (Required seed pools)
	(*decider).filterZones,                // 5 (failure tolerance) or 6: filter_zones.go
}

// laterFilters are steps 7-11, the same on both paths.
var laterFilters = [...]seedFilter{
	(*decider).filterAccessRestrictions, // 7: filter_access.go
	(*decider).filterDomain,             // 8: filter_domain.go
	(*decider).filterEmergencyStop,      // 9: filter_emergency.go
	(*decider).filterCandidates,         // 10: filter_candidates.go (networks, taints, capacity)
	(*decider).filterStrategy,           // 11: strategy.go
}

// apply runs filters in order, stopping at the first that leaves no seed.
func (d *decider) apply(filters []seedFilter, seeds []*Seed) ([]*Seed, Decision) {
	var failed Decision
	for _, f := range filters {
		if seeds, failed = f(d, seeds); len(seeds) == 0 {
			return nil, failed
		}
	}
	return seeds, Decision{}
}
