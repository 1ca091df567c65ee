package placement

import (
	"fmt"
	"testing"

	"github.com/seedwarden/seedwarden/internal/landscapegen"
)

// benchSnapshot digests a generated landscape of n seeds directly (no cache),
// with usage from a map as the cache's counters would give it.
func benchSnapshot(n int) *Snapshot {
	usage := map[string]int64{}
	snap := &Snapshot{
		CloudProfiles: map[string]*CloudProfile{"aws": NewCloudProfile("aws", &landscapegen.CloudProfile().Spec)},
		Projects:      map[string]*Project{landscapegen.Namespace: {Name: "dev"}},
		RegionConfigs: []*RegionConfig{NewRegionConfig(landscapegen.RegionConfig())},
		Usage:         func(s *Seed) int64 { return usage[s.Name] },
	}
	for i := 0; i < n; i++ {
		s := landscapegen.Seed(i)
		snap.Seeds = append(snap.Seeds, NewSeed(s))
		usage[s.Name] = int64(i % 150)
	}
	return snap
}

// BenchmarkDecide is the pure decision at 100, 1,000 and 5,000 seeds; the
// cache's BenchmarkDecision adds Shoots and the reservation path.
func BenchmarkDecide(b *testing.B) {
	shoot := landscapegen.NewShoot("new")
	for _, n := range []int{100, 1000, 5000} {
		snap := benchSnapshot(n)
		for _, strategy := range []Strategy{SameRegion, MinimalDistance} {
			b.Run(fmt.Sprintf("seeds=%d/%s", n, strategy), func(b *testing.B) {
				opts := Options{Strategy: strategy, NetworkMode: Disjoint}
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
