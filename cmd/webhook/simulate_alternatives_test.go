package main

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/config"
)

// "Next, were X full" is what the landscape really does once X is full:
// each next seed is where the Shoot goes with the seeds before it full, and
// the seeds never named are the ones that take it under no such change.
func TestAlternativesAreWhereFullSeedsSendTheShoot(t *testing.T) {
	cfg, err := config.Parse([]byte(configHeader))
	require.NoError(t, err)
	objs, shoot, err := readLandscapeShoot("../../examples/landscape.yaml", "../../examples/shoot.yaml")
	require.NoError(t, err)

	first := placeOnLandscape(cfg, objs, shoot)
	require.NotEmpty(t, first.Seed)
	a := first.alternatives
	require.NotEmpty(t, a.next, "the example Shoot has a second seed")
	assert.Equal(t, 1+len(a.next), a.eligible)
	assert.Equal(t, a.total, a.eligible+len(a.never), "every seed is either eligible or has a reason")

	full := []string{first.Seed}
	for _, want := range append(a.next, "") {
		r := placeOnLandscape(cfg, fillSeeds(t, objs, full), shoot)
		if want == "" {
			assert.True(t, r.Unschedulable, "with %v full no seed is left", full)
			break
		}
		assert.Equal(t, want, r.Seed, "with %v full", full)
		full = append(full, want)
	}
	for seed := range a.never {
		assert.NotContains(t, full, seed)
	}
}

// fillSeeds is objs with each seed of names at its capacity: allocatable
// shoots set to the Shoots on it.
func fillSeeds(t *testing.T, objs []client.Object, names []string) []client.Object {
	t.Helper()
	on := map[string]int64{}
	for _, o := range objs {
		if sh, ok := o.(*api.Shoot); ok && sh.Spec.SeedName != nil {
			on[*sh.Spec.SeedName]++
		}
	}
	out := make([]client.Object, 0, len(objs))
	for _, o := range objs {
		if s, ok := o.(*api.Seed); ok && slices.Contains(names, s.Name) {
			s = s.DeepCopy()
			if s.Status.Allocatable == nil {
				s.Status.Allocatable = corev1.ResourceList{}
			}
			s.Status.Allocatable["shoots"] = *resource.NewQuantity(on[s.Name], resource.DecimalSI)
			o = s
		}
		out = append(out, o)
	}
	return out
}

// Past the limit of decisions made again the count is a lower bound, and
// no seed's reason is claimed.
func TestAlternativesCapped(t *testing.T) {
	cfg, err := config.Parse([]byte(configHeader))
	require.NoError(t, err)
	objs, shoot, err := readLandscapeShoot("../../examples/landscape.yaml", "../../examples/shoot.yaml")
	require.NoError(t, err)
	store := newStore(cfg, nil)
	store.Load(objs)
	opts := placementOptions(cfg)
	d := store.Place(shoot, opts, "")
	require.True(t, d.Schedulable())

	a := explainAlternatives(store.Snapshot(), shoot, opts, d.Seed, 1)
	assert.True(t, a.capped)
	assert.Equal(t, 2, a.eligible)
	assert.Empty(t, a.never)
	assert.Equal(t, "  2/6 seeds eligible or more (the others' reasons not computed); next, were aws-eu2 full: aws-eu1\n", a.text(d.Seed))
}
