package placement

import (
	"strings"

	"k8s.io/utils/ptr"
)

// Narrowing: the strategy (step 11, strategy.go) keeps at best the seeds of
// one provider type and region (SameRegion), of the Shoot's provider type
// (testing Shoots), or of the regions at the least distance any region can
// have (MinimalDistance). Steps 7-10 keep or drop each seed by itself
// (except step 8 for a Shoot with a domain, which is not narrowed), and
// MinimalDistance keeps the nearest seeds left, so when some of those best
// seeds survive steps 1-10, step 11 keeps exactly the survivors among them:
// the fast path may apply steps 1-10 to them alone, and step 11 (the last
// of laterFilters) then keeps them all, so it is skipped unless the
// RegionDistance scorer needs its table. When none survive (or,
// under worker-pool zones, none is in the Prefer set C, which would make
// the plain filters fall back to another set), decide drops the narrowing
// and decides on every seed, so a failure is reported as the plain filters
// report it.

// narrowRule is the seeds step 11 can keep at best; off: any seed.
type narrowRule struct {
	on bool
	// byProvider: only seeds of provider type provider.
	byProvider bool
	provider   string
	provHash   uint64
	// n > 0: only seeds of one of the n regions.
	n            int
	regions      [maxHashed]string
	regionHashes [maxHashed]uint64
}

// narrowRule returns what the decision's strategy keeps at best.
func (d *decider) narrowRule() narrowRule {
	shoot := d.shoot
	switch {
	case shoot.Spec.DNS != nil && ptr.Deref(shoot.Spec.DNS.Domain, "") != "":
		// Step 8 asks whether any seed left offers a default domain the
		// Shoot's is under, which fewer seeds may answer differently.
		return narrowRule{}
	case testingShoot(shoot):
		return narrowRule{on: true, byProvider: true, provider: shoot.Spec.Provider.Type, provHash: strHash(shoot.Spec.Provider.Type)}
	case d.opts.Scoring.has(ScoreRegionDistance):
		return narrowRule{} // every region is ranked
	case d.opts.Strategy == SameRegion:
		return sameRegionAndProvider(shoot.Spec.Provider.Type, shoot.Spec.Region)
	}
	return d.nearestRegions()
}

// sameRegionAndProvider keeps the seeds of the provider type and region.
func sameRegionAndProvider(provider, region string) narrowRule {
	r := narrowRule{on: true, byProvider: true, provider: provider, provHash: strHash(provider)}
	r.addRegion(region)
	return r
}

// nearestRegions is MinimalDistance's best: with a region config's table,
// the regions at its least distance (the Shoot's own region counting as 0
// unless listed); without one, the Shoot's region and provider type, the
// only seeds at name distance 0.
func (d *decider) nearestRegions() narrowRule {
	shoot := d.shoot
	region := shoot.Spec.Region
	var table map[string]int
	if rc := d.regionConfig(); rc != nil {
		t, err := rc.distancesFrom(region)
		if err != nil {
			return narrowRule{} // step 11 fails whatever the seeds
		}
		table = t
	}
	if table == nil {
		if strings.Contains(region, ":") {
			// splitRegion marks the orientation with ':', so another
			// region could be at name distance 0 from this one.
			return narrowRule{}
		}
		return sameRegionAndProvider(shoot.Spec.Provider.Type, region)
	}
	// Entries past maxTableDistance are no candidates (strategy.go).
	least, found := 0, false
	_, listed := table[region]
	if !listed {
		found = true // the Shoot's own region, at 0
	}
	for _, v := range table {
		if v <= maxTableDistance && (!found || v < least) {
			least, found = v, true
		}
	}
	if !found {
		return narrowRule{} // step 11 falls back to name distance
	}
	r := narrowRule{on: true}
	if !listed && least == 0 {
		r.addRegion(region)
	}
	for name, v := range table {
		if v == least && !r.addRegion(name) {
			return narrowRule{} // too many to hash inline: not worth narrowing
		}
	}
	return r
}

// addRegion adds a region; false when the rule holds maxHashed already.
func (r *narrowRule) addRegion(region string) bool {
	if r.n == maxHashed {
		return false
	}
	r.regions[r.n], r.regionHashes[r.n] = region, strHash(region)
	r.n++
	return true
}

// keeps reports whether s is among the seeds the rule keeps.
func (r *narrowRule) keeps(s *Seed) bool {
	if r.byProvider && (s.providerHash != r.provHash || s.providerType != r.provider) {
		return false
	}
	if r.n == 0 {
		return true
	}
	for i, h := range r.regionHashes[:r.n] {
		if s.regionHash == h && s.region == r.regions[i] {
			return true
		}
	}
	return false
}
