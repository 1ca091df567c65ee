package seedscale

import (
	"fmt"
	"testing"

	"github.com/seedwarden/seedwarden/internal/api"
)

// benchFleet is 50 sets in 5 regions (10 per region, 3 seeds of 30
// allocatable each, 25 used) and 1,000 pending Shoots spread over the
// regions: BENCHMARKS.md's fleet decision.
func benchFleet() []FleetSet {
	regions := []string{"eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-south-1"}
	var sets []fleetSet
	for i := range 50 {
		sets = append(sets, fleetSet{
			name: fmt.Sprintf("set%02d", i), n: 3, alloc: 30, used: 25, region: regions[i%len(regions)],
			priority: int32(i % 3), spec: spec(1, 50, utilization(80)),
		})
	}
	pending := make([]*api.Shoot, 1000)
	for i := range pending {
		pending[i] = shoot(fmt.Sprintf("p-%04d", i), regions[i%len(regions)], "")
	}
	return fleet(sets, pending, nil)
}

// BenchmarkDecideFleet is one combined decision for the fleet.
func BenchmarkDecideFleet(b *testing.B) {
	sets := benchFleet()
	b.ResetTimer()
	var together, alone int32
	for b.Loop() {
		together, alone = 0, 0
		for _, e := range DecideFleet(sets) {
			if e.Err != nil {
				b.Fatal(e.Err)
			}
			together += e.Desired - e.Current
			alone += e.Alone.Desired - e.Alone.Current
		}
	}
	// What deciding together saves: new seeds asked for in all.
	b.ReportMetric(float64(together), "seeds-together")
	b.ReportMetric(float64(alone), "seeds-alone")
}

// BenchmarkDecideEachSet is the per-set decision of the same fleet: each
// set's Recommend alone, as the controller did before.
func BenchmarkDecideEachSet(b *testing.B) {
	sets := benchFleet()
	b.ResetTimer()
	var grow int32
	for b.Loop() {
		grow = 0
		for _, s := range sets {
			rec, err := Recommend(s.Input)
			if err != nil {
				b.Fatal(err)
			}
			grow += rec.Desired - rec.Current
		}
	}
	b.ReportMetric(float64(grow), "seeds-alone")
}
