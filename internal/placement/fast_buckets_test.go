package placement

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/landscapegen"
)

// TestBucketsMatchScan: the fast pass through the buckets (fast_buckets.go)
// keeps exactly the seeds the pass over every seed keeps, narrowed or not,
// on landscapes mixing providers, regions, zone modes and zone counts, for
// Shoots of any provider, region and worker zones (more than the pass
// hashes included) and profiles accepting one, several, many or any ('*')
// provider types; and it leaves its bit set cleared.
func TestBucketsMatchScan(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	providers := []string{"aws", "gcp", "azure", ""}
	regions := landscapegen.Regions[:4]
	profiles := [][]string{nil, {"aws", "gcp"}, {"*"}, {"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "gcp"}}
	nonEmpty := 0
	for l := 0; l < 60; l++ {
		seeds := make([]*Seed, 1+r.IntN(300))
		for i := range seeds {
			s := landscapegen.Seed(i)
			s.Spec.Provider.Type = providers[r.IntN(len(providers))]
			region := regions[r.IntN(len(regions))]
			s.Spec.Provider.Region = region
			s.Spec.Provider.Zones = nil
			for _, c := range "abcdef"[:r.IntN(7)] {
				s.Spec.Provider.Zones = append(s.Spec.Provider.Zones, region+"-"+string(c))
			}
			s.Spec.Settings.ZoneSelection.Mode = []string{api.ZoneSelectionEnforce, api.ZoneSelectionPrefer, ""}[r.IntN(3)]
			if r.IntN(10) == 0 {
				s.Status.LastOperation = nil
			}
			seeds[i] = NewSeed(s)
		}
		idx := buildIndex(seeds, nil)
		snap := &Snapshot{Seeds: seeds}
		for range 20 {
			shoot := landscapegen.NewShoot("new")
			shoot.Spec.Provider.Type = providers[r.IntN(len(providers))]
			shoot.Spec.Region = regions[r.IntN(len(regions))]
			var zones []string
			for range r.IntN(12) {
				zones = append(zones, regions[r.IntN(len(regions))]+"-"+string("abcdef"[r.IntN(6)]))
			}
			shoot.Spec.Provider.Workers = []api.Worker{{Name: "a", Zones: zones}}
			d := &decider{
				snap:    snap,
				shoot:   shoot,
				opts:    Options{Strategy: []Strategy{SameRegion, MinimalDistance}[r.IntN(2)]},
				profile: NewCloudProfile("p", &api.CloudProfileSpec{Type: "aws", SeedSelector: &api.SeedSelector{ProviderTypes: profiles[r.IntN(len(profiles))]}}),
				path:    fastPath,
			}
			d.narrowing = d.narrowRule()
			d.narrow = r.IntN(2) == 0 && d.narrowing.on
			var viaBuckets, viaScan fastPass
			require.True(t, d.initFastPass(&viaBuckets))
			require.True(t, d.initFastPass(&viaScan))
			marks := make([]uint64, (len(seeds)+63)/64)
			got, done := viaBuckets.throughIndex(idx, marks)
			want := viaScan.scan(seeds)
			require.Equal(t, make([]uint64, len(marks)), marks, "landscape %d: bit set left dirty", l)
			if !done {
				// Only C, never B, comes through the buckets under
				// worker-pool zones: an empty C needs the scan.
				require.Empty(t, viaScan.c, "landscape %d", l)
				continue
			}
			require.Equal(t, want, got, "landscape %d, shoot %+v, narrowed %v", l, shoot.Spec, d.narrow)
			if len(got) > 0 {
				nonEmpty++
			}
		}
	}
	require.Greater(t, nonEmpty, 200, "too few cases keep any seed")
}
