package autoscaleplan

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
	"github.com/seedwarden/seedwarden/internal/seedscale"
)

// Where a new replica's Seed comes from, in words for the report.
const (
	modelFromTemplate = "the ManagedSeedSet's template (spec.template.spec.gardenlet.config.seedConfig)"
	modelFromSeed     = "existing seed %s (the template has no seedConfig)"
	allocatableFrom   = ", with the allocatable of existing seed %s (the template has no resources.capacity)"
	modelNone         = "nothing (the template has no seedConfig, and the set has no seed to copy)"
)

// defaultReplicas is Gardener's default of a ManagedSeedSet's spec.replicas.
const defaultReplicas = 1

// NewSet is seedscale's view of mss on snap: the snapshot's seeds its
// selector matches, the replicas of its scale subresource, the ordinal of
// the next replica, and the Seed a new replica registers (the template's
// seedConfig, else the set's seed of the highest ordinal; nil when neither
// exists, and the source says so). protected are the replicas whose Shoot or ManagedSeed carries
// the protect-from-deletion annotation.
func NewSet(mss *seedmanagement.ManagedSeedSet, snap *placement.Snapshot, protected map[string]bool) (seedscale.Set, error) {
	sel, err := mss.Selector()
	if err != nil {
		return seedscale.Set{}, err
	}
	set := seedscale.Set{
		Name:        mss.Namespace + "/" + mss.Name,
		Prefix:      mss.Name,
		NextOrdinal: mss.Status.NextReplicaNumber,
		Replicas:    defaultReplicas,
		Protected:   map[string]bool{},
	}
	if mss.Spec.Replicas != nil {
		set.Replicas = *mss.Spec.Replicas
	}
	var last *placement.Seed // the highest ordinal, then the last name
	for _, s := range snap.Seeds {
		if !sel.Matches(labels.Set(s.Object.Labels)) {
			continue
		}
		set.Seeds = append(set.Seeds, s.Name)
		set.Protected[s.Name] = protected[s.Name]
		if o := seedmanagement.Ordinal(s.Name); o >= set.NextOrdinal {
			set.NextOrdinal = o + 1
		}
		if last == nil || cmp.Or(cmp.Compare(seedmanagement.Ordinal(s.Name), seedmanagement.Ordinal(last.Name)), cmp.Compare(s.Name, last.Name)) > 0 {
			last = s
		}
	}
	set.Model, set.ModelSource, err = model(mss, last)
	return set, err
}

// model is the Seed a new replica registers and where it came from.
func model(mss *seedmanagement.ManagedSeedSet, last *placement.Seed) (*api.Seed, string, error) {
	tmpl, ok, err := mss.SeedTemplate()
	switch {
	case err != nil:
		return nil, "", err
	case ok:
		source := modelFromTemplate
		if _, has := tmpl.Status.Allocatable[api.ResourceShoots]; !has && last != nil {
			if alloc, has := last.Object.Status.Allocatable[api.ResourceShoots]; has {
				tmpl.Status.Allocatable = corev1.ResourceList{api.ResourceShoots: alloc.DeepCopy()}
				source += fmt.Sprintf(allocatableFrom, last.Name)
			}
		}
		return tmpl, source, nil
	case last != nil:
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
