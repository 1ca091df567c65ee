package seedscale

import (
	"fmt"
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// setLabel marks the seeds of the test set, as its selector would.
const setLabel = "set"

// seed is a ready aws seed in region with allocatable alloc (none when
// alloc < 0); member seeds carry the set's label.
func seed(name, region string, alloc int64, member bool, mods ...func(*api.Seed)) *api.Seed {
	s := &api.Seed{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Seed"},
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1", Labels: map[string]string{}},
		Spec: api.SeedSpec{
			Provider: api.SeedProvider{Type: "aws", Region: region},
			Networks: api.SeedNetworks{Pods: "100.96.0.0/11", Services: "100.64.0.0/13"},
		},
		Status: api.SeedStatus{
			LastOperation: &api.LastOperation{Type: "Reconcile", State: "Succeeded"},
			Conditions:    []api.Condition{{Type: api.ConditionGardenletReady, Status: api.ConditionTrue}},
		},
	}
	if member {
		s.Labels[setLabel] = "true"
	}
	if alloc >= 0 {
		s.Status.Allocatable = corev1.ResourceList{api.ResourceShoots: *resource.NewQuantity(alloc, resource.DecimalSI)}
	}
	for _, m := range mods {
		m(s)
	}
	return s
}

func notReady(s *api.Seed) { s.Status.Conditions = nil }

func tainted(s *api.Seed) {
	s.Spec.Taints = []api.SeedTaint{{Key: "dedicated"}}
}

// shoot is an aws Shoot in region of namespace garden-dev on seed
// (awaiting one when seed is empty).
func shoot(name, region, seed string) *api.Shoot {
	s := &api.Shoot{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Shoot"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "garden-dev", ResourceVersion: "1"},
		Spec: api.ShootSpec{
			CloudProfile: &api.CloudProfileReference{Kind: api.KindCloudProfile, Name: "aws"},
			Region:       region,
			Provider:     api.ShootProvider{Type: "aws", Workers: []api.Worker{{Name: "pool"}}},
		},
	}
	if seed != "" {
		s.Spec.SeedName = ptr.To(seed)
		s.Status.SeedName = ptr.To(seed)
	}
	return s
}

// shoots are n Shoots named prefix-i in region on seed.
func shoots(prefix, region, seed string, n int) []*api.Shoot {
	out := make([]*api.Shoot, n)
	for i := range out {
		out[i] = shoot(fmt.Sprintf("%s-%03d", prefix, i), region, seed)
	}
	return out
}

// world is a landscape with a set: its seeds carry setLabel.
type world struct {
	seeds   []*api.Seed
	shoots  []*api.Shoot
	pending []*api.Shoot
	model   *api.Seed
	// replicas is the scale's spec.replicas; 0 means the set's seeds.
	replicas  int32
	protected map[string]bool
	// extra are more objects of the landscape (Projects).
	extra []client.Object
}

// input builds the recommendation's input for spec.
func (w *world) input(spec *autoscalingapi.SeedAutoscalerSpec) Input {
	store := cache.NewStore(cache.Options{})
	objs := []client.Object{
		&api.CloudProfile{
			TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "CloudProfile"},
			ObjectMeta: metav1.ObjectMeta{Name: "aws", ResourceVersion: "1"},
			Spec:       api.CloudProfileSpec{Type: "aws"},
		},
		&api.Project{
			TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Project"},
			ObjectMeta: metav1.ObjectMeta{Name: "dev", ResourceVersion: "1"},
			Spec:       api.ProjectSpec{Namespace: ptr.To("garden-dev")},
		},
	}
	set := Set{Name: "garden/set", Prefix: "set", Protected: w.protected, Model: w.model, ModelSource: "the test's model"}
	var next int32
	for _, s := range w.seeds {
		objs = append(objs, s)
		if s.Labels[setLabel] == "true" {
			set.Seeds = append(set.Seeds, s.Name)
			next++
		}
	}
	for _, s := range w.shoots {
		objs = append(objs, s)
	}
	objs = append(objs, w.extra...)
	store.Load(objs)
	set.NextOrdinal = next + 100
	set.Replicas = w.replicas
	if set.Replicas == 0 {
		set.Replicas = int32(len(set.Seeds))
	}
	return Input{
		Snapshot: store.Snapshot(), Pending: w.pending, Set: set, Spec: spec,
		Options: placement.Options{Strategy: placement.SameRegion},
	}
}

// spec is a SeedAutoscalerSpec with bounds and metrics.
func spec(minR, maxR int32, metrics ...autoscalingapi.MetricSpec) *autoscalingapi.SeedAutoscalerSpec {
	return &autoscalingapi.SeedAutoscalerSpec{MinReplicas: ptr.To(minR), MaxReplicas: maxR, Metrics: metrics}
}

func utilization(pct int32) autoscalingapi.MetricSpec {
	return autoscalingapi.MetricSpec{Type: autoscalingapi.ResourceMetricSourceType, Resource: &autoscalingapi.ResourceMetricSource{
		Name: "shoots", Target: autoscalingapi.MetricTarget{Type: autoscalingapi.UtilizationMetricType, AverageUtilization: ptr.To(pct)},
	}}
}

func averageValue(v int32) autoscalingapi.MetricSpec {
	return autoscalingapi.MetricSpec{Type: autoscalingapi.ResourceMetricSourceType, Resource: &autoscalingapi.ResourceMetricSource{
		Name: "shoots", Target: autoscalingapi.MetricTarget{Type: autoscalingapi.AverageValueMetricType, AverageValue: ptr.To(v)},
	}}
}

func headroom(profile string, n int32) autoscalingapi.MetricSpec {
	return autoscalingapi.MetricSpec{Type: autoscalingapi.HeadroomMetricSourceType, Headroom: &autoscalingapi.HeadroomMetricSource{
		Profile: profile, MinShoots: n,
	}}
}

// generated is a random landscape: a set of 1-6 seeds in eu-west-1 with
// allocatable 5-20 and 0-allocatable Shoots each, 0-3 other seeds, and
// 0-30 pending Shoots.
func generated(r *rand.Rand) *world {
	w := &world{model: seed("model", "eu-west-1", int64(5+r.IntN(16)), true)}
	for i := range 1 + r.IntN(6) {
		alloc := int64(5 + r.IntN(16))
		s := seed(fmt.Sprintf("set-%d", i), "eu-west-1", alloc, true)
		w.seeds = append(w.seeds, s)
		w.shoots = append(w.shoots, shoots(s.Name, "eu-west-1", s.Name, r.IntN(int(alloc)+1))...)
	}
	for i := range r.IntN(4) {
		alloc := int64(5 + r.IntN(16))
		s := seed(fmt.Sprintf("other-%d", i), "eu-west-1", alloc, false)
		w.seeds = append(w.seeds, s)
		w.shoots = append(w.shoots, shoots(s.Name, "eu-west-1", s.Name, r.IntN(int(alloc)+1))...)
	}
	w.pending = shoots("pending", "eu-west-1", "", r.IntN(31))
	return w
}
