package placement

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/seedwarden/seedwarden/internal/api"
)

// This file holds placement's per-seed rules for the validating webhooks,
// which check a seed a user chose (spec.seedName on create, a binding)
// against the same rules Decide applies, with messages naming fields.

// CheckSeedForShoot returns the rules a seed chosen for the Shoot violates,
// one message per rule naming the field and the values involved, or nil:
//
//   - the seed is being deleted;
//   - its taints are not tolerated (spec.tolerations);
//   - it does not support the Shoot's access restrictions (nor as many
//     entries as the Shoot lists: Gardener counts repeated ones);
//   - it does not match the CloudProfile's seedSelector: labels (step 2 of
//     Decide) and, only when the profile lists providerTypes, provider ("*"
//     for all), as Gardener's admission checks a chosen seed (Decide, step 4,
//     also wants the Shoot's own provider type without providerTypes);
//   - it has fewer than 3 zones for failure tolerance "zone" (step 5);
//   - it lacks a zone of spec.controlPlane.zones (step 6, which like
//     gardener-scheduler skips Shoots with failure tolerance "zone");
//   - the Shoot's networks intersect the seed's or a reserved range (step
//     10, by mode).
//
// A CloudProfile that cannot be resolved is reported as a violation too: the
// selector cannot be checked without it.
//
// A deleting seed is a violation here as it is unusable in Decide (see
// usable): a seed that is going away takes no new Shoots, whoever picks it.
func CheckSeedForShoot(snap *Snapshot, seed *Seed, shoot *api.Shoot, mode NetworkMode) []string {
	v := Messages(seedRules(snap, seed, shoot))
	if n := newShootNetworks(shoot); n != nil {
		if c := n.conflict(seed, mode); c.found() {
			v = append(v, fmt.Sprintf("spec.networking: on seed %q: %s", seed.Name, c))
		}
	}
	return v
}

// Violation is one rule a seed breaks for a Shoot: its code, for programs,
// and its message, for people.
type Violation struct {
	Code    ReasonCode
	Message string
}

// Messages returns the violations' messages, in order; nil for none.
func Messages(vs []Violation) []string {
	if len(vs) == 0 {
		return nil
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Message
	}
	return out
}

// cloudProfileCode is the code of resolveCloudProfile's error: its own,
// else CloudProfileNotFound (the only uncoded failure).
func cloudProfileCode(err error) ReasonCode {
	if ce, ok := errors.AsType[*codedError](err); ok {
		return ce.code
	}
	return CloudProfileNotFound
}

// seedRules are CheckSeedForShoot's rules but the networks' (which cannot
// change once a Shoot is on its seed: CheckStaying shares the rest).
func seedRules(snap *Snapshot, seed *Seed, shoot *api.Shoot) []Violation {
	var v []Violation
	if seed.deleting {
		v = append(v, Violation{SeedDeleting, fmt.Sprintf("seed %q is being deleted (metadata.deletionTimestamp is set)", seed.Name)})
	}
	if !taintsTolerated(seed.taints, shoot.Spec.Tolerations) {
		v = append(v, Violation{TaintNotTolerated, fmt.Sprintf("spec.tolerations %s do not tolerate the taints %s of seed %q",
			formatTolerations(shoot.Spec.Tolerations), formatTaints(seed.taints), seed.Name)})
	}
	if missing := unsupportedAccessRestrictions(seed, shoot.Spec.AccessRestrictions); len(missing) > 0 {
		v = append(v, Violation{AccessRestrictionUnsupported, fmt.Sprintf("spec.accessRestrictions: seed %q does not support %s (it supports %s)",
			seed.Name, quoteList(missing), quoteList(seed.access))})
	} else if tooManyAccessRestrictions(seed, shoot.Spec.AccessRestrictions) {
		v = append(v, Violation{AccessRestrictionsTooMany, fmt.Sprintf("spec.accessRestrictions: %d entries, more than the %d of seed %q (%s): Gardener counts repeated entries",
			len(shoot.Spec.AccessRestrictions), len(seed.access), seed.Name, quoteList(seed.access))})
	}
	if profile, err := resolveCloudProfile(snap, shoot); err != nil {
		v = append(v, Violation{cloudProfileCode(err), err.Error()})
	} else {
		v = append(v, profileViolations(profile, seed, shoot)...)
	}
	if failureToleranceZone(shoot) && len(seed.zones) < 3 {
		v = append(v, Violation{TooFewZones, fmt.Sprintf("spec.controlPlane.highAvailability.failureTolerance.type %q needs a seed with at least 3 zones, seed %q has %d %s",
			api.FailureToleranceZone, seed.Name, len(seed.zones), quoteList(seed.zones))})
	}
	if cp := shoot.Spec.ControlPlane; cp != nil && !failureToleranceZone(shoot) {
		v = append(v, missingZones(seed, cp.Zones)...)
	}
	return v
}

// MissingControlPlaneZones reports each of zones (spec.controlPlane.zones)
// the seed does not offer.
func MissingControlPlaneZones(seed *Seed, zones []string) []string {
	return Messages(missingZones(seed, zones))
}

func missingZones(seed *Seed, zones []string) []Violation {
	var v []Violation
	for i, z := range zones {
		if !slices.Contains(seed.zones, z) {
			v = append(v, Violation{ControlPlaneZoneMissing, fmt.Sprintf("spec.controlPlane.zones[%d]: zone %q is not available in seed %q (it has %s)", i, z, seed.Name, quoteList(seed.zones))})
		}
	}
	return v
}

// CheckShootSelectorChange is Gardener's rule for a Shoot's own
// spec.seedSelector changing while it has a seed (set on CREATE counts as a
// change): it may not be removed, and the new one must still select the
// seed, by labels and, when it lists providerTypes, by provider type (no
// wildcard here, unlike the CloudProfile's).
func CheckShootSelectorChange(seed *Seed, old, sel *api.SeedSelector) []string {
	if sel == nil {
		if old == nil {
			return nil
		}
		return []string{fmt.Sprintf("spec.seedSelector: cannot be removed once set while the Shoot has seed %q", seed.Name)}
	}
	return Messages(shootSelectorViolations(seed, sel))
}

// shootSelectorViolations: the Shoot's own spec.seedSelector (not nil) must
// select its seed, by labels and, when it lists providerTypes, by provider
// type (no wildcard here, unlike the CloudProfile's).
func shootSelectorViolations(seed *Seed, sel *api.SeedSelector) []Violation {
	var v []Violation
	switch selector, err := shootSelector(sel); {
	case err != nil:
		v = append(v, Violation{ShootSelectorInvalid, err.Error()})
	case !selector.Matches(seed.labels):
		v = append(v, Violation{ShootSelectorMismatch, fmt.Sprintf("spec.seedSelector '%s' does not match the labels %s of the Shoot's seed %q",
			selector, formatLabels(seed.labels), seed.Name)})
	}
	if len(sel.ProviderTypes) > 0 && !slices.Contains(sel.ProviderTypes, seed.providerType) {
		v = append(v, Violation{ShootSelectorMismatch, fmt.Sprintf("spec.seedSelector.providerTypes %s do not include the provider type %q of the Shoot's seed %q",
			quoteList(sel.ProviderTypes), seed.providerType, seed.Name)})
	}
	return v
}

func profileViolations(profile *CloudProfile, seed *Seed, shoot *api.Shoot) []Violation {
	var v []Violation
	if profile.SeedSelector != nil {
		switch {
		case profile.selectorErr != nil:
			v = append(v, Violation{CloudProfileSelectorInvalid, fmt.Sprintf("cloudProfile %q: spec.seedSelector: %v", profile.Name, profile.selectorErr)})
		case !profile.selector.Matches(seed.labels):
			v = append(v, Violation{CloudProfileSelectorMismatch, fmt.Sprintf("seed %q (labels %s) does not match spec.seedSelector '%s' of CloudProfile %q",
				seed.Name, formatLabels(seed.labels), profile.selector, profile.Name)})
		}
	}
	// Without providerTypes Gardener's admission lets a user bind to a seed
	// of any provider; only placement keeps to the Shoot's.
	enabled := profile.ProviderTypes()
	if keep, _ := providerMatches(shoot.Spec.Provider.Type, enabled); len(enabled) > 0 && !keep(seed) {
		v = append(v, Violation{ProviderNotEnabled, fmt.Sprintf("seed %q has provider type %q, which is not in spec.seedSelector.providerTypes %s of CloudProfile %q",
			seed.Name, seed.providerType, quoteList(enabled), profile.Name)})
	}
	return v
}

func formatTaints(taints []api.SeedTaint) string {
	out := make([]string, len(taints))
	for i, t := range taints {
		out[i] = t.Key
		if t.Value != nil {
			out[i] += "=" + *t.Value
		}
	}
	return quoteList(out)
}

func formatTolerations(tols []api.Toleration) string {
	out := make([]string, len(tols[:min(len(tols), maxListed)]), len(tols))
	for i, t := range tols[:len(out)] {
		out[i] = t.Key
		if t.Value != nil {
			out[i] += "=" + *t.Value
		}
	}
	return quoteList(out[:len(tols)])
}

func formatLabels(l map[string]string) string {
	if len(l) == 0 {
		return "none"
	}
	keys := slices.Sorted(maps.Keys(l))
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + "=" + l[k]
	}
	return "'" + strings.Join(out, ",") + "'"
}

// quoteList formats names as ["a", "b"], or [] when there are none.
// quoteList quotes names for a message, the first maxListed of them: a
// Shoot's lists (tolerations, access restrictions) are its author's to make
// long, and a message naming each would be as long again.
func quoteList(names []string) string {
	out := make([]string, 0, min(len(names), maxListed)+1)
	for _, n := range names[:min(len(names), maxListed)] {
		out = append(out, fmt.Sprintf("%q", n))
	}
	if len(names) > maxListed {
		out = append(out, fmt.Sprintf("… %d more", len(names)-maxListed))
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// maxListed is how many names quoteList writes.
const maxListed = 10
