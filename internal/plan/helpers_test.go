package plan

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// seed is a ready aws seed in region with backup, allocatable alloc (none
// when alloc < 0) and networks away from the test Shoots'.
func seed(name, region string, alloc int64, mods ...func(*api.Seed)) *api.Seed {
	s := &api.Seed{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Seed"},
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec: api.SeedSpec{
			Provider: api.SeedProvider{Type: "aws", Region: region},
			Networks: api.SeedNetworks{Pods: "100.96.0.0/11", Services: "100.64.0.0/13"},
			Backup:   &api.SeedBackup{Provider: "aws"},
		},
		Status: api.SeedStatus{
			LastOperation: &api.LastOperation{Type: "Reconcile", State: "Succeeded"},
			Conditions: []api.Condition{
				{Type: api.ConditionGardenletReady, Status: api.ConditionTrue},
				{Type: api.ConditionBackupBucketsReady, Status: api.ConditionTrue},
			},
		},
	}
	if alloc >= 0 {
		s.Status.Allocatable = corev1.ResourceList{api.ResourceShoots: *resource.NewQuantity(alloc, resource.DecimalSI)}
	}
	for _, m := range mods {
		m(s)
	}
	return s
}

func noBackup(s *api.Seed) { s.Spec.Backup = nil }

func tainted(s *api.Seed) { s.Spec.Taints = []api.SeedTaint{{Key: "dedicated"}} }

// shoot is an aws Shoot in eu-west-1 of namespace garden-dev, on seed
// (unscheduled when seed is empty).
func shoot(name, seed string) *api.Shoot {
	s := &api.Shoot{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Shoot"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "garden-dev", ResourceVersion: "1"},
		Spec: api.ShootSpec{
			CloudProfile: &api.CloudProfileReference{Kind: api.KindCloudProfile, Name: "aws"},
			Region:       "eu-west-1",
			Provider:     api.ShootProvider{Type: "aws", Workers: []api.Worker{{Name: "pool"}}},
		},
	}
	if seed != "" {
		s.Spec.SeedName = ptr.To(seed)
		s.Status.SeedName = ptr.To(seed)
	}
	return s
}

// shootsOn returns n Shoots named prefix-i on seed.
func shootsOn(prefix, seed string, n int) []*api.Shoot {
	out := make([]*api.Shoot, n)
	for i := range out {
		out[i] = shoot(fmt.Sprintf("%s-%02d", prefix, i), seed)
	}
	return out
}

func cloudProfile() *api.CloudProfile {
	return &api.CloudProfile{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "CloudProfile"},
		ObjectMeta: metav1.ObjectMeta{Name: "aws", ResourceVersion: "1"},
		Spec:       api.CloudProfileSpec{Type: "aws"},
	}
}

// landscape loads seeds, shoots and the aws profile into a Store, as the
// command does with a landscape file, and returns its snapshot.
func landscape(seeds []*api.Seed, shoots []*api.Shoot) *placement.Snapshot {
	return landscapeWith(seeds, shoots)
}

// landscapeWith is landscape with more objects loaded (SeedDrains).
func landscapeWith(seeds []*api.Seed, shoots []*api.Shoot, more ...client.Object) *placement.Snapshot {
	store := cache.NewStore(cache.Options{})
	objs := []client.Object{cloudProfile(), &api.Project{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Project"},
		ObjectMeta: metav1.ObjectMeta{Name: "dev", ResourceVersion: "1"},
		Spec:       api.ProjectSpec{Namespace: ptr.To("garden-dev")},
	}}
	for _, s := range seeds {
		objs = append(objs, s)
	}
	for _, s := range shoots {
		objs = append(objs, s)
	}
	store.Load(append(objs, more...))
	return store.Snapshot()
}

var sameRegion = placement.Options{Strategy: placement.SameRegion}

// moves renders placed Shoots as "shoot: from -> to".
func moves(placed []Placed) []string {
	out := make([]string, len(placed))
	for i, p := range placed {
		out[i] = fmt.Sprintf("%s: %s -> %s", p.Shoot, p.From, p.To)
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }

func nowTime() *metav1.Time { t := metav1.Now(); return &t }
