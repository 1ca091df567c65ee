package placement

import (
	"fmt"
	"slices"
)

// filterProvider is step 4, gardener-scheduler's filterSeedsMatchingProviders.
func (d *decider) filterProvider(seeds []*Seed) ([]*Seed, Decision) {
	shootType := d.shoot.Spec.Provider.Type
	keep, why := providerMatches(shootType, d.profile.ProviderTypes())
	kept := d.filter(seeds, keep, why)
	if len(kept) == 0 {
		return nil, d.fail(StepProvider, "", "none out of the %d seeds has a matching provider for %q", len(seeds), shootType)
	}
	return kept, Decision{}
}

// providerMatches: without providerTypes in the CloudProfile's seedSelector the
// seed's provider must equal the Shoot's; otherwise it must be listed ("*"
// lists all). The Shoot's own seedSelector.providerTypes plays no part, as in
// the reference.
func providerMatches(shootType string, enabled []string) (func(*Seed) bool, func(*Seed) (ReasonCode, string)) {
	wildcard := slices.Contains(enabled, "*")
	keep := func(s *Seed) bool {
		if len(enabled) == 0 {
			return s.providerType == shootType
		}
		return wildcard || slices.Contains(enabled, s.providerType)
	}
	why := func(s *Seed) (ReasonCode, string) {
		if len(enabled) == 0 {
			return ProviderMismatch, fmt.Sprintf("provider %q differs from the shoot's %q", s.providerType, shootType)
		}
		return ProviderNotEnabled, fmt.Sprintf("provider %q is not among the cloud profile's providerTypes", s.providerType)
	}
	return keep, why
}
