package placement

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

func TestUnsupportedAccessRestrictions(t *testing.T) {
	sd := NewSeed(readySeed("s", func(s *api.Seed) {
		s.Spec.AccessRestrictions = []api.AccessRestriction{{Name: "eu-access-only"}}
	}))
	assert.Empty(t, unsupportedAccessRestrictions(sd, nil))
	assert.Empty(t, unsupportedAccessRestrictions(sd, []api.AccessRestrictionWithOptions{{Name: "eu-access-only"}}))
	assert.Equal(t, []string{"other"}, unsupportedAccessRestrictions(sd, []api.AccessRestrictionWithOptions{{Name: "eu-access-only"}, {Name: "other"}, {Name: "other"}}))
}

func TestCheckSeedForShoot(t *testing.T) {
	withProfile := func(sel *api.SeedSelector) func(*Snapshot) {
		return func(s *Snapshot) {
			s.CloudProfiles["aws"] = NewCloudProfile("aws", &api.CloudProfileSpec{Type: "aws", SeedSelector: sel})
		}
	}
	zonal := func(sh *api.Shoot) {
		sh.Spec.ControlPlane = &api.ControlPlane{HighAvailability: &api.HighAvailability{FailureTolerance: api.FailureTolerance{Type: "zone"}}}
	}
	tests := []struct {
		name  string
		seed  *api.Seed
		shoot *api.Shoot
		snap  func(*Snapshot)
		want  []string
	}{{
		name:  "fits",
		seed:  readySeed("s", withZones("", "a", "b", "c")),
		shoot: basicShoot(zonal),
	}, {
		name: "not ready or invisible still fits: a user may bind there",
		seed: readySeed("s", func(s *api.Seed) {
			s.Status.Conditions = nil
			s.Spec.Settings = &api.SeedSettings{Scheduling: &api.SeedSettingScheduling{Visible: false}}
		}),
		shoot: basicShoot(),
	}, {
		name:  "deleting",
		seed:  readySeed("s", func(s *api.Seed) { s.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)} }),
		shoot: basicShoot(),
		want:  []string{`seed "s" is being deleted (metadata.deletionTimestamp is set)`},
	}, {
		name: "taints",
		seed: readySeed("s", withTaints(api.SeedTaint{Key: "protected"}, api.SeedTaint{Key: "team", Value: ptr.To("a")})),
		shoot: basicShoot(func(sh *api.Shoot) {
			sh.Spec.Tolerations = []api.Toleration{{Key: "protected"}, {Key: "team", Value: ptr.To("b")}}
		}),
		want: []string{`spec.tolerations ["protected", "team=b"] do not tolerate the taints ["protected", "team=a"] of seed "s"`},
	}, {
		name: "access restrictions",
		seed: readySeed("s", func(s *api.Seed) { s.Spec.AccessRestrictions = []api.AccessRestriction{{Name: "x"}} }),
		shoot: basicShoot(func(sh *api.Shoot) {
			sh.Spec.AccessRestrictions = []api.AccessRestrictionWithOptions{{Name: "eu-access-only"}, {Name: "x"}, {Name: "eu-access-only"}}
		}),
		want: []string{`spec.accessRestrictions: seed "s" does not support ["eu-access-only"] (it supports ["x"])`},
	}, {
		name:  "cloud profile labels",
		seed:  readySeed("s", withLabels(map[string]string{"env": "dev", "a": "b"})),
		shoot: basicShoot(),
		snap:  withProfile(&api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}),
		want:  []string{`seed "s" (labels 'a=b,env=dev') does not match spec.seedSelector 'env=prod' of CloudProfile "aws"`},
	}, {
		name:  "cloud profile labels, seed without labels",
		seed:  readySeed("s"),
		shoot: basicShoot(),
		snap:  withProfile(&api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}),
		want:  []string{`seed "s" (labels none) does not match spec.seedSelector 'env=prod' of CloudProfile "aws"`},
	}, {
		name:  "invalid cloud profile selector",
		seed:  readySeed("s"),
		shoot: basicShoot(),
		snap: withProfile(&api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "env", Operator: "Near"}}}}),
		want: []string{`cloudProfile "aws": spec.seedSelector: "Near" is not a valid label selector operator`},
	}, {
		// Gardener's admission checks the provider only against providerTypes.
		name:  "provider differs, no providerTypes",
		seed:  readySeed("s", withRegion("gcp", "europe-west1")),
		shoot: basicShoot(),
	}, {
		name:  "provider differs, selector without providerTypes",
		seed:  readySeed("s", withRegion("gcp", "europe-west1")),
		shoot: basicShoot(),
		snap:  withProfile(&api.SeedSelector{}),
	}, {
		name:  "control-plane zones offered",
		seed:  readySeed("s", withZones("", "a", "b", "c")),
		shoot: basicShoot(func(sh *api.Shoot) { sh.Spec.ControlPlane = &api.ControlPlane{Zones: []string{"b"}} }),
	}, {
		name:  "control-plane zone missing",
		seed:  readySeed("s", withZones("", "a", "b")),
		shoot: basicShoot(func(sh *api.Shoot) { sh.Spec.ControlPlane = &api.ControlPlane{Zones: []string{"a", "c"}} }),
		want:  []string{`spec.controlPlane.zones[1]: zone "c" is not available in seed "s" (it has ["a", "b"])`},
	}, {
		// Placement skips the zone step for failure tolerance zone.
		name:  "control-plane zone missing, failure tolerance zone",
		seed:  readySeed("s", withZones("", "a", "b", "c")),
		shoot: basicShoot(zonal, func(sh *api.Shoot) { sh.Spec.ControlPlane.Zones = []string{"d"} }),
	}, {
		name: "networks overlap",
		seed: readySeed("s"),
		shoot: basicShoot(func(sh *api.Shoot) {
			sh.Spec.Networking = &api.Networking{Nodes: ptr.To("10.200.0.0/24"), IPFamilies: []string{api.IPFamilyIPv4}}
		}),
		want: []string{`spec.networking: on seed "s": shoot node network 10.200.0.0/24 intersects with seed pod network 10.200.0.0/16`},
	}, {
		name: "networks apart",
		seed: readySeed("s"),
		shoot: basicShoot(func(sh *api.Shoot) {
			sh.Spec.Networking = &api.Networking{Nodes: ptr.To("10.250.0.0/16"), IPFamilies: []string{api.IPFamilyIPv4}}
		}),
	}, {
		name:  "provider not listed",
		seed:  readySeed("s", withRegion("gcp", "europe-west1")),
		shoot: basicShoot(),
		snap:  withProfile(&api.SeedSelector{ProviderTypes: []string{"aws", "azure"}}),
		want:  []string{`seed "s" has provider type "gcp", which is not in spec.seedSelector.providerTypes ["aws", "azure"] of CloudProfile "aws"`},
	}, {
		name:  "provider listed",
		seed:  readySeed("s", withRegion("gcp", "europe-west1")),
		shoot: basicShoot(),
		snap:  withProfile(&api.SeedSelector{ProviderTypes: []string{"aws", "gcp"}}),
	}, {
		name:  "provider wildcard",
		seed:  readySeed("s", withRegion("gcp", "europe-west1")),
		shoot: basicShoot(),
		snap:  withProfile(&api.SeedSelector{ProviderTypes: []string{"*"}}),
	}, {
		name:  "cloud profile missing",
		seed:  readySeed("s"),
		shoot: basicShoot(func(sh *api.Shoot) { sh.Spec.CloudProfileName = ptr.To("nope") }),
		want:  []string{`spec.cloudProfile: CloudProfile "nope" not found`},
	}, {
		name:  "two zones for failure tolerance zone",
		seed:  readySeed("s", withZones("", "a", "b")),
		shoot: basicShoot(zonal),
		want:  []string{`spec.controlPlane.highAvailability.failureTolerance.type "zone" needs a seed with at least 3 zones, seed "s" has 2 ["a", "b"]`},
	}, {
		name: "everything at once",
		seed: readySeed("s", withRegion("gcp", "x"), withTaints(api.SeedTaint{Key: "t"}), func(s *api.Seed) {
			s.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
		}),
		shoot: basicShoot(zonal, func(sh *api.Shoot) {
			sh.Spec.AccessRestrictions = []api.AccessRestrictionWithOptions{{Name: "r"}}
		}),
		want: []string{
			`seed "s" is being deleted (metadata.deletionTimestamp is set)`,
			`spec.tolerations [] do not tolerate the taints ["t"] of seed "s"`,
			`spec.accessRestrictions: seed "s" does not support ["r"] (it supports [])`,
			`spec.controlPlane.highAvailability.failureTolerance.type "zone" needs a seed with at least 3 zones, seed "s" has 0 []`,
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := snapshotOf(nil, tc.seed)
			if tc.snap != nil {
				tc.snap(snap)
			}
			assert.Equal(t, tc.want, CheckSeedForShoot(snap, snap.Seeds[0], tc.shoot, Disjoint))
		})
	}
}

func TestCheckSeedForShootNetworkMode(t *testing.T) {
	snap := snapshotOf(nil, readySeed("s"))
	shoot := basicShoot(func(sh *api.Shoot) {
		sh.Spec.Networking = &api.Networking{Nodes: ptr.To("10.200.0.0/24"), IPFamilies: []string{api.IPFamilyIPv4}}
	})
	assert.Len(t, CheckSeedForShoot(snap, snap.Seeds[0], shoot, Disjoint), 1)
	assert.Empty(t, CheckSeedForShoot(snap, snap.Seeds[0], shoot, AllowIPv4), "IPv4 overlap allowed")
}

func TestCheckShootSelectorChange(t *testing.T) {
	seed := NewSeed(readySeed("s", withLabels(map[string]string{"env": "prod"})))
	sel := func(labels map[string]string, providers ...string) *api.SeedSelector {
		return &api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchLabels: labels}, ProviderTypes: providers}
	}
	tests := []struct {
		name     string
		old, new *api.SeedSelector
		want     []string
	}{
		{name: "none before or after"},
		{name: "set, matching", new: sel(map[string]string{"env": "prod"})},
		{name: "set, provider listed", new: sel(nil, "gcp", "aws")},
		{name: "changed, not matching", old: sel(nil), new: sel(map[string]string{"env": "dev"}),
			want: []string{`spec.seedSelector 'env=dev' does not match the labels 'env=prod' of the Shoot's seed "s"`}},
		{name: "provider not listed, no wildcard", new: sel(nil, "*"),
			want: []string{`spec.seedSelector.providerTypes ["*"] do not include the provider type "aws" of the Shoot's seed "s"`}},
		{name: "removed", old: sel(nil), want: []string{`spec.seedSelector: cannot be removed once set while the Shoot has seed "s"`}},
		{name: "invalid", new: &api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near"}}}},
			want: []string{`spec.seedSelector: "Near" is not a valid label selector operator`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, CheckShootSelectorChange(seed, tc.old, tc.new))
		})
	}
}
