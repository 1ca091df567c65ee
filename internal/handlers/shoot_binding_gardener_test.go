package handlers

import (
	"strings"
	"testing"
)

// The rules of Gardener's ShootValidator (plugin/pkg/shoot/validator) for a
// seed chosen by hand that go beyond seedwarden's first binding checks: the
// first seed only through shoots/binding (or, for Shoots from a CRD, an
// UPDATE standing in for it), rescheduling changes nothing else, the Shoot's
// seedSelector and pinned zones, networks, default domain, providerTypes.
func TestShootBindingValidatorGardenerRules(t *testing.T) {
	create, update, binding, as := reviewCreate, reviewUpdate, reviewBinding, asUser
	// edited replaces text in the review's new object (and in the old one
	// when both is set), e.g. a spec field.
	edited := func(r vReview, both bool, oldNew ...string) vReview {
		rep := strings.NewReplacer(oldNew...)
		r.object = rep.Replace(r.object)
		if both {
			r.oldObject = rep.Replace(r.oldObject)
		}
		return r
	}
	const (
		controlPlane = `"controlPlane": {"highAvailability": {"failureTolerance": {"type": "zone"}}}`
		purpose      = `"purpose": "evaluation"`
		shootDomain  = `"dns": {"domain": "crazy-botany.dev.shoot.example.com"}`
		seedDomain   = `"dns": {"domain": "crazy-botany.dev.seed.example.com"}`
	)
	pinned := func(zones string) string {
		return `"controlPlane": {"highAvailability": {"failureTolerance": {"type": "zone"}}, "zones": [` + zones + `]}`
	}
	selector := func(sel string) string { return `"seedSelector": ` + sel + `, "purpose": "evaluation"` }

	runBindingCases(t, []bindingCase{
		// Gardener: the first seed, too, is set through shoots/binding only.
		{name: "update sets first seed without permission", review: update("", "aws-eu1", nil),
			wantMessage: []string{`seedwarden: spec.seedName: setting the seed to "aws-eu1" through the shoots resource is not allowed; use the shoots/binding subresource`}},
		{name: "update sets first seed with permission", review: as(update("", "aws-eu1", nil), binderUser),
			wantMessage: []string{`setting the seed to "aws-eu1" through the shoots resource is not allowed`}},
		{name: "update with a seed selector matching the current seed", review: edited(update("labelled", "labelled", nil), false, purpose, selector(`{"matchLabels": {"env": "prod"}}`)), wantAllowed: true},
		{name: "update with a seed selector not matching the current seed", review: edited(update("labelled", "labelled", nil), false, purpose, selector(`{"matchLabels": {"env": "dev"}}`)),
			wantMessage: []string{`seedwarden: Shoot "garden-dev/crazy-botany" cannot stay on seed "labelled": spec.seedSelector 'env=dev' does not match the labels 'env=prod' of the Shoot's seed "labelled"`}},
		{name: "update with a seed selector listing another provider", review: edited(update("labelled", "labelled", nil), false, purpose, selector(`{"providerTypes": ["gcp"]}`)),
			wantMessage: []string{`spec.seedSelector.providerTypes ["gcp"] do not include the provider type "aws" of the Shoot's seed "labelled"`}},
		{name: "update removes the seed selector", review: func() vReview {
			r := update("labelled", "labelled", nil)
			r.oldObject = strings.Replace(r.oldObject, purpose, selector(`{"matchLabels": {"env": "prod"}}`), 1)
			return r
		}(),
			wantMessage: []string{`spec.seedSelector: cannot be removed once set while the Shoot has seed "labelled"`}},
		{name: "update keeps a seed selector that does not match", review: edited(update("labelled", "labelled", nil), true, purpose, selector(`{"matchLabels": {"env": "dev"}}`)), wantAllowed: true},
		{name: "update sets a seed selector on a Shoot without seed", review: edited(update("", "", nil), false, purpose, selector(`{"matchLabels": {"env": "dev"}}`)), wantAllowed: true},
		{name: "update pins control-plane zones the seed offers", review: edited(update("aws-eu1", "aws-eu1", nil), false, controlPlane, pinned(`"eu-west-1b"`)), wantAllowed: true},
		{name: "update pins a control-plane zone the seed lacks", review: edited(update("aws-eu1", "aws-eu1", nil), false, controlPlane, pinned(`"eu-west-1b", "eu-west-1d"`)),
			wantMessage: []string{`cannot stay on seed "aws-eu1": spec.controlPlane.zones[1]: zone "eu-west-1d" is not available in seed "aws-eu1"`}},
		{name: "update keeps pinned zones", review: edited(update("aws-eu1", "aws-eu1", nil), true, controlPlane, pinned(`"eu-west-1d"`)), wantAllowed: true},

		// Shoots from a CRD: an UPDATE of shoots stands in for the binding.
		{name: "crd: update sets first seed with permission", review: as(update("", "aws-eu1", nil), binderUser), bindThroughShoots: true, wantAuth: 1, wantAllowed: true},
		{name: "crd: update sets first seed without permission", review: update("", "aws-eu1", nil), bindThroughShoots: true, wantAuth: 1,
			wantMessage: []string{`user "jane.doe@example.com" may not set spec.seedName to "aws-eu1": that needs permission to update shoots/binding`}},
		{name: "crd: update sets first seed, seed does not fit", review: as(update("", "tainted", nil), binderUser), bindThroughShoots: true, wantAuth: 1,
			wantMessage: []string{`do not tolerate the taints`}},
		{name: "crd: update reschedules with permission", review: as(update("aws-eu1", "aws-eu2", nil), binderUser), bindThroughShoots: true, wantAuth: 1, wantAllowed: true},
		{name: "crd: update reschedules and changes more", review: edited(as(update("aws-eu1", "aws-eu2", nil), binderUser), false, purpose, `"purpose": "production"`), bindThroughShoots: true,
			wantMessage: []string{`may change only spec.seedName, but it also changes spec.purpose`}},
		{name: "crd: update unsets seed", review: as(update("aws-eu1", "", nil), binderUser), bindThroughShoots: true,
			wantMessage: []string{`unsetting the seed ("aws-eu1") is not allowed`}},
		{name: "crd: update without seed change", review: update("aws-eu1", "aws-eu1", nil), bindThroughShoots: true, wantAllowed: true},
		// Gardener checks the provider only against the CloudProfile's providerTypes.
		{name: "binding to another provider, no providerTypes", review: as(binding("", "gcp-eu1"), binderUser), wantAuth: 1, wantAllowed: true},
		{name: "binding to a provider not in providerTypes", review: as(binding("", "gcp-eu1"), binderUser), wantAuth: 1, providerTypes: []string{"aws"},
			wantMessage: []string{`seed "gcp-eu1" has provider type "gcp", which is not in spec.seedSelector.providerTypes ["aws"] of CloudProfile "aws"`}},
		{name: "binding to a provider in providerTypes", review: as(binding("", "gcp-eu1"), binderUser), wantAuth: 1, providerTypes: []string{"aws", "gcp"}, wantAllowed: true},
		{name: "binding first seed and other changes", review: edited(as(binding("", "aws-eu1"), binderUser), false, purpose, `"purpose": "production"`), wantAuth: 1, wantAllowed: true},
		{name: "rescheduling and other changes", review: edited(as(binding("aws-eu1", "aws-eu2"), binderUser), false, purpose, `"purpose": "production"`, `"region": "eu-west-1"`, `"region": "eu-west-2"`),
			wantMessage: []string{`seedwarden: a binding that moves the Shoot from seed "aws-eu1" to "aws-eu2" may change only spec.seedName, but it also changes spec.purpose, spec.region`}},
		{name: "rescheduling with metadata changes", review: edited(as(binding("aws-eu1", "aws-eu2"), binderUser), false, `"team": "platform"`, `"team": "infra"`), wantAuth: 1, wantAllowed: true},
		{name: "binding with a seed selector not matching the seed", review: edited(as(binding("", "labelled"), binderUser), false, purpose, selector(`{"matchLabels": {"env": "dev"}}`)), wantAuth: 1,
			wantMessage: []string{`spec.seedSelector 'env=dev' does not match the labels 'env=prod' of the Shoot's seed "labelled"`}},
		{name: "create with a seed selector not matching the seed", review: edited(as(create("labelled", nil), binderUser), false, purpose, selector(`{"matchLabels": {"env": "dev"}}`)), wantAuth: 1,
			wantMessage: []string{`spec.seedSelector 'env=dev' does not match`}},
		{name: "binding to a seed lacking a pinned zone", review: edited(as(binding("", "aws-eu1"), binderUser), true, controlPlane, `"controlPlane": {"zones": ["eu-west-1d"]}`), wantAuth: 1,
			wantMessage: []string{`spec.controlPlane.zones[0]: zone "eu-west-1d" is not available in seed "aws-eu1" (it has ["eu-west-1a", "eu-west-1b", "eu-west-1c"])`}},
		// Failure tolerance zone: placement (like gardener-scheduler) ignores
		// pinned zones, so only zones that change are checked, as in Gardener.
		{name: "zonal: binding with unchanged pinned zones the seed lacks", review: edited(as(binding("", "aws-eu1"), binderUser), true, controlPlane, pinned(`"eu-west-1d"`)), wantAuth: 1, wantAllowed: true},
		{name: "zonal: binding that pins zones the seed lacks", review: edited(as(binding("", "aws-eu1"), binderUser), false, controlPlane, pinned(`"eu-west-1d"`)), wantAuth: 1,
			wantMessage: []string{`spec.controlPlane.zones[0]: zone "eu-west-1d" is not available in seed "aws-eu1"`}},
		{name: "zonal: create with pinned zones the seed lacks", review: edited(as(create("aws-eu1", nil), binderUser), false, controlPlane, pinned(`"eu-west-1d"`)), wantAuth: 1,
			wantMessage: []string{`spec.controlPlane.zones[0]: zone "eu-west-1d" is not available in seed "aws-eu1"`}},
		{name: "binding to a seed offering the pinned zones", review: edited(as(binding("", "aws-eu1"), binderUser), true, controlPlane, pinned(`"eu-west-1c", "eu-west-1a"`)), wantAuth: 1, wantAllowed: true},
		{name: "binding to a seed whose networks overlap", review: as(binding("", "overlapping"), binderUser), wantAuth: 1,
			wantMessage: []string{`spec.networking: on seed "overlapping": shoot node network 10.250.0.0/16 intersects with seed pod network 10.250.0.0/16`}},
		{name: "rescheduling away from the default domain", review: edited(as(binding("aws-eu1", "other-defaults"), binderUser), true, shootDomain, seedDomain), wantAuth: 1,
			wantMessage: []string{`spec.dns.domain "crazy-botany.dev.seed.example.com" is under the default domain "seed.example.com" of seed "aws-eu1", which seed "other-defaults" does not serve (its default domains: ["other.example.com"])`}},
		{name: "rescheduling with the default domain on both seeds", review: edited(as(binding("aws-eu1", "aws-eu2"), binderUser), true, shootDomain, seedDomain), wantAuth: 1, wantAllowed: true},
		{name: "rescheduling with a custom domain", review: as(binding("aws-eu1", "other-defaults"), binderUser), wantAuth: 1, wantAllowed: true},
	})
}
