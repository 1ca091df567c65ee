package placement

import (
	"fmt"
	"testing"

	"github.com/seedwarden/seedwarden/internal/landscapegen"
)

// BenchmarkDecideUnschedulable is a Shoot no seed takes (a region no seed
// is in, SameRegion): the fast path finds none and the decision is replayed
// with every seed's reason and reason code (BENCHMARKS.md §29).
func BenchmarkDecideUnschedulable(b *testing.B) {
	shoot := landscapegen.NewShoot("nowhere")
	shoot.Spec.Region = "nowhere-1"
	for _, n := range []int{100, 1000} {
		snap := benchSnapshot(n)
		b.Run(fmt.Sprintf("seeds=%d", n), func(b *testing.B) {
			opts := Options{Strategy: SameRegion, NetworkMode: Disjoint}
			b.ReportAllocs()
			for b.Loop() {
				if d := Decide(snap, shoot, opts); d.Schedulable() {
					b.Fatal(d.Seed)
				}
			}
		})
	}
}
