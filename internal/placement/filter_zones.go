package placement

import (
	"fmt"
	"slices"

	"github.com/seedwarden/seedwarden/internal/api"
)

// filterZones is step 5 for a Shoot with failure tolerance "zone"
// (gardener-scheduler's filterSeedsForZonalShootControlPlanes), else step 6,
// zone selection.
func (d *decider) filterZones(seeds []*Seed) ([]*Seed, Decision) {
	if failureToleranceZone(d.shoot) {
		kept := d.filterBy(seeds, hasThreeZones)
		if len(kept) == 0 {
			return nil, d.fail(StepFailureTolerance, "", "none of the %d seeds has at least 3 zones for hosting a shoot control plane with failure tolerance type 'zone'", len(seeds))
		}
		return kept, Decision{}
	}
	kept := d.selectZones(seeds)
	if len(kept) == 0 {
		return nil, d.fail(StepZones, "", "none of the %d seeds offers the zones the shoot asks for", len(seeds))
	}
	return kept, Decision{}
}

func failureToleranceZone(shoot *api.Shoot) bool {
	cp := shoot.Spec.ControlPlane
	return cp != nil && cp.HighAvailability != nil && cp.HighAvailability.FailureTolerance.Type == api.FailureToleranceZone
}

func hasThreeZones(s *Seed) (ReasonCode, string) {
	if len(s.zones) >= 3 {
		return "", ""
	}
	return TooFewZones, "seed has fewer than 3 zones, failure tolerance 'zone' needs 3"
}

// selectZones applies zone selection. Control-plane zones, when set, must all
// be offered. Otherwise worker-pool zones steer: Enforce seeds sharing none of
// them are dropped; then Prefer seeds sharing none are dropped too, unless that
// would leave nothing. (The recorded reference drops such Prefer seeds even
// when no other Prefer seed shares a zone; see case-1-00466.)
func (d *decider) selectZones(seeds []*Seed) []*Seed {
	if want := d.shoot.Spec.ControlPlane; want != nil && len(want.Zones) > 0 {
		return d.filterBy(seeds, func(s *Seed) (ReasonCode, string) {
			for _, z := range want.Zones {
				if !slices.Contains(s.zones, z) {
					if !d.explain {
						return ControlPlaneZoneMissing, "" // formatted only when explaining
					}
					return ControlPlaneZoneMissing, fmt.Sprintf("seed does not offer control-plane zone %q", z)
				}
			}
			return "", ""
		})
	}
	var workerZones []string
	for _, w := range d.shoot.Spec.Provider.Workers {
		workerZones = append(workerZones, w.Zones...)
	}
	if len(workerZones) == 0 {
		return seeds
	}
	shares := func(s *Seed) bool {
		for _, z := range s.zones {
			if slices.Contains(workerZones, z) {
				return true
			}
		}
		return false
	}
	seeds = d.filterBy(seeds, func(s *Seed) (ReasonCode, string) {
		if s.zoneMode == api.ZoneSelectionEnforce && !shares(s) {
			return ZoneEnforceMismatch, "zone selection Enforce: seed shares no zone with the worker pools"
		}
		return "", ""
	})
	return d.preferZones(seeds, shares)
}

// preferZones drops the Prefer seeds that share no worker zone, unless that
// leaves nothing; then it keeps seeds, and records nothing.
func (d *decider) preferZones(seeds []*Seed, shares func(*Seed) bool) []*Seed {
	const preferReason = "zone selection Prefer: seed shares no zone with the worker pools"
	dropPrefer := func(s *Seed) (ReasonCode, string) {
		if s.zoneMode == api.ZoneSelectionPrefer && !shares(s) {
			return ZonePreferMismatch, preferReason
		}
		return "", ""
	}
	// Record nothing until we know the second pass sticks.
	explain := d.explain
	d.explain = false
	second := d.filterBy(seeds, dropPrefer)
	d.explain = explain
	if len(second) == 0 {
		return seeds
	}
	if explain && len(second) < len(seeds) {
		for _, s := range seeds {
			if code, _ := dropPrefer(s); code != "" {
				d.drop(s, code, preferReason)
			}
		}
	}
	return second
}
