package audit

import (
	"iter"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// seed is a ready aws seed in eu-west-1 with the given taints.
func seed(name string, taints ...string) *api.Seed {
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
	for _, t := range taints {
		s.Spec.Taints = append(s.Spec.Taints, api.SeedTaint{Key: t})
	}
	return s
}

// shoot is an aws Shoot on the seed (none: "") tolerating the keys given.
func shoot(namespace, name, seedName string, tolerations ...string) *api.Shoot {
	s := &api.Shoot{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: api.ShootSpec{
			CloudProfileName: ptr.To("aws"), Region: "eu-west-1",
			Provider: api.ShootProvider{Type: "aws", Workers: []api.Worker{{Name: "pool"}}},
		},
	}
	if seedName != "" {
		s.Spec.SeedName = ptr.To(seedName)
	}
	for _, t := range tolerations {
		s.Spec.Tolerations = append(s.Spec.Tolerations, api.Toleration{Key: t})
	}
	return s
}

func snapshot(seeds ...*api.Seed) *placement.Snapshot {
	snap := &placement.Snapshot{
		CloudProfiles: map[string]*placement.CloudProfile{"aws": placement.NewCloudProfile("aws", &api.CloudProfileSpec{Type: "aws"})},
	}
	for _, s := range seeds {
		snap.Seeds = append(snap.Seeds, placement.NewSeed(s))
	}
	slices.SortFunc(snap.Seeds, func(a, b *placement.Seed) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return snap
}

// reduced is what the watch cache holds of the Shoots.
func reduced(t testing.TB, shoots ...*api.Shoot) iter.Seq[*cache.ReducedShoot] {
	t.Helper()
	out := make([]*cache.ReducedShoot, len(shoots))
	for i, s := range shoots {
		r, err := cache.TransformShoot(s)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = r.(*cache.ReducedShoot)
	}
	return slices.Values(out)
}
