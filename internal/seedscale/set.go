package seedscale

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
)

// Where a new replica's Seed comes from, in words for the report; the
// controller's status says the same.
const (
	modelFromTemplate = "the ManagedSeedSet's template (spec.template.spec.gardenlet.config.seedConfig)"
	modelFromSeed     = "existing seed %s (the template has no seedConfig)"
	allocatableFrom   = ", with the allocatable of existing seed %s"
	modelNone         = "none: the template has no seedConfig and the set has no seed yet"
)

// defaultReplicas is Gardener's default of a ManagedSeedSet's spec.replicas.
const defaultReplicas = 1

// NewSet is seedscale's view of mss on snap: the snapshot's seeds its
// selector matches, the replicas of its scale subresource, the ordinal of
// the next replica, and the Seed a new replica registers (the template's
// seedConfig, else the set's seed of the highest ordinal; nil when neither
// exists, and the source says so). protected are the replicas whose Shoot
// or ManagedSeed carries the protect-from-deletion annotation.
func NewSet(mss *seedmanagement.ManagedSeedSet, snap *placement.Snapshot, protected map[string]bool) (Set, error) {
	sel, err := mss.Selector()
	if err != nil {
		return Set{}, err
	}
	set := Set{
		Name:        mss.Namespace + "/" + mss.Name,
		Prefix:      mss.Name,
		NextOrdinal: mss.Status.NextReplicaNumber,
		Replicas:    defaultReplicas,
		Protected:   map[string]bool{},
		Failing:     mss.Status.Failing(),
	}
	if mss.Spec.Replicas != nil {
		set.Replicas = *mss.Spec.Replicas
	}
	var members []*placement.Seed
	for _, s := range snap.Seeds {
		if !sel.Matches(labels.Set(s.Object.Labels)) {
			continue
		}
		members = append(members, s)
		set.Seeds = append(set.Seeds, s.Name)
		set.Protected[s.Name] = protected[s.Name]
		set.NextOrdinal = max(set.NextOrdinal, seedmanagement.Ordinal(s.Name)+1)
	}
	// The highest ordinal last (then the last name): the newest replica.
	slices.SortStableFunc(members, func(a, b *placement.Seed) int {
		return cmp.Or(cmp.Compare(seedmanagement.Ordinal(a.Name), seedmanagement.Ordinal(b.Name)), cmp.Compare(a.Name, b.Name))
	})
	set.Model, set.ModelSource, err = model(mss, members)
	return set, err
}

// model is the Seed a new replica registers and where it came from; seeds
// are the set's, the newest last.
func model(mss *seedmanagement.ManagedSeedSet, seeds []*placement.Seed) (*api.Seed, string, error) {
	tmpl, ok, err := mss.SeedTemplate()
	switch {
	case err != nil:
		return nil, "", err
	case ok:
		if _, has := tmpl.Status.Allocatable[api.ResourceShoots]; !has {
			for i := len(seeds) - 1; i >= 0; i-- {
				if alloc, has := seeds[i].Object.Status.Allocatable[api.ResourceShoots]; has {
					tmpl.Status.Allocatable = corev1.ResourceList{api.ResourceShoots: alloc.DeepCopy()}
					return tmpl, modelFromTemplate + fmt.Sprintf(allocatableFrom, seeds[i].Name), nil
				}
			}
		}
		return tmpl, modelFromTemplate, nil
	case len(seeds) > 0:
		last := seeds[len(seeds)-1]
		return last.Object, fmt.Sprintf(modelFromSeed, last.Name), nil
	}
	return nil, modelNone, nil
}

// Protected are the names of the Shoots of namespace (the replicas' Shoots
// live in the ManagedSeedSet's) that carry the protect-from-deletion
// annotation "true".
func Protected(namespace string, shoots []*api.Shoot) map[string]bool {
	out := map[string]bool{}
	for _, s := range shoots {
		if s.Namespace == namespace && s.Annotations[seedmanagement.AnnotationProtectFromDeletion] == "true" {
			out[s.Name] = true
		}
	}
	return out
}

// Pending are the Shoots waiting for scheduler to give them a seed, oldest
// first (creationTimestamp, then namespace/name): the order a scheduler
// works through them.
func Pending(shoots []*api.Shoot, scheduler string) []*api.Shoot {
	var out []*api.Shoot
	for _, s := range shoots {
		if api.AwaitsSeed(s, scheduler) {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b *api.Shoot) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}
