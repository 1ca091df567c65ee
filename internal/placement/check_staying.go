package placement

import (
	"fmt"

	"github.com/seedwarden/seedwarden/internal/api"
)

// CheckStaying returns the rules a Shoot bound to the seed seedName breaks
// today, with a code each, or nil: what an operator changed since the Shoot
// was placed (a taint, labels, a CloudProfile's seedSelector, access
// restrictions, zones, a deletion, allocatable) that the binding guard would
// now refuse. The audit (internal/audit) asks it for every bound Shoot.
//
// These are CheckSeedForShoot's rules but the networks': neither a seed's
// nor a Shoot's networks change once set, so an overlap cannot appear
// later. Added, because they concern a Shoot that stays:
//
//   - the seed is gone (SeedNotFound);
//   - the Shoot's own spec.seedSelector no longer selects the seed, as
//     Gardener requires of a Shoot with a seed (CheckShootSelectorChange);
//   - pinned spec.controlPlane.zones the seed lacks, also with failure
//     tolerance "zone" (which Decide and CheckSeedForShoot skip: Gardener
//     checks them when they change, and a Shoot pinned to a zone its seed
//     dropped is broken whatever its tolerance);
//   - the seed holds more than status.allocatable.shoots (SeedFull): a
//     property of the seed that each of its Shoots shares.
func CheckStaying(snap *Snapshot, seedName string, shoot *api.Shoot) []Violation {
	seed := snap.seedNamed(seedName)
	if seed == nil {
		return []Violation{{SeedNotFound, fmt.Sprintf("seed %q not found", seedName)}}
	}
	v := seedRules(snap, seed, shoot)
	if sel := shoot.Spec.SeedSelector; sel != nil {
		v = append(v, shootSelectorViolations(seed, sel)...)
	}
	if failureToleranceZone(shoot) {
		v = append(v, missingZones(seed, controlPlaneZones(shoot))...)
	}
	if alloc, ok := seed.Allocatable(); ok {
		if used := snap.usage(seed); used > alloc {
			v = append(v, Violation{SeedFull, fmt.Sprintf("seed %q holds %d Shoots, more than its status.allocatable.shoots %d", seed.Name, used, alloc)})
		}
	}
	return v
}
