package placement

import (
	"fmt"
	"testing"

	"github.com/seedwarden/seedwarden/internal/landscapegen"
)

// benchProfile is a 4-scorer profile, GEP-13's balanced one plus spread.
var benchProfile = &Profile{Scorers: []WeightedScorer{
	{Name: ScoreRegionDistance, Weight: 2},
	{Name: ScoreLeastAllocated, Weight: 5},
	{Name: ScoreLeastShoots, Weight: 1},
	{Name: ScoreProjectSpread, Weight: 1},
}, DefaultCapacity: 100}

// BenchmarkDecideScoring is BenchmarkDecide without a profile ("default")
// and with benchProfile ("scored") in the same run, at 1,000 and 5,000
// seeds. The issue bounds scored at 1.5 times default. With RegionDistance
// the strategy no longer cuts, so the profile ranks every seed the other
// filters keep (all regions), where the default ranks one region's.
func BenchmarkDecideScoring(b *testing.B) {
	shoot := landscapegen.NewShoot("new")
	for _, n := range []int{1000, 5000} {
		snap := benchSnapshot(n)
		project := map[string]int64{}
		for i, s := range snap.Seeds {
			project[s.Name] = int64(i % 3)
		}
		snap.ProjectShoots = func(s *Seed, _ string) int64 { return project[s.Name] }
		for _, strategy := range []Strategy{SameRegion, MinimalDistance} {
			for _, v := range []struct {
				name    string
				profile *Profile
			}{{"default", nil}, {"scored", benchProfile}} {
				b.Run(fmt.Sprintf("seeds=%d/%s/%s", n, strategy, v.name), func(b *testing.B) {
					opts := Options{Strategy: strategy, NetworkMode: Disjoint, Scoring: v.profile}
					b.ReportAllocs()
					for b.Loop() {
						if d := Decide(snap, shoot, opts); !d.Schedulable() {
							b.Fatal(d.Summary())
						}
					}
				})
			}
		}
	}
}
