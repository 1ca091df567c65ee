package seedscale

import (
	"encoding/json"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/landscapegen"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/plan"
)

// BenchmarkRecommend is one SeedAutoscaler's recommendation, as the
// controller computes it every sync, at 1,000 seeds and 100,000 Shoots:
// the set is the 25 aws seeds of eu-west-1, 200 Shoots are pending, and a
// Headroom target of 8,000 more Shoots asks for a few more seeds. The
// baseline, in the same run, is one simulation of the landscape with the
// pending Shoots placed and the headroom counted: what each replica count
// the recommendation tries costs (here it tries the floor, 25, to 28, plus
// the landscape as it is and the final count: six).
func BenchmarkRecommend(b *testing.B) {
	store := cache.NewStore(cache.Options{})
	store.Load(landscapegen.Landscape(1000, 100_000))
	snap := store.Snapshot()
	like := landscapegen.NewShoot("like")
	var set Set
	for _, s := range snap.Seeds {
		if s.Object.Spec.Provider.Type == "aws" && s.Object.Spec.Provider.Region == "eu-west-1" {
			set.Seeds = append(set.Seeds, s.Name)
			set.Model = s.Object
		}
	}
	set.Name, set.Prefix, set.Replicas, set.NextOrdinal = "garden/aws-eu-west-1", "aws-eu-west-1", int32(len(set.Seeds)), 0
	pending := make([]*api.Shoot, 200)
	for i := range pending {
		pending[i] = landscapegen.NewShoot(fmt.Sprintf("pending-%03d", i))
	}
	in := Input{
		Snapshot: snap, Pending: pending, Set: set, Profiles: map[string]*api.Shoot{"small": like},
		Spec: &autoscalingapi.SeedAutoscalerSpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 60, Metrics: []autoscalingapi.MetricSpec{
			headroom("small", 8000), utilization(80),
		}},
	}
	rec, err := Recommend(in)
	if err != nil || rec.Desired <= rec.Current {
		b.Fatalf("recommendation %+v, %v", rec, err)
	}
	b.Run("baseline=one-simulation", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, view, err := plan.Simulate(snap, nil, placement.Options{}, []plan.Operation{plan.PlaceShoots{Shoots: pending}})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := plan.Headroom(view.Snapshot(), like, placement.Options{}, 8000); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The same at a set short up to maxReplicas 200 (a Headroom target no
	// count reaches): the fast scan's probes and bisection against the
	// plain scan's every count.
	short := in
	short.Spec = in.Spec.DeepCopy()
	short.Spec.MaxReplicas = 200
	short.Spec.Metrics = []autoscalingapi.MetricSpec{headroom("small", 100_000)}
	for _, bc := range []struct {
		name string
		in   Input
		scan func(*recommender) error
	}{
		{"recommend", in, (*recommender).scan},
		{"recommend/plain", in, (*recommender).scanPlain},
		{"short-to-200", short, (*recommender).scan},
		{"short-to-200/plain", short, (*recommender).scanPlain},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := recommend(bc.in, bc.scan); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRecommendMetrics is one sync's recommendation per number of
// metrics, on BenchmarkRecommend's landscape (1,000 seeds, 100,000 Shoots,
// a set of 25, 200 pending): n Headroom metrics, each with an inline Shoot
// template (the generated one, under its own name) and its own target, from
// 8,000 more Shoots up in steps of 100, so that each metric bisects to its
// own count. The baseline, in the same run, is one metric. What it shows:
// how the cost grows with spec.metrics, which autoscalingapi.MaxMetrics
// bounds (recommend, not Recommend: 32 is past the bound, measured to show
// what the bound saves).
func BenchmarkRecommendMetrics(b *testing.B) {
	store := cache.NewStore(cache.Options{})
	store.Load(landscapegen.Landscape(1000, 100_000))
	snap := store.Snapshot()
	var set Set
	for _, s := range snap.Seeds {
		if s.Object.Spec.Provider.Type == "aws" && s.Object.Spec.Provider.Region == "eu-west-1" {
			set.Seeds = append(set.Seeds, s.Name)
			set.Model = s.Object
		}
	}
	set.Name, set.Prefix, set.Replicas = "garden/aws-eu-west-1", "aws-eu-west-1", int32(len(set.Seeds))
	pending := make([]*api.Shoot, 200)
	for i := range pending {
		pending[i] = landscapegen.NewShoot(fmt.Sprintf("pending-%03d", i))
	}
	decode := func(raw []byte) (*api.Shoot, error) {
		s := &api.Shoot{}
		return s, json.Unmarshal(raw, s)
	}
	for _, n := range []int{1, 2, 4, 8, 16, 32} {
		metrics := make([]autoscalingapi.MetricSpec, n)
		for i := range metrics {
			raw, err := json.Marshal(landscapegen.NewShoot(fmt.Sprintf("like-%02d", i)))
			if err != nil {
				b.Fatal(err)
			}
			metrics[i] = autoscalingapi.MetricSpec{Type: autoscalingapi.HeadroomMetricSourceType, Headroom: &autoscalingapi.HeadroomMetricSource{
				Shoot: &runtime.RawExtension{Raw: raw}, MinShoots: int32(8000 + 100*i),
			}}
		}
		in := Input{
			Snapshot: snap, Pending: pending, Set: set, DecodeShoot: decode,
			Spec: &autoscalingapi.SeedAutoscalerSpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 60, Metrics: metrics},
		}
		var steps int
		in.Stop = func() error { steps++; return nil }
		if _, err := recommend(in, (*recommender).scan); err != nil {
			b.Fatal(err)
		}
		in.Stop = nil
		b.Run(fmt.Sprintf("metrics=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := recommend(in, (*recommender).scan); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(steps), "steps/op")
		})
	}
}
