package placement

import (
	"fmt"
	"slices"
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

// BenchmarkDecidePass splits BenchmarkDecide (1,000 seeds, SameRegion) by
// how steps 1-6 run: plain (one pass per filter, the specification), the
// fast path scanning every seed, and the fast path through the seed index.
// The steps after them are the same code in all three.
func BenchmarkDecidePass(b *testing.B) {
	shoot := landscapegen.NewShoot("new")
	snap := benchSnapshot(1000)
	opts := Options{Strategy: SameRegion, NetworkMode: Disjoint}
	for _, v := range []Variant{Plain, Scan, Indexed} {
		b.Run(v.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if d := v.Run(snap, shoot, opts); !d.Schedulable() {
					b.Fatal(d.Summary())
				}
			}
		})
	}
}

// BenchmarkDecideAfterChange is BenchmarkDecide (SameRegion) when every
// decision finds the landscape changed: it alternates between two snapshots,
// so each decision first rebuilds the seed index from the other's. They
// differ in one seed replaced (what a Seed update publishes), in one seed
// added in the middle (removed on the way back), or in every seed (nothing
// to share: the first decision on a new landscape). It bounds what landscape
// churn costs a decision.
func BenchmarkDecideAfterChange(b *testing.B) {
	shoot := landscapegen.NewShoot("new")
	for _, n := range []int{1000, 5000} {
		a := benchSnapshot(n)
		replaced, added, unrelated := *a, *a, *benchSnapshot(n)
		replaced.Seeds = slices.Clone(a.Seeds)
		replaced.Seeds[n/2] = NewSeed(landscapegen.Seed(n / 2))
		extra := landscapegen.Seed(n / 2)
		extra.Name += "-extra"
		added.Seeds = slices.Insert(slices.Clone(a.Seeds), n/2+1, NewSeed(extra))
		for _, other := range []struct {
			name string
			snap *Snapshot
		}{{"replaced", &replaced}, {"added", &added}, {"unrelated", &unrelated}} {
			snaps := []*Snapshot{a, other.snap}
			b.Run(fmt.Sprintf("seeds=%d/%s", n, other.name), func(b *testing.B) {
				opts := Options{Strategy: SameRegion, NetworkMode: Disjoint}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if d := Decide(snaps[i&1], shoot, opts); !d.Schedulable() {
						b.Fatal(d.Summary())
					}
					i++
				}
			})
		}
	}
}
