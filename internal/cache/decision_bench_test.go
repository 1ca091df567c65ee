package cache

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/seedwarden/seedwarden/internal/landscapegen"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// BenchmarkDecision is one placement through the webhook's entry point
// (Store.Place, dry-run) on generated landscapes, alternating the two
// strategies. Besides ns/op it reports the p50 and p99 of the individual
// decisions. The Shoot count must not matter: usage comes from counters.
func BenchmarkDecision(b *testing.B) {
	for _, seeds := range []int{100, 1000, 5000} {
		for _, shoots := range []int{10000, 100000} {
			b.Run(fmt.Sprintf("seeds=%d/shoots=%d", seeds, shoots), func(b *testing.B) {
				s := NewStore(Options{})
				s.Load(landscapegen.Landscape(seeds, shoots))
				shoot := landscapegen.NewShoot("new")
				strategies := []placement.Options{
					{Strategy: placement.SameRegion, NetworkMode: placement.Disjoint},
					{Strategy: placement.MinimalDistance, NetworkMode: placement.Disjoint},
				}
				lat := make([]time.Duration, 0, 1<<16)
				b.ReportAllocs()
				b.ResetTimer()
				i := 0
				for b.Loop() {
					start := time.Now()
					d := s.Place(shoot, strategies[i&1], "")
					if len(lat) < cap(lat) {
						lat = append(lat, time.Since(start))
					}
					if !d.Schedulable() {
						b.Fatal(d.Summary())
					}
					i++
				}
				b.StopTimer()
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
				b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
			})
		}
	}
}
