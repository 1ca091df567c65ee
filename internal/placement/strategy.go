package placement

import (
	"math"
	"strings"

	"github.com/agnivade/levenshtein"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

// filterStrategy is step 11, gardener-scheduler's applyStrategy: testing
// Shoots keep their provider type, others go by SameRegion or MinimalDistance.
func (d *decider) filterStrategy(seeds []*Seed) ([]*Seed, Decision) {
	kept, err := d.applyStrategy(seeds)
	if err != nil {
		return nil, d.failErr(StepStrategy, RegionConfigInvalid, err)
	}
	if len(kept) == 0 {
		return nil, d.fail(StepStrategy, "", "no matching seed candidate found for Configuration (Cloud Profile '%s', Region '%s', SeedDeterminationStrategy '%s')", d.profile.Name, d.shoot.Spec.Region, d.opts.Strategy)
	}
	return kept, Decision{}
}

func (d *decider) applyStrategy(seeds []*Seed) ([]*Seed, error) {
	shoot := d.shoot
	if d.opts.Scoring.has(ScoreRegionDistance) {
		// The region strategy becomes the RegionDistance preference
		// (scorers.go), which reads the same table: a broken one fails
		// here as it fails MinimalDistance.
		if err := d.resolveDistances(); err != nil {
			return nil, err
		}
		if !testingShoot(shoot) {
			return seeds, nil
		}
	}
	switch {
	case testingShoot(shoot):
		return d.filter(seeds, func(s *Seed) bool { return s.providerType == shoot.Spec.Provider.Type },
			func(*Seed) (ReasonCode, string) {
				return TestingProviderMismatch, "testing shoots stay on seeds of their provider type"
			}), nil
	case d.opts.Strategy == SameRegion:
		return d.filter(seeds, func(s *Seed) bool {
			return s.providerType == shoot.Spec.Provider.Type && s.region == shoot.Spec.Region
		}, func(*Seed) (ReasonCode, string) {
			return RegionMismatch, "SameRegion: provider type or region differs from the shoot's"
		}), nil
	default:
		return d.minimalDistance(seeds)
	}
}

// regionConfig returns the first region config (by name) naming the profile.
func (d *decider) regionConfig() *RegionConfig {
	for _, rc := range d.snap.RegionConfigs {
		if rc.appliesTo(d.profile.Name) {
			return rc
		}
	}
	return nil
}

// minimalDistance keeps the seeds nearest to the Shoot's region by the region
// config's table, or by name distance when the table lists none of them.
func (d *decider) minimalDistance(seeds []*Seed) ([]*Seed, error) {
	region := d.shoot.Spec.Region
	if rc := d.regionConfig(); rc != nil {
		table, err := rc.distancesFrom(region)
		if err != nil {
			return nil, err
		}
		if table != nil {
			dist := func(s *Seed) (int, bool) {
				v, ok := tableDistance(table, region, s)
				return v, ok && v <= maxTableDistance
			}
			if kept := d.keepMinimal(seeds, dist, RegionFartherByConfig, "farther than the nearest seed by the region config"); len(kept) > 0 {
				return kept, nil
			}
		}
	}
	return d.keepMinimal(seeds, func(s *Seed) (int, bool) {
		v := d.nameDistance(s)
		return v, v <= maxNameDistance
	}, RegionFartherByName, "farther than the nearest seed by region name distance"), nil
}

// Gardener's searches for the least distance start from these values
// (math.MaxInt32 in regionConfigMinimalDistance, 1000 in
// levenshteinMinimalDistance) and keep a seed only at a distance no greater:
// a seed farther away is never a candidate. With the table that means
// falling back to name distance; by name, no seed at all (long region
// names are 500 edits apart soon enough).
const (
	maxTableDistance = math.MaxInt32
	maxNameDistance  = 1000
)

// tableDistance is a seed's distance from the Shoot's region by the region
// config's table for that region; false when the table does not list it.
func tableDistance(table map[string]int, region string, s *Seed) (int, bool) {
	v, ok := table[s.region]
	if !ok && s.region == region {
		return 0, true // a region is nearest to itself unless configured otherwise
	}
	return v, ok
}

// nameDistance is the fallback without a table: region name distance, two
// more for a seed of another provider type than the Shoot's.
func (d *decider) nameDistance(s *Seed) int {
	dist := RegionDistance(s.region, d.shoot.Spec.Region)
	if s.providerType != d.shoot.Spec.Provider.Type {
		dist += 2
	}
	return dist
}

// resolveDistances looks up, for the RegionDistance scorer, the table
// MinimalDistance would read (nil: none applies).
func (d *decider) resolveDistances() error {
	rc := d.regionConfig()
	if rc == nil {
		return nil
	}
	table, err := rc.distancesFrom(d.shoot.Spec.Region)
	d.distTable = table
	return err
}

func testingShoot(shoot *api.Shoot) bool {
	return ptr.Deref(shoot.Spec.Purpose, "") == api.PurposeTesting
}

// keepMinimal keeps the seeds with the smallest distance; seeds without a
// distance drop out.
func (d *decider) keepMinimal(seeds []*Seed, dist func(*Seed) (int, bool), code ReasonCode, reason string) []*Seed {
	best := math.MaxInt
	for _, s := range seeds {
		if v, ok := dist(s); ok && v < best {
			best = v
		}
	}
	return d.filter(seeds, func(s *Seed) bool {
		v, ok := dist(s)
		return ok && v == best
	}, func(*Seed) (ReasonCode, string) { return code, reason })
}

var orientations = []string{"north", "south", "east", "west", "central"}

// splitRegion splits a region at the first orientation found (checked in the
// order north, south, east, west, central): "southeastasia" -> (":eastasia",
// "south"); "eu-west-1" -> ("eu-:-1", "west").
func splitRegion(region string) (base, orientation string) {
	for _, o := range orientations {
		if i := strings.Index(region, o); i >= 0 {
			return region[:i] + ":" + region[i+len(o):], o
		}
	}
	return region, ""
}

// RegionDistance is the reference's name distance between two regions.
func RegionDistance(a, b string) int {
	baseA, orA := splitRegion(a)
	baseB, orB := splitRegion(b)
	d := levenshtein.ComputeDistance(baseA, baseB)
	switch {
	case orA == orB:
		return 2 * d
	case orA == "" || orB == "":
		return 2*d + 1
	default:
		return 2*d + 2
	}
}
