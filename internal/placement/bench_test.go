package placement

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/seedwarden/seedwarden/internal/api"
)

var benchRegions = []string{"eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-southeast-1", "westeurope", "northeurope", "eastus", "europe-west1", "us-central1"}
var benchProviders = []string{"aws", "azure", "gcp", "openstack"}

// BenchLandscape builds a snapshot of n seeds spread over providers, regions
// and zones, with taints, capacity and a region config, so every step does
// real work. Usage comes from a map, as the cache's counters would give it.
func BenchLandscape(n int) *Snapshot {
	var seeds []*api.Seed
	usage := map[string]int64{}
	for i := 0; i < n; i++ {
		p := benchProviders[i%len(benchProviders)]
		r := benchRegions[(i/len(benchProviders))%len(benchRegions)]
		name := fmt.Sprintf("seed-%05d", i)
		mods := []func(*api.Seed){
			withRegion(p, r),
			withZones(api.ZoneSelectionPrefer, r+"-a", r+"-b", r+"-c"),
			withAllocatable(200),
			func(s *api.Seed) {
				s.Spec.Networks = api.SeedNetworks{Nodes: ptr("10.250.0.0/16"), Pods: "100.96.0.0/11", Services: "100.64.0.0/13"}
				s.Labels = map[string]string{"environment": []string{"prod", "dev"}[i%2]}
			},
		}
		if i%7 == 0 {
			mods = append(mods, withTaints(api.SeedTaint{Key: "seed.gardener.cloud/protected"}))
		}
		seeds = append(seeds, readySeed(name, mods...))
		usage[name] = int64(i % 150)
	}
	snap := snapshotOf(usage, seeds...)
	snap.CloudProfiles["aws"] = NewCloudProfile("aws", &api.CloudProfileSpec{Type: "aws", SeedSelector: &api.SeedSelector{ProviderTypes: []string{"aws", "gcp"}}})
	data := map[string]string{}
	for _, from := range benchRegions {
		text := ""
		for j, to := range benchRegions {
			text += fmt.Sprintf("%s: %d\n", to, (j*7)%40)
		}
		data[from] = text
	}
	snap.RegionConfigs = []*RegionConfig{NewRegionConfig(&corev1.ConfigMap{Data: data}), NewRegionConfig(regionConfigMap("region-config", "aws", data))}
	return snap
}

// BenchShoot is a realistic Shoot: networking, worker zones, tolerations.
func BenchShoot() *api.Shoot {
	return basicShoot(func(s *api.Shoot) {
		s.Spec.Networking = &api.Networking{Nodes: ptr("10.180.0.0/16"), Pods: ptr("10.181.0.0/16"), Services: ptr("10.182.0.0/16"), IPFamilies: []string{"IPv4"}}
		s.Spec.Provider.Workers = []api.Worker{{Name: "a", Zones: []string{"eu-west-1-a", "eu-west-1-b"}}}
		s.Spec.Tolerations = []api.Toleration{{Key: "seed.gardener.cloud/protected"}}
	})
}

func BenchmarkDecide(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		snap := BenchLandscape(n)
		shoot := BenchShoot()
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
