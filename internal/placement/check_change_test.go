package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

// changeLandscape: seeds in name order (seedNamed searches a sorted list).
// "aws-eu1" and "aws-eu2" take basicShoot, have backup, one internal domain
// and the default domain seed.example.com; the others break one rescheduling
// rule each.
func changeLandscape() *Snapshot {
	fit := func(s *api.Seed) {
		s.Spec.Provider.Zones = []string{"eu-west-1a", "eu-west-1b", "eu-west-1c"}
		s.Spec.Backup = &api.SeedBackup{Provider: "aws"}
		s.Spec.DNS = api.SeedDNS{
			Internal: &api.SeedDNSProviderConfig{Domain: "internal.example.com"},
			Defaults: []api.SeedDNSProviderConfig{{Domain: "seed.example.com"}},
		}
	}
	return snapshotOf(nil,
		readySeed("aws-eu1", fit),
		readySeed("aws-eu2", fit),
		readySeed("labelled", fit, withLabels(map[string]string{"env": "prod"})),
		readySeed("no-backup", fit, func(s *api.Seed) { s.Spec.Backup = nil }),
		readySeed("other-defaults", fit, func(s *api.Seed) { s.Spec.DNS.Defaults = []api.SeedDNSProviderConfig{{Domain: "other.example.com"}} }),
		readySeed("other-domain", fit, func(s *api.Seed) { s.Spec.DNS.Internal.Domain = "internal.other.example.com" }),
	)
}

// onSeed is basicShoot on seed (none when empty), changed by mods.
func onSeed(seed string, mods ...func(*api.Shoot)) *api.Shoot {
	sh := basicShoot(mods...)
	if seed != "" {
		sh.Spec.SeedName = ptr.To(seed)
	}
	return sh
}

func zonalPinned(zones ...string) func(*api.Shoot) {
	return func(sh *api.Shoot) {
		sh.Spec.ControlPlane = &api.ControlPlane{
			HighAvailability: &api.HighAvailability{FailureTolerance: api.FailureTolerance{Type: api.FailureToleranceZone}},
			Zones:            zones,
		}
	}
}

func pinned(zones ...string) func(*api.Shoot) {
	return func(sh *api.Shoot) { sh.Spec.ControlPlane = &api.ControlPlane{Zones: zones} }
}

func seedSelector(labels map[string]string, providers ...string) func(*api.Shoot) {
	return func(sh *api.Shoot) {
		sh.Spec.SeedSelector = &api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchLabels: labels}, ProviderTypes: providers}
	}
}

func withShootDomain(domain string) func(*api.Shoot) {
	return func(sh *api.Shoot) { sh.Spec.DNS = &api.DNS{Domain: ptr.To(domain)} }
}

func TestCheckSeedChange(t *testing.T) {
	tests := []struct {
		name       string
		old, shoot *api.Shoot
		by         Chooser
		want       []string
	}{{
		name:  "first seed that fits",
		shoot: onSeed("aws-eu1"),
	}, {
		name:  "seed not found",
		shoot: onSeed("nope"),
		want:  []string{`seed "nope" not found`},
	}, {
		name:  "seed not found, own placement",
		shoot: onSeed("nope"),
		by:    ChosenByPlacement,
		want:  []string{`seed "nope" not found`},
	}, {
		name:  "CheckSeedForShoot's rules",
		shoot: onSeed("aws-eu1", pinned("eu-west-1d")),
		want:  []string{`spec.controlPlane.zones[0]: zone "eu-west-1d" is not available in seed "aws-eu1" (it has ["eu-west-1a", "eu-west-1b", "eu-west-1c"])`},
	}, {
		name:  "CheckSeedForShoot's rules, own placement",
		shoot: onSeed("aws-eu1", pinned("eu-west-1d")),
		by:    ChosenByPlacement,
		want:  []string{`spec.controlPlane.zones[0]: zone "eu-west-1d" is not available in seed "aws-eu1" (it has ["eu-west-1a", "eu-west-1b", "eu-west-1c"])`},
	}, {
		// Failure tolerance zone: placement, like gardener-scheduler, ignores
		// pinned zones, so only zones that change are checked, as in Gardener.
		name:  "zonal: create with pinned zones the seed lacks",
		shoot: onSeed("aws-eu1", zonalPinned("eu-west-1d")),
		want:  []string{`spec.controlPlane.zones[0]: zone "eu-west-1d" is not available in seed "aws-eu1" (it has ["eu-west-1a", "eu-west-1b", "eu-west-1c"])`},
	}, {
		name:  "zonal: own placement with pinned zones the seed lacks",
		shoot: onSeed("aws-eu1", zonalPinned("eu-west-1d")),
		by:    ChosenByPlacement,
	}, {
		name:  "zonal: binding with unchanged pinned zones the seed lacks",
		old:   onSeed("", zonalPinned("eu-west-1d")),
		shoot: onSeed("aws-eu1", zonalPinned("eu-west-1d")),
	}, {
		name:  "zonal: binding that pins zones the seed lacks",
		old:   onSeed("", zonalPinned()),
		shoot: onSeed("aws-eu1", zonalPinned("eu-west-1d")),
		want:  []string{`spec.controlPlane.zones[0]: zone "eu-west-1d" is not available in seed "aws-eu1" (it has ["eu-west-1a", "eu-west-1b", "eu-west-1c"])`},
	}, {
		name:  "zonal: binding to a seed offering the pinned zones",
		old:   onSeed("", zonalPinned()),
		shoot: onSeed("aws-eu1", zonalPinned("eu-west-1c", "eu-west-1a")),
	}, {
		name:  "binding with a seed selector not matching the seed",
		old:   onSeed(""),
		shoot: onSeed("labelled", seedSelector(map[string]string{"env": "dev"})),
		want:  []string{`spec.seedSelector 'env=dev' does not match the labels 'env=prod' of the Shoot's seed "labelled"`},
	}, {
		name:  "create with a seed selector not matching the seed",
		shoot: onSeed("labelled", seedSelector(map[string]string{"env": "dev"})),
		want:  []string{`spec.seedSelector 'env=dev' does not match the labels 'env=prod' of the Shoot's seed "labelled"`},
	}, {
		name:  "own placement with a seed selector not matching the seed",
		shoot: onSeed("labelled", seedSelector(nil, "*")),
		by:    ChosenByPlacement,
	}, {
		name:  "binding with an unchanged seed selector not matching the seed",
		old:   onSeed("", seedSelector(map[string]string{"env": "dev"})),
		shoot: onSeed("labelled", seedSelector(map[string]string{"env": "dev"})),
	}, {
		name:  "rescheduling",
		old:   onSeed("aws-eu1"),
		shoot: onSeed("aws-eu2"),
	}, {
		name:  "rescheduling to a seed without backup",
		old:   onSeed("aws-eu1"),
		shoot: onSeed("no-backup"),
		want:  []string{`rescheduling from seed "aws-eu1" to seed "no-backup" needs backup on both seeds, seed "no-backup" has no spec.backup`},
	}, {
		name:  "rescheduling from a seed without backup",
		old:   onSeed("no-backup"),
		shoot: onSeed("aws-eu1"),
		want:  []string{`rescheduling from seed "no-backup" to seed "aws-eu1" needs backup on both seeds, seed "no-backup" has no spec.backup`},
	}, {
		name:  "rescheduling to another internal domain",
		old:   onSeed("aws-eu1"),
		shoot: onSeed("other-domain"),
		want:  []string{`rescheduling needs the same spec.dns.internal.domain on both seeds: seed "aws-eu1" has "internal.example.com", seed "other-domain" has "internal.other.example.com"`},
	}, {
		name:  "rescheduling away from the default domain",
		old:   onSeed("aws-eu1", withShootDomain("crazy-botany.dev.seed.example.com")),
		shoot: onSeed("other-defaults", withShootDomain("crazy-botany.dev.seed.example.com")),
		want:  []string{`spec.dns.domain "crazy-botany.dev.seed.example.com" is under the default domain "seed.example.com" of seed "aws-eu1", which seed "other-defaults" does not serve (its default domains: ["other.example.com"])`},
	}, {
		name:  "rescheduling with the default domain on both seeds",
		old:   onSeed("aws-eu1", withShootDomain("crazy-botany.dev.seed.example.com")),
		shoot: onSeed("aws-eu2", withShootDomain("crazy-botany.dev.seed.example.com")),
	}, {
		name:  "rescheduling with a custom domain",
		old:   onSeed("aws-eu1", withShootDomain("crazy-botany.dev.shoot.example.com")),
		shoot: onSeed("other-defaults", withShootDomain("crazy-botany.dev.shoot.example.com")),
	}, {
		name:  "rescheduling from a seed that is gone",
		old:   onSeed("gone"),
		shoot: onSeed("aws-eu1"),
		want:  []string{`the current seed "gone" is not found, so moving the Shoot away from it cannot be checked`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, CheckSeedChange(changeLandscape(), tc.old, tc.shoot, tc.by, Disjoint))
		})
	}
}

func TestCheckSeedKept(t *testing.T) {
	tests := []struct {
		name        string
		old, shoot  *api.Shoot
		wantChecked bool
		want        []string
	}{{
		name:  "create",
		shoot: onSeed("aws-eu1", seedSelector(map[string]string{"env": "dev"})),
	}, {
		name:  "no seed",
		old:   onSeed(""),
		shoot: onSeed("", seedSelector(map[string]string{"env": "dev"})),
	}, {
		name:  "seed moved",
		old:   onSeed("aws-eu1"),
		shoot: onSeed("labelled", seedSelector(map[string]string{"env": "dev"})),
	}, {
		name:  "nothing the seed cares about changed",
		old:   onSeed("aws-eu1"),
		shoot: onSeed("aws-eu1", func(sh *api.Shoot) { sh.Spec.Purpose = ptr.To("production") }),
	}, {
		name:        "a seed selector matching the current seed",
		old:         onSeed("labelled"),
		shoot:       onSeed("labelled", seedSelector(map[string]string{"env": "prod"})),
		wantChecked: true,
	}, {
		name:        "a seed selector not matching the current seed",
		old:         onSeed("labelled"),
		shoot:       onSeed("labelled", seedSelector(map[string]string{"env": "dev"})),
		wantChecked: true,
		want:        []string{`spec.seedSelector 'env=dev' does not match the labels 'env=prod' of the Shoot's seed "labelled"`},
	}, {
		name:        "a seed selector listing another provider",
		old:         onSeed("labelled"),
		shoot:       onSeed("labelled", seedSelector(nil, "gcp")),
		wantChecked: true,
		want:        []string{`spec.seedSelector.providerTypes ["gcp"] do not include the provider type "aws" of the Shoot's seed "labelled"`},
	}, {
		name:        "the seed selector removed",
		old:         onSeed("labelled", seedSelector(map[string]string{"env": "prod"})),
		shoot:       onSeed("labelled"),
		wantChecked: true,
		want:        []string{`spec.seedSelector: cannot be removed once set while the Shoot has seed "labelled"`},
	}, {
		name:  "a kept seed selector that does not match",
		old:   onSeed("labelled", seedSelector(map[string]string{"env": "dev"})),
		shoot: onSeed("labelled", seedSelector(map[string]string{"env": "dev"})),
	}, {
		name:        "pinned control-plane zones the seed offers",
		old:         onSeed("aws-eu1", zonalPinned()),
		shoot:       onSeed("aws-eu1", zonalPinned("eu-west-1b")),
		wantChecked: true,
	}, {
		name:        "a pinned control-plane zone the seed lacks",
		old:         onSeed("aws-eu1", zonalPinned()),
		shoot:       onSeed("aws-eu1", zonalPinned("eu-west-1b", "eu-west-1d")),
		wantChecked: true,
		want:        []string{`spec.controlPlane.zones[1]: zone "eu-west-1d" is not available in seed "aws-eu1" (it has ["eu-west-1a", "eu-west-1b", "eu-west-1c"])`},
	}, {
		name:  "kept pinned zones",
		old:   onSeed("aws-eu1", zonalPinned("eu-west-1d")),
		shoot: onSeed("aws-eu1", zonalPinned("eu-west-1d")),
	}, {
		name:        "kept pinned zones in a changed region",
		old:         onSeed("aws-eu1", zonalPinned("eu-west-1d")),
		shoot:       onSeed("aws-eu1", zonalPinned("eu-west-1d"), func(sh *api.Shoot) { sh.Spec.Region = "eu-west-2" }),
		wantChecked: true,
		want:        []string{`spec.controlPlane.zones[0]: zone "eu-west-1d" is not available in seed "aws-eu1" (it has ["eu-west-1a", "eu-west-1b", "eu-west-1c"])`},
	}, {
		name:        "seed not found",
		old:         onSeed("gone"),
		shoot:       onSeed("gone", seedSelector(map[string]string{"env": "dev"})),
		wantChecked: true,
		want:        []string{`seed "gone" not found, so spec.seedSelector and spec.controlPlane.zones cannot be checked against it`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			problems, checked := CheckSeedKept(changeLandscape(), tc.old, tc.shoot)
			assert.Equal(t, tc.wantChecked, checked)
			assert.Equal(t, tc.want, problems)
		})
	}
}
