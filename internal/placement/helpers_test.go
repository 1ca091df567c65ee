package placement

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

// readySeed is a usable aws seed in eu-west-1 with disjoint 10.x networks.
func readySeed(name string, mods ...func(*api.Seed)) *api.Seed {
	s := &api.Seed{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: api.SeedSpec{
			Provider: api.SeedProvider{Type: "aws", Region: "eu-west-1"},
			Networks: api.SeedNetworks{Pods: "10.200.0.0/16", Services: "10.201.0.0/16"},
		},
		Status: api.SeedStatus{
			LastOperation: &api.LastOperation{State: "Succeeded"},
			Conditions:    []api.Condition{{Type: api.ConditionGardenletReady, Status: api.ConditionTrue}},
		},
	}
	for _, m := range mods {
		m(s)
	}
	return s
}

func withRegion(t, r string) func(*api.Seed) {
	return func(s *api.Seed) { s.Spec.Provider.Type, s.Spec.Provider.Region = t, r }
}
func withZones(mode string, zones ...string) func(*api.Seed) {
	return func(s *api.Seed) {
		s.Spec.Provider.Zones = zones
		if mode != "" {
			s.Spec.Settings = &api.SeedSettings{ZoneSelection: &api.SeedSettingZoneSelection{Mode: mode}}
		}
	}
}
func withAllocatable(n int64) func(*api.Seed) {
	return func(s *api.Seed) {
		s.Status.Allocatable = corev1.ResourceList{api.ResourceShoots: *resource.NewQuantity(n, resource.DecimalSI)}
	}
}
func withLabels(l map[string]string) func(*api.Seed) {
	return func(s *api.Seed) { s.Labels = l }
}
func withTaints(t ...api.SeedTaint) func(*api.Seed) {
	return func(s *api.Seed) { s.Spec.Taints = t }
}

// basicShoot is an aws Shoot in eu-west-1 with a worker pool and no networking.
func basicShoot(mods ...func(*api.Shoot)) *api.Shoot {
	sh := &api.Shoot{
		ObjectMeta: metav1.ObjectMeta{Name: "shoot", Namespace: "garden-proj"},
		Spec: api.ShootSpec{
			CloudProfileName: ptr.To("aws"),
			Region:           "eu-west-1",
			Provider:         api.ShootProvider{Type: "aws", Workers: []api.Worker{{Name: "pool"}}},
		},
	}
	for _, m := range mods {
		m(sh)
	}
	return sh
}

// snapshotOf builds a Snapshot with one "aws" CloudProfile, project "proj" for
// namespace garden-proj, and the given usage.
func snapshotOf(usage map[string]int64, seeds ...*api.Seed) *Snapshot {
	snap := &Snapshot{
		CloudProfiles: map[string]*CloudProfile{"aws": NewCloudProfile("aws", &api.CloudProfileSpec{Type: "aws"})},
		Projects:      map[string]*Project{"garden-proj": {Name: "proj"}},
		Usage:         func(s *Seed) int64 { return usage[s.Name] },
	}
	for _, s := range seeds {
		snap.Seeds = append(snap.Seeds, NewSeed(s))
	}
	return snap
}

func names(seeds []*Seed) []string {
	out := []string{}
	for _, s := range seeds {
		out = append(out, s.Name)
	}
	return out
}

// testPool is a pool for tests: projects by name, seeds by one label
// "key=value"; projectLabel, when set, also selects projects by label.
type testPool struct {
	name         string
	mode         PoolMode
	projects     []string
	projectLabel string
	seedLabel    string
}

// testPolicies are policies with the given pools (NewPool must accept them).
func testPolicies(t testing.TB, pools ...testPool) *Policies {
	t.Helper()
	p := &Policies{}
	for _, tp := range pools {
		var projSel *metav1.LabelSelector
		if tp.projectLabel != "" {
			projSel = labelSelector(tp.projectLabel)
		}
		pool, err := NewPool(tp.name, tp.mode, tp.projects, projSel, labelSelector(tp.seedLabel))
		if err != nil {
			t.Fatal(err)
		}
		p.Pools = append(p.Pools, pool)
	}
	return p
}

func labelSelector(kv string) *metav1.LabelSelector {
	k, v, _ := strings.Cut(kv, "=")
	return &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
}

func withAnnotations(a map[string]string) func(*api.Seed) {
	return func(s *api.Seed) { s.Annotations = a }
}
