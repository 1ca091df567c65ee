package cache

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
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
				benchPlace(b, seeds, shoots, nil)
			})
		}
	}
}

// BenchmarkDecisionScored is BenchmarkDecision under scoring profiles:
// "spread" (LeastAllocated and ProjectSpread) keeps the strategy filter;
// "distance" adds RegionDistance, which turns the strategy into a
// preference, so every seed steps 1-10 keep is ranked.
func BenchmarkDecisionScored(b *testing.B) {
	profiles := []struct {
		name    string
		profile *placement.Profile
	}{
		{"spread", &placement.Profile{Scorers: []placement.WeightedScorer{
			{Name: placement.ScoreLeastAllocated, Weight: 2}, {Name: placement.ScoreProjectSpread, Weight: 1},
		}}},
		{"distance", &placement.Profile{Scorers: []placement.WeightedScorer{
			{Name: placement.ScoreRegionDistance, Weight: 3}, {Name: placement.ScoreLeastAllocated, Weight: 2}, {Name: placement.ScoreProjectSpread, Weight: 1},
		}}},
	}
	for _, p := range profiles {
		for _, seeds := range []int{100, 1000, 5000} {
			b.Run(fmt.Sprintf("profile=%s/seeds=%d/shoots=10000", p.name, seeds), func(b *testing.B) {
				benchPlace(b, seeds, 10000, p.profile)
			})
		}
	}
}

// BenchmarkDecisionPolicies is BenchmarkDecision (10,000 Shoots) with every
// placement policy on against the same landscape with none (issue 39: at
// most 1.2x). Every tenth seed is avoided, every fourth in the Shoot's
// project's Preferred pool, every fiftieth in a Required pool of another
// project; a soft limit of 80 % and 2 kept seats on every seed.
func BenchmarkDecisionPolicies(b *testing.B) {
	pol := benchPolicies(b)
	for _, seeds := range []int{1000, 5000} {
		objs := landscapegen.Landscape(seeds, 10000)
		for _, o := range objs {
			sd, ok := o.(*api.Seed)
			if !ok {
				continue
			}
			i, _ := strconv.Atoi(strings.TrimPrefix(sd.Name, "seed-"))
			sd.Labels = maps.Clone(sd.Labels)
			switch {
			case i%50 == 0:
				sd.Labels["pool"] = "private"
			case i%4 == 0:
				sd.Labels["pool"] = "gold"
			}
			if i%10 == 0 {
				sd.Annotations = map[string]string{api.AnnotationSeedAvoid: "being retired"}
			}
		}
		for _, p := range []struct {
			name string
			pol  *placement.Policies
		}{{"off", nil}, {"all", pol}} {
			b.Run(fmt.Sprintf("seeds=%d/shoots=10000/policies=%s", seeds, p.name), func(b *testing.B) {
				benchPlaceOn(b, objs, placement.Options{Policies: p.pol})
			})
		}
	}
}

func benchPolicies(b *testing.B) *placement.Policies {
	pool := func(name string, mode placement.PoolMode, project, seeds string) placement.Pool {
		p, err := placement.NewPool(name, mode, []string{project}, nil, &metav1.LabelSelector{MatchLabels: map[string]string{"pool": seeds}})
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	return &placement.Policies{SoftLimitPercent: 80, KeptSeats: 2, Pools: []placement.Pool{
		pool("gold", placement.PoolPreferred, "dev", "gold"),
		pool("private", placement.PoolRequired, "other", "private"),
	}}
}

// BenchmarkDecisionFixedHosts is BenchmarkDecision's 1,000-seed landscape
// with 4,000 more seeds in regions of their own (no zone, region or
// distance the Shoot can use): what seeds that cannot host the Shoot cost
// its decision. In BenchmarkDecision the seeds that can host it grow with
// the landscape; here they stay the same.
func BenchmarkDecisionFixedHosts(b *testing.B) {
	for _, extra := range []int{0, 4000} {
		b.Run(fmt.Sprintf("seeds=%d/shoots=10000", 1000+extra), func(b *testing.B) {
			objs := landscapegen.Landscape(1000, 10000)
			for i := range extra {
				sd := landscapegen.Seed(1000 + i)
				region := fmt.Sprintf("far-%d", i%40)
				sd.Spec.Provider.Region = region
				sd.Spec.Provider.Zones = []string{region + "-a", region + "-b", region + "-c"}
				objs = append(objs, sd)
			}
			benchPlaceOn(b, objs, placement.Options{})
		})
	}
}

// benchPlace places landscapegen's new Shoot again and again on a landscape
// of seeds and shoots, alternating the strategies, under profile (nil:
// Gardener's rule), and reports the p50 and p99 of the decisions.
func benchPlace(b *testing.B, seeds, shoots int, profile *placement.Profile) {
	benchPlaceOn(b, landscapegen.Landscape(seeds, shoots), placement.Options{Scoring: profile})
}

// benchPlaceOn is benchPlace on the landscape objs, with the profile and
// policies of with.
func benchPlaceOn(b *testing.B, objs []client.Object, with placement.Options) {
	s := NewStore(Options{})
	s.Load(objs)
	shoot := landscapegen.NewShoot("new")
	strategies := []placement.Options{
		{Strategy: placement.SameRegion, NetworkMode: placement.Disjoint, Scoring: with.Scoring, Policies: with.Policies},
		{Strategy: placement.MinimalDistance, NetworkMode: placement.Disjoint, Scoring: with.Scoring, Policies: with.Policies},
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
}

// BenchmarkDecisionListAll is the baseline: the reference scheduler's way of
// getting usage, recounting every Shoot for each decision (Gardener lists all
// Shoots per decision), then the same Decide. Compare with BenchmarkDecision
// at the same sizes: ours must stay flat in the Shoot count.
func BenchmarkDecisionListAll(b *testing.B) {
	for _, shoots := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("seeds=100/shoots=%d", shoots), func(b *testing.B) {
			s := NewStore(Options{})
			objs := landscapegen.Landscape(100, shoots)
			s.Load(objs)
			var all []*api.Shoot
			for _, o := range objs {
				if sh, ok := o.(*api.Shoot); ok {
					all = append(all, sh)
				}
			}
			shoot := landscapegen.NewShoot("new")
			opts := placement.Options{Strategy: placement.MinimalDistance, NetworkMode: placement.Disjoint}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				usage := map[string]int64{}
				for _, sh := range all {
					spec, status := placement.ChargedSeeds(sh)
					if spec != "" {
						usage[spec]++
					}
					if status != "" {
						usage[status]++
					}
				}
				snap := *s.Snapshot()
				snap.Usage = func(sd *placement.Seed) int64 { return usage[sd.Name] }
				if d := placement.Decide(&snap, shoot, opts); !d.Schedulable() {
					b.Fatal(d.Summary())
				}
			}
		})
	}
}
