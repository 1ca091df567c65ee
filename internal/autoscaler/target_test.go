package autoscaler

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
)

// storeOf holds the seeds.
func storeOf(seeds ...*api.Seed) *cache.Store {
	store := cache.NewStore(cache.Options{})
	objs := make([]client.Object, len(seeds))
	for i, s := range seeds {
		objs[i] = s
	}
	store.Load(objs)
	return store
}

// withGardenlet gives the set's template a gardenlet configuration.
func withGardenlet(t *testing.T, set *seedmanagement.ManagedSeedSet, cfg map[string]any) *seedmanagement.ManagedSeedSet {
	t.Helper()
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	set.Spec.Template.Spec.Gardenlet = &seedmanagement.Gardenlet{Config: runtime.RawExtension{Raw: raw}}
	return set
}

var seedConfig = map[string]any{
	"apiVersion": "gardenlet.config.gardener.cloud/v1alpha1", "kind": "GardenletConfiguration",
	"seedConfig": map[string]any{
		"metadata": map[string]any{"labels": map[string]any{setLabel: setName}},
		"spec": map[string]any{
			"provider": map[string]any{"type": "aws", "region": "eu-west-1"},
			"networks": map[string]any{"pods": "100.96.0.0/11", "services": "100.64.0.0/13"},
		},
	},
}

func allocatable(s *api.Seed) string {
	q, ok := s.Status.Allocatable[api.ResourceShoots]
	if !ok {
		return "none"
	}
	return q.String()
}

const fromTemplate = "the ManagedSeedSet's template (spec.template.spec.gardenlet.config.seedConfig)"

// The set as seedscale sees it: its seeds by the selector, the next
// ordinal, and the new replica's model with where it came from.
func TestBuildSet(t *testing.T) {
	seeds := []*api.Seed{seedObj("aws-0", 10, true), seedObj("aws-10", 12, true), seedObj("aws-2", 11, true), seedObj("other-0", 50, false)}
	withCapacity := map[string]any{}
	for k, v := range seedConfig {
		withCapacity[k] = v
	}
	withCapacity["resources"] = map[string]any{"capacity": map[string]any{"shoots": "30"}, "reserved": map[string]any{"shoots": "5"}}
	for _, tc := range []struct {
		name        string
		set         *seedmanagement.ManagedSeedSet
		seeds       []*api.Seed
		members     []string
		next        int32
		modelSource string
		modelAlloc  string
	}{
		{"no seedConfig: the seed of the highest ordinal", managedSeedSet(3), seeds,
			[]string{"aws-0", "aws-10", "aws-2"}, 11, "existing seed aws-10 (the template has no seedConfig)", "12"},
		{"seedConfig with capacity: capacity minus reserved", withGardenlet(t, managedSeedSet(3), withCapacity), seeds,
			[]string{"aws-0", "aws-10", "aws-2"}, 11, fromTemplate, "25"},
		{"seedConfig without capacity: an existing seed's allocatable", withGardenlet(t, managedSeedSet(3), seedConfig), seeds,
			[]string{"aws-0", "aws-10", "aws-2"}, 11, fromTemplate + ", with the allocatable of existing seed aws-10", "12"},
		{"seedConfig without capacity and no seed yet", withGardenlet(t, managedSeedSet(0), seedConfig), nil,
			nil, 0, fromTemplate, "none"},
		{"neither: no model", managedSeedSet(0), []*api.Seed{seedObj("other-0", 50, false)}, nil, 0,
			"none: the template has no seedConfig and the set has no seed yet", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, storeOf(tc.seeds...), nil)
			tgt := &target{set: tc.set, scale: &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 3}}}
			set, serr := f.r.buildSet(context.Background(), tgt, f.r.Snapshot())
			require.Nil(t, serr)
			assert.Equal(t, "garden/aws", set.Name)
			assert.Equal(t, "aws", set.Prefix)
			assert.Equal(t, int32(3), set.Replicas)
			assert.Equal(t, tc.members, set.Seeds)
			assert.Equal(t, tc.next, set.NextOrdinal)
			assert.Equal(t, tc.modelSource, set.ModelSource)
			if tc.modelAlloc == "" {
				assert.Nil(t, set.Model)
				return
			}
			require.NotNil(t, set.Model)
			assert.Equal(t, tc.modelAlloc, allocatable(set.Model))
			assert.Equal(t, "eu-west-1", set.Model.Spec.Provider.Region)
		})
	}
}

// A replica whose Shoot carries protect-from-deletion "true" is protected;
// other values, and Shoots outside the selector or namespace, are not.
func TestProtectedReplicas(t *testing.T) {
	shootMeta := func(name, namespace, protect string, member bool) *api.Shoot {
		s := shootObj(name, "")
		s.Namespace = namespace
		s.Labels = map[string]string{}
		if member {
			s.Labels[setLabel] = setName
		}
		if protect != "" {
			s.Annotations = map[string]string{seedmanagement.AnnotationProtectFromDeletion: protect}
		}
		return s
	}
	f := newFixture(t, storeOf(seedObj("aws-0", 10, true)), nil,
		shootMeta("aws-0", ns, "true", true),
		shootMeta("aws-1", ns, "false", true),
		shootMeta("aws-2", ns, "true", false),
		shootMeta("aws-3", "garden-dev", "true", true),
		shootMeta("aws-4", ns, "", true))
	sel, err := managedSeedSet(5).Selector()
	require.NoError(t, err)
	protected, err := f.r.protected(context.Background(), ns, sel)
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"aws-0": true}, protected)

	tgt := &target{set: managedSeedSet(5), scale: &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 5}}}
	set, serr := f.r.buildSet(context.Background(), tgt, f.r.Snapshot())
	require.Nil(t, serr)
	assert.True(t, set.Protected["aws-0"], "the registered replica aws-0 is protected")
	assert.Equal(t, int32(5), set.Replicas, "the scale subresource's replicas")
}
