package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

func TestUsable(t *testing.T) {
	now := metav1.Now()
	tests := []struct {
		name string
		seed *api.Seed
		ok   bool
	}{
		{"ready", readySeed("s"), true},
		{"deleting seeds are not usable, like in the reference", readySeed("s", func(s *api.Seed) { s.DeletionTimestamp = &now }), false},
		{"invisible", readySeed("s", func(s *api.Seed) {
			s.Spec.Settings = &api.SeedSettings{Scheduling: &api.SeedSettingScheduling{Visible: false}}
		}), false},
		{"settings without scheduling is visible", readySeed("s", func(s *api.Seed) { s.Spec.Settings = &api.SeedSettings{} }), true},
		{"no last operation", readySeed("s", func(s *api.Seed) { s.Status.LastOperation = nil }), false},
		{"gardenlet unknown", readySeed("s", func(s *api.Seed) { s.Status.Conditions[0].Status = "Unknown" }), false},
		{"no conditions", readySeed("s", func(s *api.Seed) { s.Status.Conditions = nil }), false},
		{"backup without bucket condition", readySeed("s", func(s *api.Seed) { s.Spec.Backup = &api.SeedBackup{Provider: "aws"} }), false},
		{"backup with bucket ready", readySeed("s", func(s *api.Seed) {
			s.Spec.Backup = &api.SeedBackup{Provider: "aws"}
			s.Status.Conditions = append(s.Status.Conditions, api.Condition{Type: api.ConditionBackupBucketsReady, Status: api.ConditionTrue})
		}), true},
		{"bucket condition ignored without backup", readySeed("s", func(s *api.Seed) {
			s.Status.Conditions = append(s.Status.Conditions, api.Condition{Type: api.ConditionBackupBucketsReady, Status: "False"})
		}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSeed(tt.seed)
			assert.Equal(t, tt.ok, usable(s) == "")
			assert.Equal(t, tt.ok, isUsable(s))
		})
	}
}

func TestProviderMatches(t *testing.T) {
	tests := []struct {
		name      string
		seedType  string
		shootType string
		enabled   []string
		ok        bool
	}{
		{"same type without list", "aws", "aws", nil, true},
		{"other type without list", "gcp", "aws", nil, false},
		{"listed type", "gcp", "aws", []string{"gcp", "azure"}, true},
		{"list without the seed's type, even the shoot's own", "aws", "aws", []string{"gcp"}, false},
		{"wildcard", "openstack", "aws", []string{"*"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSeed(readySeed("s", withRegion(tt.seedType, "r")))
			keep, why := providerMatches(tt.shootType, tt.enabled)
			assert.Equal(t, tt.ok, keep(s))
			if !tt.ok {
				assert.Contains(t, why(s), tt.seedType)
			}
		})
	}
}

func TestTaintsTolerated(t *testing.T) {
	taint := func(k string, v *string) api.SeedTaint { return api.SeedTaint{Key: k, Value: v} }
	tol := func(k string, v *string) api.Toleration { return api.Toleration{Key: k, Value: v} }
	tests := []struct {
		name   string
		taints []api.SeedTaint
		tols   []api.Toleration
		ok     bool
	}{
		{"no taints", nil, nil, true},
		{"untolerated key", []api.SeedTaint{taint("a", nil)}, []api.Toleration{tol("b", nil)}, false},
		{"key tolerated, taint without value", []api.SeedTaint{taint("a", nil)}, []api.Toleration{tol("a", ptr.To("x"))}, true},
		{"value must match", []api.SeedTaint{taint("a", ptr.To("x"))}, []api.Toleration{tol("a", ptr.To("y"))}, false},
		{"value matches", []api.SeedTaint{taint("a", ptr.To("x"))}, []api.Toleration{tol("a", ptr.To("x"))}, true},
		{"valued taint, toleration without value", []api.SeedTaint{taint("a", ptr.To("x"))}, []api.Toleration{tol("a", nil)}, false},
		{"more taints than tolerations fails outright", []api.SeedTaint{taint("a", nil), taint("a", nil)}, []api.Toleration{tol("a", nil)}, false},
		{"last toleration of a key wins", []api.SeedTaint{taint("a", ptr.To("x"))}, []api.Toleration{tol("a", ptr.To("x")), tol("a", ptr.To("y"))}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.ok, taintsTolerated(tt.taints, tt.tols))
		})
	}
}

func TestSelectZones(t *testing.T) {
	seeds := []*api.Seed{
		readySeed("enforce-match", withZones(api.ZoneSelectionEnforce, "z1", "z2")),
		readySeed("enforce-miss", withZones(api.ZoneSelectionEnforce, "z9")),
		readySeed("prefer-match", withZones(api.ZoneSelectionPrefer, "z2")),
		readySeed("prefer-miss", withZones(api.ZoneSelectionPrefer, "z8")),
		readySeed("plain", withZones("", "z7")),
	}
	tests := []struct {
		name  string
		shoot *api.Shoot
		seeds []*api.Seed
		want  []string
	}{
		{"no worker zones keeps all", basicShoot(), seeds,
			[]string{"enforce-match", "enforce-miss", "prefer-match", "prefer-miss", "plain"}},
		{"worker zones drop non-sharing Enforce and Prefer seeds", basicShoot(func(s *api.Shoot) {
			s.Spec.Provider.Workers = []api.Worker{{Name: "a", Zones: []string{"z2"}}, {Name: "b"}}
		}), seeds, []string{"enforce-match", "prefer-match", "plain"}},
		{"Prefer seeds sharing none drop even when no Prefer seed shares", basicShoot(func(s *api.Shoot) {
			s.Spec.Provider.Workers = []api.Worker{{Name: "a", Zones: []string{"z1"}}}
		}), seeds, []string{"enforce-match", "plain"}},
		{"Prefer pass that would empty the set is undone", basicShoot(func(s *api.Shoot) {
			s.Spec.Provider.Workers = []api.Worker{{Name: "a", Zones: []string{"z5"}}}
		}), []*api.Seed{readySeed("prefer-miss", withZones(api.ZoneSelectionPrefer, "z8"))}, []string{"prefer-miss"}},
		{"control-plane zones must all be offered", basicShoot(func(s *api.Shoot) {
			s.Spec.ControlPlane = &api.ControlPlane{Zones: []string{"z1", "z2"}}
			s.Spec.Provider.Workers = []api.Worker{{Name: "a", Zones: []string{"z9"}}}
		}), seeds, []string{"enforce-match"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := snapshotOf(nil, tt.seeds...)
			d := &decider{snap: snap, shoot: tt.shoot}
			assert.Equal(t, tt.want, names(d.selectZones(snap.Seeds)))
		})
	}
}

func TestAccessRestrictions(t *testing.T) {
	eu := readySeed("eu", func(s *api.Seed) { s.Spec.AccessRestrictions = []api.AccessRestriction{{Name: "eu-access-only"}} })
	plain := readySeed("plain")
	want := []api.AccessRestrictionWithOptions{{Name: "eu-access-only"}}
	keepAll, _ := supportsAccessRestrictions(nil)
	assert.True(t, keepAll(NewSeed(plain)), "no restrictions asked: every seed")
	keep, why := supportsAccessRestrictions(want)
	assert.True(t, keep(NewSeed(eu)))
	assert.False(t, keep(NewSeed(plain)))
	assert.Contains(t, why(NewSeed(plain)), "eu-access-only")
}

func TestMatchDomain(t *testing.T) {
	withDefault := func(d string) func(*api.Seed) {
		return func(s *api.Seed) { s.Spec.DNS.Defaults = []api.SeedDNSProviderConfig{{Domain: d}} }
	}
	seeds := []*api.Seed{readySeed("a", withDefault("example.com")), readySeed("b", withDefault("other.org")), readySeed("c")}
	tests := []struct {
		name    string
		domain  *string
		ns      string
		want    []string
		wantErr bool
	}{
		{"no domain", nil, "garden-proj", []string{"a", "b", "c"}, false},
		{"custom domain keeps all", ptr.To("my.custom.io"), "garden-proj", []string{"a", "b", "c"}, false},
		{"managed domain keeps the seeds giving it", ptr.To("shoot.proj.example.com"), "garden-proj", []string{"a"}, false},
		{"managed suffix with wrong project keeps none", ptr.To("shoot.other.example.com"), "garden-proj", []string{}, false},
		{"managed suffix with wrong shoot name keeps none", ptr.To("x.proj.example.com"), "garden-proj", []string{}, false},
		{"managed domain without project is an error", ptr.To("shoot.proj.example.com"), "garden-none", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := snapshotOf(nil, seeds...)
			sh := basicShoot(func(s *api.Shoot) {
				s.Namespace = tt.ns
				if tt.domain != nil {
					s.Spec.DNS = &api.DNS{Domain: tt.domain}
				}
			})
			d := &decider{snap: snap, shoot: sh}
			got, err := d.matchDomain(snap.Seeds)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, tt.want, names(got))
		})
	}
}

func TestEmergencyStop(t *testing.T) {
	stopped := readySeed("s", func(s *api.Seed) {
		s.Annotations = map[string]string{api.AnnotationEmergencyStop: "true"}
	})
	assert.NotEmpty(t, notEmergencyStopped(NewSeed(stopped)))
	assert.Empty(t, notEmergencyStopped(NewSeed(readySeed("s"))))
}
