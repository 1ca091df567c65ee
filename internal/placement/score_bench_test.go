package placement

import (
	"fmt"
	"testing"

	"github.com/seedwarden/seedwarden/internal/api"
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
// filters keep, where the default ranks one region's: for the zoned
// Shoot (landscapegen's, workers in eu-west-1 zones) the zone step keeps
// one region anyway; the unzoned one (no worker zones) lets every aws and
// gcp seed through, the widest ranking this landscape allows.
func BenchmarkDecideScoring(b *testing.B) {
	zoned, unzoned := landscapegen.NewShoot("new"), landscapegen.NewShoot("new")
	for i := range unzoned.Spec.Provider.Workers {
		unzoned.Spec.Provider.Workers[i].Zones = nil
	}
	for _, n := range []int{1000, 5000} {
		snap := benchSnapshot(n)
		project := map[string]int64{} // a large project: Shoots on 50 seeds
		for i, s := range snap.Seeds {
			if i%(n/50) == 0 {
				project[s.Name] = int64(1 + i%3)
			}
		}
		snap.ProjectShoots = func(string) map[string]int64 { return project }
		for _, sh := range []struct {
			name  string
			shoot *api.Shoot
		}{{"zoned", zoned}, {"unzoned", unzoned}} {
			shoot := sh.shoot
			for _, strategy := range []Strategy{SameRegion, MinimalDistance} {
				for _, v := range []struct {
					name    string
					profile *Profile
				}{{"default", nil}, {"scored", benchProfile}} {
					b.Run(fmt.Sprintf("seeds=%d/%s/%s/%s", n, sh.name, strategy, v.name), func(b *testing.B) {
						opts := Options{Strategy: strategy, NetworkMode: Disjoint, Scoring: v.profile}
						b.ReportAllocs()
						var d Decision
						for b.Loop() {
							if d = Decide(snap, shoot, opts); !d.Schedulable() {
								b.Fatal(d.Summary())
							}
						}
						b.ReportMetric(float64(d.Scored), "ranked") // seeds the profile ranked (0 without)
					})
				}
			}
		}
	}
}
