package placement

import (
	"fmt"
	"slices"

	"github.com/seedwarden/seedwarden/internal/api"
)

// filterAccessRestrictions is step 7, gardener-scheduler's
// filterSeedsForAccessRestrictions.
func (d *decider) filterAccessRestrictions(seeds []*Seed) ([]*Seed, Decision) {
	keep, why := supportsAccessRestrictions(d.shoot.Spec.AccessRestrictions)
	kept := d.filter(seeds, keep, why)
	if len(kept) == 0 {
		return nil, d.fail(StepAccessRestrictions, "", "none of the %d seeds supports the access restrictions configured in the shoot specification", len(seeds))
	}
	return kept, Decision{}
}

// supportsAccessRestrictions is Gardener's AccessRestrictionsAreSupported:
// every wanted name among the seed's, and, before that, no more entries
// wanted than the seed lists. Entries are counted as written, so a Shoot
// that repeats a restriction needs a seed listing as many entries.
func supportsAccessRestrictions(wanted []api.AccessRestrictionWithOptions) (func(*Seed) bool, func(*Seed) (ReasonCode, string)) {
	// The found flag, not the name, says one is missing: "" is a name
	// Gardener compares like any other.
	missing := func(s *Seed) (string, bool) {
		for _, w := range wanted {
			if !slices.Contains(s.access, w.Name) {
				return w.Name, true
			}
		}
		return "", false
	}
	return func(s *Seed) bool {
			_, miss := missing(s)
			return !tooManyAccessRestrictions(s, wanted) && !miss
		},
		func(s *Seed) (ReasonCode, string) {
			if m, miss := missing(s); miss {
				return AccessRestrictionUnsupported, fmt.Sprintf("seed does not support access restriction %q", m)
			}
			return AccessRestrictionsTooMany, fmt.Sprintf("shoot lists %d access restrictions, the seed only %d", len(wanted), len(s.access))
		}
}

func tooManyAccessRestrictions(s *Seed, wanted []api.AccessRestrictionWithOptions) bool {
	return len(wanted) > len(s.access)
}

// unsupportedAccessRestrictions lists, once each, the restrictions in wanted
// the seed does not support (for CheckSeedForShoot's message).
func unsupportedAccessRestrictions(seed *Seed, wanted []api.AccessRestrictionWithOptions) []string {
	var missing []string
	for _, w := range wanted {
		if !slices.Contains(seed.access, w.Name) && !slices.Contains(missing, w.Name) {
			missing = append(missing, w.Name)
		}
	}
	return missing
}
