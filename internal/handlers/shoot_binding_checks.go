package handlers

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/seedwarden/seedwarden/internal/admissionjson"
	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// This file holds the binding webhook's checks, in the order handle calls
// them: what a binding may change besides the seed (bindingSpecChange), the
// current seed while the Shoot's own seed constraints change
// (seedKeptViolations), and a seed being chosen (seedChoiceViolations).

// bindingSpecChange: a binding that moves the Shoot to another seed may
// change spec.seedName only (the control plane is restored from backup on
// the new seed; other changes would ride along unreviewed). Setting the
// first seed through a binding may change more, as in Gardener.
func bindingSpecChange(c *shootChange) string {
	if !c.binding || c.op != admissionv1.Update || c.oldSeed == "" || c.newSeed == "" || c.oldSeed == c.newSeed {
		return ""
	}
	changed, err := specFieldsChanged(c.oldRaw, c.raw)
	if err != nil {
		return fmt.Sprintf("cannot compare the old and new spec: %v", err)
	}
	if len(changed) == 0 {
		return ""
	}
	return fmt.Sprintf("a binding that moves the Shoot from seed %q to %q may change only spec.seedName, but it also changes %s",
		c.oldSeed, c.newSeed, strings.Join(changed, ", "))
}

// specFieldsChanged lists the top-level spec fields other than seedName that
// differ between two objects (a null field counts as absent).
func specFieldsChanged(oldRaw, newRaw []byte) ([]string, error) {
	oldSpec, err := admissionjson.DecodeSpecMembers(oldRaw)
	if err != nil {
		return nil, fmt.Errorf("old object: %w", err)
	}
	newSpec, err := admissionjson.DecodeSpecMembers(newRaw)
	if err != nil {
		return nil, err
	}
	var changed []string
	seen := sets.New("seedName")
	for _, spec := range []map[string]any{oldSpec, newSpec} {
		for k := range spec {
			if seen.Has(k) {
				continue
			}
			seen.Insert(k)
			if !reflect.DeepEqual(oldSpec[k], newSpec[k]) {
				changed = append(changed, "spec."+k)
			}
		}
	}
	sort.Strings(changed)
	return changed, nil
}

// seedKeptNeedsCheck: an UPDATE that keeps a seed and changes the Shoot's
// seedSelector or its control-plane zones (or region, with zones).
func seedKeptNeedsCheck(c *shootChange) bool {
	if c.old == nil || c.newSeed == "" || c.newSeed != c.oldSeed {
		return false
	}
	return !apiequality.Semantic.DeepEqual(c.old.Spec.SeedSelector, c.shoot.Spec.SeedSelector) || controlPlaneZonesChanged(c)
}

// seedKeptViolations: on an UPDATE that keeps the seed, a changed
// spec.seedSelector must still select it and changed control-plane zones (or
// a changed region with zones set) must be offered by it, as Gardener's
// ShootValidator requires.
func seedKeptViolations(snap *placement.Snapshot, c *shootChange) []string {
	if !seedKeptNeedsCheck(c) {
		return nil
	}
	oldSel, newSel := c.old.Spec.SeedSelector, c.shoot.Spec.SeedSelector
	selectorChanged := !apiequality.Semantic.DeepEqual(oldSel, newSel)
	zones := controlPlaneZones(c.shoot)
	zonesChanged := controlPlaneZonesChanged(c)
	seed := findSeed(snap, c.newSeed)
	if seed == nil {
		return []string{fmt.Sprintf("seed %q not found, so spec.seedSelector and spec.controlPlane.zones cannot be checked against it", c.newSeed)}
	}
	var problems []string
	if selectorChanged {
		problems = append(problems, placement.CheckShootSelectorChange(seed, oldSel, newSel)...)
	}
	if zonesChanged {
		problems = append(problems, placement.MissingControlPlaneZones(seed, zones)...)
	}
	return problems
}

// controlPlaneZonesChanged is Gardener's trigger for checking
// spec.controlPlane.zones against the seed: zones are set and differ from the
// old ones (none on CREATE), or the region changed.
func controlPlaneZonesChanged(c *shootChange) bool {
	zones := controlPlaneZones(c.shoot)
	if len(zones) == 0 {
		return false
	}
	if c.old == nil {
		return true
	}
	return !slices.Equal(zones, controlPlaneZones(c.old)) || c.shoot.Spec.Region != c.old.Spec.Region
}

func controlPlaneZones(s *api.Shoot) []string {
	if s.Spec.ControlPlane == nil {
		return nil
	}
	return s.Spec.ControlPlane.Zones
}

// seedChoiceViolations lists why the new seed cannot take the Shoot.
// ownPlacementViolations are the seed's rules a Shoot placed by the webhook
// must meet at validation: placement's own checks of a chosen seed.
func ownPlacementViolations(snap *placement.Snapshot, c *shootChange, mode placement.NetworkMode) []string {
	seed := findSeed(snap, c.newSeed)
	if seed == nil {
		return []string{fmt.Sprintf("seed %q not found", c.newSeed)}
	}
	return placement.CheckSeedForShoot(snap, seed, c.shoot, mode)
}

func seedChoiceViolations(snap *placement.Snapshot, c *shootChange, mode placement.NetworkMode) []string {
	seed := findSeed(snap, c.newSeed)
	if seed == nil {
		return []string{fmt.Sprintf("seed %q not found", c.newSeed)}
	}
	problems := placement.CheckSeedForShoot(snap, seed, c.shoot, mode)
	if zonalShoot(c.shoot) && controlPlaneZonesChanged(c) {
		// Placement's rule skips these Shoots; Gardener's checks new zones.
		problems = append(problems, placement.MissingControlPlaneZones(seed, controlPlaneZones(c.shoot))...)
	}
	if oldSel := oldSeedSelector(c); !apiequality.Semantic.DeepEqual(oldSel, c.shoot.Spec.SeedSelector) {
		problems = append(problems, placement.CheckShootSelectorChange(seed, oldSel, c.shoot.Spec.SeedSelector)...)
	}
	if c.oldSeed != "" {
		problems = append(problems, reschedulingViolations(snap, c.oldSeed, seed, c.shoot)...)
	}
	return problems
}

func zonalShoot(s *api.Shoot) bool {
	cp := s.Spec.ControlPlane
	return cp != nil && cp.HighAvailability != nil && cp.HighAvailability.FailureTolerance.Type == api.FailureToleranceZone
}

func oldSeedSelector(c *shootChange) *api.SeedSelector {
	if c.old == nil {
		return nil
	}
	return c.old.Spec.SeedSelector
}

// findSeed looks a seed up in the snapshot (Seeds is sorted by name).
func findSeed(snap *placement.Snapshot, name string) *placement.Seed {
	i := sort.Search(len(snap.Seeds), func(i int) bool { return snap.Seeds[i].Name >= name })
	if i < len(snap.Seeds) && snap.Seeds[i].Name == name {
		return snap.Seeds[i]
	}
	return nil
}

// reschedulingViolations: moving a Shoot's control plane to another seed
// restores it from a backup, so both seeds need one; the Shoot's internal
// DNS records must stay valid, so both need the same internal domain; and a
// Shoot domain under the old seed's default domain must be served by the new
// seed too.
func reschedulingViolations(snap *placement.Snapshot, oldName string, to *placement.Seed, shoot *api.Shoot) []string {
	from := findSeed(snap, oldName)
	if from == nil {
		return []string{fmt.Sprintf("the current seed %q is not found, so moving the Shoot away from it cannot be checked", oldName)}
	}
	var problems []string
	for _, s := range []*placement.Seed{from, to} {
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
func defaultDomainViolation(from, to *placement.Seed, shoot *api.Shoot) string {
	if shoot.Spec.DNS == nil || shoot.Spec.DNS.Domain == nil {
		return ""
	}
	domain := *shoot.Spec.DNS.Domain
	for _, d := range defaultDomains(from) {
		if !strings.HasSuffix(domain, "."+d) {
			continue
		}
		if slices.Contains(defaultDomains(to), d) {
			return ""
		}
		return fmt.Sprintf("spec.dns.domain %q is under the default domain %q of seed %q, which seed %q does not serve (its default domains: %s)",
			domain, d, from.Name, to.Name, quoteDomains(defaultDomains(to)))
	}
	return ""
}

func defaultDomains(s *placement.Seed) []string {
	var out []string
	for _, d := range s.Object.Spec.DNS.Defaults {
		out = append(out, d.Domain)
	}
	return out
}

func quoteDomains(ds []string) string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = fmt.Sprintf("%q", d)
	}
	return "[" + strings.Join(out, ", ") + "]"
}

func internalDomain(s *placement.Seed) string {
	if in := s.Object.Spec.DNS.Internal; in != nil {
		return in.Domain
	}
	return ""
}
