package placement

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

// resolveCloudProfile finds the Shoot's profile: spec.cloudProfile (kind
// CloudProfile by default, or a NamespacedCloudProfile in the Shoot's
// namespace) or the deprecated spec.cloudProfileName.
func resolveCloudProfile(snap *Snapshot, shoot *api.Shoot) (*CloudProfile, error) {
	kind, name := api.KindCloudProfile, ptr.Deref(shoot.Spec.CloudProfileName, "")
	if ref := shoot.Spec.CloudProfile; ref != nil {
		name = ref.Name
		if ref.Kind != "" {
			kind = ref.Kind
		}
	}
	if name == "" {
		return nil, fmt.Errorf("spec.cloudProfile.name: the shoot names no cloud profile")
	}
	switch kind {
	case api.KindCloudProfile:
		if p, ok := snap.CloudProfiles[name]; ok {
			return p, nil
		}
		return nil, fmt.Errorf("spec.cloudProfile: CloudProfile %q not found", name)
	case api.KindNamespacedCloudProfile:
		if p, ok := snap.NamespacedCloudProfiles[shoot.Namespace+"/"+name]; ok {
			return p, nil
		}
		return nil, fmt.Errorf("spec.cloudProfile: NamespacedCloudProfile %q not found in namespace %q", name, shoot.Namespace)
	default:
		return nil, fmt.Errorf("spec.cloudProfile.kind: unsupported value %q (want %s or %s)", kind, api.KindCloudProfile, api.KindNamespacedCloudProfile)
	}
}

func isUsable(s *Seed) bool { return !s.deleting && s.visible && s.ready }

// usable: not being deleted, visible to the scheduler and ready, like the
// reference's usable seeds: a seed that is going away takes no new Shoots.
func usable(s *Seed) string {
	switch {
	case s.deleting:
		return reasonDeleting
	case !s.visible:
		return "seed is not visible for scheduling"
	case !s.ready:
		return "seed is not ready (lastOperation, GardenletReady or BackupBucketsReady)"
	}
	return ""
}

// reasonDeleting explains why a seed with a deletionTimestamp is dropped (and
// why a user may not bind to it, see CheckSeedForShoot).
const reasonDeleting = "seed is being deleted (metadata.deletionTimestamp is set)"

func matchesSelector(sel labels.Selector, kind string) (func(*Seed) bool, func(*Seed) string) {
	return func(s *Seed) bool { return sel.Matches(s.labels) },
		func(*Seed) string { return "labels do not match the " + kind + "'s seed selector" }
}

func shootSelector(sel *api.SeedSelector) (labels.Selector, error) {
	s, err := metav1.LabelSelectorAsSelector(&sel.LabelSelector)
	if err != nil {
		return nil, fmt.Errorf("spec.seedSelector: %v", err)
	}
	return s, nil
}

// providerMatches: without providerTypes in the CloudProfile's seedSelector the
// seed's provider must equal the Shoot's; otherwise it must be listed ("*"
// lists all). The Shoot's own seedSelector.providerTypes plays no part, as in
// the reference.
func providerMatches(shootType string, enabled []string) (func(*Seed) bool, func(*Seed) string) {
	wildcard := slices.Contains(enabled, "*")
	keep := func(s *Seed) bool {
		if len(enabled) == 0 {
			return s.providerType == shootType
		}
		return wildcard || slices.Contains(enabled, s.providerType)
	}
	why := func(s *Seed) string {
		if len(enabled) == 0 {
			return fmt.Sprintf("provider %q differs from the shoot's %q", s.providerType, shootType)
		}
		return fmt.Sprintf("provider %q is not among the cloud profile's providerTypes", s.providerType)
	}
	return keep, why
}

func failureToleranceZone(shoot *api.Shoot) bool {
	cp := shoot.Spec.ControlPlane
	return cp != nil && cp.HighAvailability != nil && cp.HighAvailability.FailureTolerance.Type == api.FailureToleranceZone
}

func hasThreeZones(s *Seed) string {
	if len(s.zones) >= 3 {
		return ""
	}
	return "seed has fewer than 3 zones, failure tolerance 'zone' needs 3"
}

// selectZones applies zone selection. Control-plane zones, when set, must all
// be offered. Otherwise worker-pool zones steer: Enforce seeds sharing none of
// them are dropped; then Prefer seeds sharing none are dropped too, unless that
// would leave nothing. (The recorded reference drops such Prefer seeds even
// when no other Prefer seed shares a zone; see case-1-00466.)
func (d *decider) selectZones(seeds []*Seed) []*Seed {
	if want := d.shoot.Spec.ControlPlane; want != nil && len(want.Zones) > 0 {
		return d.filterBy(seeds, (func(s *Seed) string {
			for _, z := range want.Zones {
				if !slices.Contains(s.zones, z) {
					return fmt.Sprintf("seed does not offer control-plane zone %q", z)
				}
			}
			return ""
		}))
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
	seeds = d.filterBy(seeds, (func(s *Seed) string {
		if s.zoneMode == api.ZoneSelectionEnforce && !shares(s) {
			return "zone selection Enforce: seed shares no zone with the worker pools"
		}
		return ""
	}))
	const preferReason = "zone selection Prefer: seed shares no zone with the worker pools"
	dropPrefer := func(s *Seed) string {
		if s.zoneMode == api.ZoneSelectionPrefer && !shares(s) {
			return preferReason
		}
		return ""
	}
	// Record nothing until we know the second pass sticks.
	explain := d.explain
	d.explain = false
	second := d.filterBy(seeds, (dropPrefer))
	d.explain = explain
	if len(second) == 0 {
		return seeds
	}
	if explain && len(second) < len(seeds) {
		for _, s := range seeds {
			if dropPrefer(s) != "" {
				d.drop(s, preferReason)
			}
		}
	}
	return second
}

func supportsAccessRestrictions(wanted []api.AccessRestrictionWithOptions) (func(*Seed) bool, func(*Seed) string) {
	missing := func(s *Seed) string {
		for _, w := range wanted {
			if !slices.Contains(s.access, w.Name) {
				return w.Name
			}
		}
		return ""
	}
	return func(s *Seed) bool { return missing(s) == "" },
		func(s *Seed) string { return fmt.Sprintf("seed does not support access restriction %q", missing(s)) }
}

// matchDomain: a shoot domain under some seed's default domain d is a
// Gardener-managed domain and must be exactly <shoot>.<project>.<d>; only seeds
// with such a d qualify. A custom domain leaves every seed.
func (d *decider) matchDomain(seeds []*Seed) ([]*Seed, error) {
	dns := d.shoot.Spec.DNS
	if dns == nil || dns.Domain == nil || *dns.Domain == "" {
		return seeds, nil
	}
	domain := *dns.Domain
	managed := false
	for _, s := range seeds {
		for _, def := range s.defaultDomains {
			if strings.HasSuffix(domain, "."+def) {
				managed = true
			}
		}
	}
	if !managed {
		return seeds, nil
	}
	project, ok := d.snap.Projects[d.shoot.Namespace]
	if !ok {
		return nil, fmt.Errorf("spec.dns.domain %q is under a seed default domain, but no Project owns namespace %q", domain, d.shoot.Namespace)
	}
	prefix := d.shoot.Name + "." + project.Name + "."
	return d.filterBy(seeds, (func(s *Seed) string {
		for _, def := range s.defaultDomains {
			if domain == prefix+def {
				return ""
			}
		}
		return "no default domain of the seed gives the shoot's domain"
	})), nil
}

func notEmergencyStopped(s *Seed) string {
	if s.emergencyStop {
		return "reconciliations stopped by emergency annotation"
	}
	return ""
}

// taintsTolerated mirrors Gardener's TaintsAreTolerated, including its quirks:
// more taints than tolerations fails outright, and for a repeated toleration
// key the last value wins.
func taintsTolerated(taints []api.SeedTaint, tolerations []api.Toleration) bool {
	if len(taints) == 0 {
		return true
	}
	if len(taints) > len(tolerations) {
		return false
	}
	for _, t := range taints {
		found := false
		value := ""
		for _, tol := range tolerations {
			if tol.Key == t.Key {
				found = true
				value = ptr.Deref(tol.Value, "")
			}
		}
		if !found {
			return false
		}
		if t.Value != nil && *t.Value != value {
			return false
		}
	}
	return true
}
