package plan

import (
	"testing"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/landscapegen"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// BenchmarkHeadroom is one headroom profile's recomputation, as the
// headroom runner does it every interval, at 1,000 seeds and 100,000
// Shoots loaded into a cache.Store: the default limit (1,000) and no
// effective limit (every free eligible slot counted), with Gardener's rule
// and with a scoring profile.
func BenchmarkHeadroom(b *testing.B) {
	store := cache.NewStore(cache.Options{})
	store.Load(landscapegen.Landscape(1000, 100_000))
	snap := store.Snapshot()
	like := landscapegen.NewShoot("like")
	scored := placement.Options{Scoring: &placement.Profile{Scorers: []placement.WeightedScorer{
		{Name: placement.ScoreLeastAllocated, Weight: 2}, {Name: placement.ScoreRegionDistance, Weight: 1},
	}}}
	for _, bc := range []struct {
		name  string
		opts  placement.Options
		limit int
	}{
		{"limit=1000", placement.Options{}, 1000},
		{"limit=1000000", placement.Options{}, 1_000_000},
		{"scored/limit=1000", scored, 1000},
		{"scored/limit=1000000", scored, 1_000_000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			n, err := Headroom(snap, like, bc.opts, bc.limit)
			if err != nil || n == 0 {
				b.Fatalf("headroom %d, %v", n, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Headroom(snap, like, bc.opts, bc.limit); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n), "shoots")
		})
	}
}
