// Package landscapegen builds deterministic, realistic Gardener landscapes of
// any size for benchmarks, load tests and demos: seeds spread over providers,
// regions and zones, with taints, capacity and a region config, and Shoots
// spread over those seeds.
package landscapegen

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
)

// Regions and Providers the generated seeds use, round robin.
var (
	Regions   = []string{"eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-southeast-1", "westeurope", "northeurope", "eastus", "europe-west1", "us-central1"}
	Providers = []string{"aws", "azure", "gcp", "openstack"}
)

// Namespace of the generated project and Shoots.
const Namespace = "garden-dev"

func ptr[T any](v T) *T { return &v }

// Seed returns the i-th seed: ready, three zones (Prefer), allocatable 250,
// every seventh one tainted as protected.
func Seed(i int) *api.Seed { return seedWithCapacity(i, 250) }

func seedWithCapacity(i int, allocatable int64) *api.Seed {
	p := Providers[i%len(Providers)]
	r := Regions[(i/len(Providers))%len(Regions)]
	s := &api.Seed{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Seed"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("seed-%05d", i), Labels: map[string]string{"environment": []string{"prod", "dev"}[i%2]}, ResourceVersion: "1"},
		Spec: api.SeedSpec{
			Provider: api.SeedProvider{Type: p, Region: r, Zones: []string{r + "-a", r + "-b", r + "-c"}},
			Networks: api.SeedNetworks{Nodes: ptr("10.250.0.0/16"), Pods: "100.96.0.0/11", Services: "100.64.0.0/13"},
			Settings: &api.SeedSettings{ZoneSelection: &api.SeedSettingZoneSelection{Mode: api.ZoneSelectionPrefer}},
		},
		Status: api.SeedStatus{
			LastOperation: &api.LastOperation{Type: "Reconcile", State: "Succeeded"},
			Conditions:    []api.Condition{{Type: api.ConditionGardenletReady, Status: api.ConditionTrue}},
			Allocatable:   corev1.ResourceList{api.ResourceShoots: *resource.NewQuantity(allocatable, resource.DecimalSI)},
		},
	}
	if i%7 == 0 {
		s.Spec.Taints = []api.SeedTaint{{Key: "seed.gardener.cloud/protected"}}
	}
	return s
}

// CloudProfile "aws" lets seeds of aws and gcp host aws Shoots.
func CloudProfile() *api.CloudProfile {
	return &api.CloudProfile{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "CloudProfile"},
		ObjectMeta: metav1.ObjectMeta{Name: "aws", ResourceVersion: "1"},
		Spec:       api.CloudProfileSpec{Type: "aws", SeedSelector: &api.SeedSelector{ProviderTypes: []string{"aws", "gcp"}}},
	}
}

// Project "dev" owns Namespace.
func Project() *api.Project {
	return &api.Project{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Project"},
		ObjectMeta: metav1.ObjectMeta{Name: "dev", ResourceVersion: "1"},
		Spec:       api.ProjectSpec{Namespace: ptr(Namespace)},
	}
}

// RegionConfig is a full distance table between Regions for profile "aws".
func RegionConfig() *corev1.ConfigMap {
	data := map[string]string{}
	for _, from := range Regions {
		text := ""
		for j, to := range Regions {
			text += fmt.Sprintf("%s: %d\n", to, (j*7)%40)
		}
		data[from] = text
	}
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "region-config", Namespace: "garden", ResourceVersion: "1",
			Labels:      map[string]string{api.LabelSchedulingPurpose: api.LabelSchedulingPurposeRegionConfig},
			Annotations: map[string]string{api.AnnotationSchedulingCloudProfiles: "aws"},
		},
		Data: data,
	}
}

// ExistingShoot returns the i-th Shoot already placed on one of seeds seeds
// (every 50th one migrating to the next seed).
func ExistingShoot(i, seeds int) *api.Shoot {
	sh := NewShoot(fmt.Sprintf("shoot-%06d", i))
	sh.ResourceVersion = "1"
	seed := fmt.Sprintf("seed-%05d", i%seeds)
	sh.Spec.SeedName = &seed
	if i%50 == 0 && seeds > 1 {
		sh.Status.SeedName = ptr(fmt.Sprintf("seed-%05d", (i+1)%seeds))
	}
	return sh
}

// NewShoot is a Shoot to place: aws in eu-west-1 with networking, two zoned
// worker pools and a toleration for protected seeds.
func NewShoot(name string) *api.Shoot {
	return &api.Shoot{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Shoot"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace},
		Spec: api.ShootSpec{
			CloudProfile: &api.CloudProfileReference{Kind: api.KindCloudProfile, Name: "aws"},
			Region:       "eu-west-1",
			Provider: api.ShootProvider{Type: "aws", Workers: []api.Worker{
				{Name: "pool-a", Zones: []string{"eu-west-1-a", "eu-west-1-b"}},
				{Name: "pool-b", Zones: []string{"eu-west-1-c"}},
			}},
			Networking:  &api.Networking{Type: ptr("calico"), Nodes: ptr("10.180.0.0/16"), Pods: ptr("10.181.0.0/16"), Services: ptr("10.182.0.0/16"), IPFamilies: []string{api.IPFamilyIPv4}},
			Purpose:     ptr("production"),
			Tolerations: []api.Toleration{{Key: "seed.gardener.cloud/protected"}},
		},
	}
}

// Landscape returns the objects of a landscape with the given numbers of
// seeds and existing Shoots, ready for cache.Store.Load. Seeds get at least
// twice the room their share of Shoots needs, so new Shoots still fit.
func Landscape(seeds, shoots int) []client.Object {
	objs := []client.Object{CloudProfile(), Project(), RegionConfig()}
	capacity := max(int64(250), int64(2*shoots/max(seeds, 1)+50))
	for i := 0; i < seeds; i++ {
		objs = append(objs, seedWithCapacity(i, capacity))
	}
	for i := 0; i < shoots; i++ {
		objs = append(objs, ExistingShoot(i, seeds))
	}
	return objs
}
