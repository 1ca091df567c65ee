package cache

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// seed returns a Seed that passes every placement filter for shoot(): ready,
// visible, aws in eu-west-1 with three zones. alloc < 0 means no allocatable.
func seed(name string, alloc int64) *api.Seed {
	s := &api.Seed{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Seed"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: api.SeedSpec{
			Provider: api.SeedProvider{Type: "aws", Region: "eu-west-1", Zones: []string{"a", "b", "c"}},
			Networks: api.SeedNetworks{Pods: "10.1.0.0/16", Services: "10.2.0.0/16"},
		},
		Status: api.SeedStatus{
			LastOperation: &api.LastOperation{State: "Succeeded", Type: "Reconcile"},
			Conditions:    []api.Condition{{Type: api.ConditionGardenletReady, Status: api.ConditionTrue}},
		},
	}
	if alloc >= 0 {
		s.Status.Allocatable = corev1.ResourceList{api.ResourceShoots: *resource.NewQuantity(alloc, resource.DecimalSI)}
	}
	return s
}

// shoot returns a Shoot in namespace ns; specSeed/statusSeed "" mean unset.
func shoot(ns, name, specSeed, statusSeed string) *api.Shoot {
	s := &api.Shoot{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Shoot"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: api.ShootSpec{
			CloudProfile: &api.CloudProfileReference{Kind: api.KindCloudProfile, Name: "aws"},
			Region:       "eu-west-1",
			Provider:     api.ShootProvider{Type: "aws", Workers: []api.Worker{{Name: "w", Zones: []string{"a"}}}},
		},
	}
	if specSeed != "" {
		s.Spec.SeedName = ptr.To(specSeed)
	}
	if statusSeed != "" {
		s.Status.SeedName = ptr.To(statusSeed)
	}
	return s
}

func cloudProfile(name string) *api.CloudProfile {
	return &api.CloudProfile{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "CloudProfile"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       api.CloudProfileSpec{Type: "aws"},
	}
}

func project(name, ns string) *api.Project {
	return &api.Project{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Project"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       api.ProjectSpec{Namespace: ptr.To(ns)},
	}
}

func regionConfig(ns, name string, labelled bool) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{api.AnnotationSchedulingCloudProfiles: "aws"}},
		Data:       map[string]string{"eu-west-1": "eu-west-1: 0\neu-central-1: 10\n"},
	}
	if labelled {
		cm.Labels = map[string]string{api.LabelSchedulingPurpose: api.LabelSchedulingPurposeRegionConfig}
	}
	return cm
}

// newFakeClock is a settable clock (Now, Step, SetTime).
func newFakeClock() *clocktesting.FakeClock {
	return clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

// leastUsedDecide stands in for placement.Decide so Place's reservation loop
// can be tested on its own: least usage among seeds with room, ties by name.
func leastUsedDecide(snap *placement.Snapshot, _ *api.Shoot, _ placement.Options) placement.Decision {
	d := placement.Decision{Total: len(snap.Seeds)}
	best := int64(-1)
	for _, sd := range snap.Seeds {
		u := snap.Usage(sd)
		if alloc, ok := sd.Allocatable(); ok && u >= alloc {
			continue
		}
		if best < 0 || u < best {
			best, d.Seed, d.Usage = u, sd.Name, u
		}
	}
	if d.Seed == "" {
		d.Step, d.Message = placement.StepCandidates, "no seed has capacity"
	}
	return d
}

// usages reads Store.Usage for several seeds at once, for compact assertions.
func usages(s *Store, names ...string) map[string]int64 {
	out := map[string]int64{}
	for _, n := range names {
		out[n] = s.Usage(n)
	}
	return out
}

var placementOpts = placement.Options{Strategy: placement.SameRegion, NetworkMode: placement.Disjoint}
