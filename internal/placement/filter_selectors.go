package placement

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/seedwarden/seedwarden/internal/api"
)

// filterCloudProfileSelector is step 2, gardener-scheduler's
// filterSeedsMatchingLabelSelector with the CloudProfile's seedSelector.
func (d *decider) filterCloudProfileSelector(seeds []*Seed) ([]*Seed, Decision) {
	profile := d.profile
	if profile.SeedSelector == nil {
		return seeds, Decision{}
	}
	if profile.selectorErr != nil {
		return nil, d.fail(StepCloudProfileSelector, CloudProfileSelectorInvalid, "cloudProfile %q: spec.seedSelector: %v", profile.Name, profile.selectorErr)
	}
	kept := seeds
	if !profile.selector.Empty() { // a selector with only providerTypes matches every seed
		keep, why := matchesSelector(profile.selector, "CloudProfile", CloudProfileSelectorMismatch)
		kept = d.filter(seeds, keep, why)
	}
	if len(kept) == 0 {
		return nil, d.fail(StepCloudProfileSelector, "", "none out of the %d seeds has the matching labels required by seed selector of 'CloudProfile' (selector: '%s')", len(seeds), profile.selector)
	}
	return kept, Decision{}
}

// filterShootSelector is step 3, gardener-scheduler's
// filterSeedsMatchingLabelSelector with the Shoot's spec.seedSelector.
func (d *decider) filterShootSelector(seeds []*Seed) ([]*Seed, Decision) {
	sel := d.shoot.Spec.SeedSelector
	if sel == nil {
		return seeds, Decision{}
	}
	selector, err := shootSelector(sel)
	if err != nil {
		return nil, d.fail(StepShootSelector, ShootSelectorInvalid, "%v", err)
	}
	kept := seeds
	if !selector.Empty() {
		keep, why := matchesSelector(selector, "Shoot", ShootSelectorMismatch)
		kept = d.filter(seeds, keep, why)
	}
	if len(kept) == 0 {
		return nil, d.fail(StepShootSelector, "", "none out of the %d seeds has the matching labels required by seed selector of 'Shoot' (selector: '%s')", len(seeds), selector)
	}
	return kept, Decision{}
}

func matchesSelector(sel labels.Selector, kind string, code ReasonCode) (func(*Seed) bool, func(*Seed) (ReasonCode, string)) {
	return func(s *Seed) bool { return sel.Matches(s.labels) },
		func(*Seed) (ReasonCode, string) { return code, "labels do not match the " + kind + "'s seed selector" }
}

func shootSelector(sel *api.SeedSelector) (labels.Selector, error) {
	s, err := metav1.LabelSelectorAsSelector(&sel.LabelSelector)
	if err != nil {
		return nil, fmt.Errorf("spec.seedSelector: %v", err)
	}
	return s, nil
}
