package placement

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

// This file holds the seed rules of Gardener's ShootValidator for a request
// that sets, moves or keeps a Shoot's seed: the binding webhook asks one of
// CheckSeedChange and CheckSeedKept, which build on CheckSeedForShoot.

// Chooser is who chose the seed a request gives a Shoot, which decides the
// rules the seed must pass.
type Chooser int

const (
	// ChosenByUser means a user set or moved spec.seedName; all of
	// Gardener's rules for a seed chosen by hand apply.
	ChosenByUser Chooser = iota
	// ChosenByPlacement means seedwarden's own placement (a verified
	// placement token): the rules Decide applied, which a Shoot changed
	// after placing must still meet. Gardener's rules beyond them would
	// refuse seeds Decide may choose: pinned zones of a Shoot with failure
	// tolerance zone, spec.seedSelector.providerTypes (Decide reads only
	// the selector's labels).
	ChosenByPlacement
)

// CheckSeedChange returns the rules the seed new.Spec.SeedName violates for
// a request that sets or moves it, one message each, or nil. old is the
// Shoot before an UPDATE, nil on CREATE. For ChosenByUser these are
// CheckSeedForShoot's and, as in Gardener:
//
//   - pinned control-plane zones that changed must be offered by the seed,
//     also for failure tolerance zone (which Decide ignores);
//   - a changed spec.seedSelector must select the seed
//     (CheckShootSelectorChange);
//   - moving the Shoot from another seed needs backup on both seeds, the
//     same internal domain, and the Shoot's default domain on the new seed.
func CheckSeedChange(snap *Snapshot, old, shoot *api.Shoot, by Chooser, mode NetworkMode) []string {
	name := ptr.Deref(shoot.Spec.SeedName, "")
	seed := snap.seedNamed(name)
	if seed == nil {
		return []string{fmt.Sprintf("seed %q not found", name)}
	}
	problems := CheckSeedForShoot(snap, seed, shoot, mode)
	if by == ChosenByPlacement {
		return problems
	}
	if failureToleranceZone(shoot) && controlPlaneZonesChanged(old, shoot) {
		// CheckSeedForShoot skips these Shoots as Decide does; Gardener
		// checks new zones.
		problems = append(problems, MissingControlPlaneZones(seed, controlPlaneZones(shoot))...)
	}
	if oldSel := seedSelectorOf(old); !apiequality.Semantic.DeepEqual(oldSel, shoot.Spec.SeedSelector) {
		problems = append(problems, CheckShootSelectorChange(seed, oldSel, shoot.Spec.SeedSelector)...)
	}
	if oldName := seedNameOf(old); oldName != "" {
		problems = append(problems, reschedulingViolations(snap, oldName, seed, shoot)...)
	}
	return problems
}

// CheckSeedKept judges an UPDATE that keeps the Shoot's seed. checked is
// false when there is nothing to check: no seed, a seed being set or moved
// (CheckSeedChange), or none of the Shoot's own seed constraints changed.
// Otherwise, as Gardener's ShootValidator requires, a changed
// spec.seedSelector must still select the seed and changed control-plane
// zones (or a changed region with zones set) must be offered by it.
func CheckSeedKept(snap *Snapshot, old, shoot *api.Shoot) (problems []string, checked bool) {
	name := ptr.Deref(shoot.Spec.SeedName, "")
	if old == nil || name == "" || name != seedNameOf(old) {
		return nil, false
	}
	selectorChanged := !apiequality.Semantic.DeepEqual(old.Spec.SeedSelector, shoot.Spec.SeedSelector)
	zonesChanged := controlPlaneZonesChanged(old, shoot)
	if !selectorChanged && !zonesChanged {
		return nil, false
	}
	seed := snap.seedNamed(name)
	if seed == nil {
		return []string{fmt.Sprintf("seed %q not found, so spec.seedSelector and spec.controlPlane.zones cannot be checked against it", name)}, true
	}
	if selectorChanged {
		problems = append(problems, CheckShootSelectorChange(seed, old.Spec.SeedSelector, shoot.Spec.SeedSelector)...)
	}
	if zonesChanged {
		problems = append(problems, MissingControlPlaneZones(seed, controlPlaneZones(shoot))...)
	}
	return problems, true
}

// controlPlaneZonesChanged is Gardener's trigger for checking
// spec.controlPlane.zones against the seed: zones are set and differ from the
// old ones (none on CREATE), or the region changed.
func controlPlaneZonesChanged(old, shoot *api.Shoot) bool {
	zones := controlPlaneZones(shoot)
	if len(zones) == 0 {
		return false
	}
	if old == nil {
		return true
	}
	return !slices.Equal(zones, controlPlaneZones(old)) || shoot.Spec.Region != old.Spec.Region
}

func controlPlaneZones(s *api.Shoot) []string {
	if s.Spec.ControlPlane == nil {
		return nil
	}
	return s.Spec.ControlPlane.Zones
}

func seedSelectorOf(s *api.Shoot) *api.SeedSelector {
	if s == nil {
		return nil
	}
	return s.Spec.SeedSelector
}

func seedNameOf(s *api.Shoot) string {
	if s == nil {
		return ""
	}
	return ptr.Deref(s.Spec.SeedName, "")
}

// seedNamed looks a seed up by name (Seeds is sorted by name), nil if absent.
func (s *Snapshot) seedNamed(name string) *Seed {
	i := sort.Search(len(s.Seeds), func(i int) bool { return s.Seeds[i].Name >= name })
	if i < len(s.Seeds) && s.Seeds[i].Name == name {
		return s.Seeds[i]
	}
	return nil
}

// reschedulingViolations: moving a Shoot's control plane to another seed
// restores it from a backup, so both seeds need one; the Shoot's internal
// DNS records must stay valid, so both need the same internal domain; and a
// Shoot domain under the old seed's default domain must be served by the new
// seed too.
func reschedulingViolations(snap *Snapshot, oldName string, to *Seed, shoot *api.Shoot) []string {
	from := snap.seedNamed(oldName)
	if from == nil {
		return []string{fmt.Sprintf("the current seed %q is not found, so moving the Shoot away from it cannot be checked", oldName)}
	}
	var problems []string
	for _, s := range []*Seed{from, to} {
		if s.Object.Spec.Backup == nil {
			problems = append(problems, fmt.Sprintf("rescheduling from seed %q to seed %q needs backup on both seeds, seed %q has no spec.backup", from.Name, to.Name, s.Name))
		}
	}
	if fd, td := internalDomain(from), internalDomain(to); fd != td {
		problems = append(problems, fmt.Sprintf("rescheduling needs the same spec.dns.internal.domain on both seeds: seed %q has %q, seed %q has %q", from.Name, fd, to.Name, td))
	}
	if p := defaultDomainViolation(from, to, shoot); p != "" {
		problems = append(problems, p)
	}
	return problems
}

// defaultDomainViolation: a Shoot domain under one of the old seed's default
// domains needs that default domain on the new seed.
func defaultDomainViolation(from, to *Seed, shoot *api.Shoot) string {
	if shoot.Spec.DNS == nil || shoot.Spec.DNS.Domain == nil {
		return ""
	}
	domain := *shoot.Spec.DNS.Domain
	for _, d := range from.defaultDomains {
		if !strings.HasSuffix(domain, "."+d) {
			continue
		}
		if slices.Contains(to.defaultDomains, d) {
			return ""
		}
		return fmt.Sprintf("spec.dns.domain %q is under the default domain %q of seed %q, which seed %q does not serve (its default domains: %s)",
			domain, d, from.Name, to.Name, quoteList(to.defaultDomains))
	}
	return ""
}

func internalDomain(s *Seed) string {
	if in := s.Object.Spec.DNS.Internal; in != nil {
		return in.Domain
	}
	return ""
}
