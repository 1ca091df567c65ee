package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/seedwarden/seedwarden/internal/api"
)

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
