package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/api"
)

func deleting(s *api.Seed) {
	now := metav1.Now()
	s.DeletionTimestamp = &now
}

// TestDeletingSeedNeverChosen: a Seed with a deletionTimestamp is not usable
// (Gardener's isUsableSeed), on every path, although it would win the tie by
// name. With only deleting seeds the Shoot is unschedulable at step Usable and
// the explanation says why.
func TestDeletingSeedNeverChosen(t *testing.T) {
	opts := Options{Strategy: SameRegion, NetworkMode: Disjoint}

	t.Run("another seed is chosen", func(t *testing.T) {
		snap := snapshotOf(nil, readySeed("a-deleting", deleting), readySeed("b-live"))
		for _, v := range Variants {
			d := v.Run(snap, basicShoot(), opts)
			assert.Equal(t, "b-live", d.Seed, v.Name)
			assert.Equal(t, []string{"b-live"}, d.Tied, v.Name)
		}
		assert.True(t, Admits(snap, basicShoot(), opts, "b-live"))
		assert.False(t, Admits(snap, basicShoot(), opts, "a-deleting"), "an announced deleting seed is not bound")
	})

	t.Run("only deleting seeds", func(t *testing.T) {
		snap := snapshotOf(nil, readySeed("a-deleting", deleting))
		for _, v := range Variants {
			d := v.Run(snap, basicShoot(), opts)
			require.False(t, d.Schedulable(), v.Name)
			assert.Equal(t, StepUsable, d.Step, v.Name)
		}
		d := Decide(snap, basicShoot(), opts)
		assert.Equal(t, map[string]string{"a-deleting": "seed is being deleted (metadata.deletionTimestamp is set)"}, d.Reasons)
		assert.Contains(t, d.Summary(), "a-deleting: seed is being deleted")
	})

	t.Run("index from many seeds", func(t *testing.T) {
		// From minIndexed seeds the fast path goes through the index.
		var seeds []*api.Seed
		seeds = append(seeds, readySeed("a-deleting", deleting))
		for i := 0; i < minIndexed; i++ {
			seeds = append(seeds, readySeed("z-live-"+string(rune('a'+i%26))+string(rune('a'+i/26)), withZones(api.ZoneSelectionPrefer, "z1")))
		}
		seeds[0].Spec.Provider.Zones = []string{"z1"}
		seeds[0].Spec.Settings = &api.SeedSettings{ZoneSelection: &api.SeedSettingZoneSelection{Mode: api.ZoneSelectionPrefer}}
		snap := snapshotOf(nil, seeds...)
		shoot := basicShoot(func(s *api.Shoot) { s.Spec.Provider.Workers[0].Zones = []string{"z1"} })
		for _, v := range []Variant{Fast, Indexed} {
			d := v.Run(snap, shoot, opts)
			assert.NotEqual(t, "a-deleting", d.Seed, v.Name)
			assert.True(t, d.Schedulable(), v.Name)
		}
	})
}
