package seedmanagement

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/seedwarden/seedwarden/internal/api"
)

// ReplicaName is the name Gardener gives the replica of ordinal in set:
// its Shoot, ManagedSeed and Seed share it.
func ReplicaName(set string, ordinal int32) string {
	return set + "-" + strconv.FormatInt(int64(ordinal), 10)
}

var ordinalSuffix = regexp.MustCompile(`-([0-9]+)$`)

// Ordinal is the ordinal at the end of a replica's name, -1 for a name
// without one (a seed the set adopted rather than created).
func Ordinal(name string) int32 {
	m := ordinalSuffix.FindStringSubmatch(name)
	if m == nil {
		return -1
	}
	n, err := strconv.ParseInt(m[1], 10, 32)
	if err != nil {
		return -1
	}
	return int32(n)
}

// Selector is spec.selector as a labels.Selector.
func (s *ManagedSeedSet) Selector() (labels.Selector, error) {
	sel, err := metav1.LabelSelectorAsSelector(&s.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("ManagedSeedSet %s/%s: spec.selector: %w", s.Namespace, s.Name, err)
	}
	return sel, nil
}

// gardenletConfig is the part of a GardenletConfiguration read here.
type gardenletConfig struct {
	SeedConfig *struct {
		metav1.ObjectMeta `json:"metadata,omitempty"`
		Spec              *api.SeedSpec `json:"spec,omitempty"`
	} `json:"seedConfig,omitempty"`
	Resources *struct {
		Capacity corev1.ResourceList `json:"capacity,omitempty"`
		Reserved corev1.ResourceList `json:"reserved,omitempty"`
	} `json:"resources,omitempty"`
}

// SeedTemplate is the Seed a new replica's gardenlet registers: the
// template's gardenlet seedConfig, with status.allocatable.shoots set as
// the gardenlet sets it (resources.capacity minus resources.reserved)
// when the configuration has a capacity. ok is false when the template
// has no seedConfig spec (the gardenlet then inherits it, and only the
// set's existing seeds show what a replica looks like).
func (s *ManagedSeedSet) SeedTemplate() (seed *api.Seed, ok bool, err error) {
	g := s.Spec.Template.Spec.Gardenlet
	if g == nil || len(g.Config.Raw) == 0 {
		return nil, false, nil
	}
	var cfg gardenletConfig
	if err := json.Unmarshal(g.Config.Raw, &cfg); err != nil {
		return nil, false, fmt.Errorf("ManagedSeedSet %s/%s: spec.template.spec.gardenlet.config: %w", s.Namespace, s.Name, err)
	}
	if cfg.SeedConfig == nil || cfg.SeedConfig.Spec == nil {
		return nil, false, nil
	}
	seed = &api.Seed{Spec: *cfg.SeedConfig.Spec}
	seed.Labels = cfg.SeedConfig.Labels
	seed.Annotations = cfg.SeedConfig.Annotations
	if r := cfg.Resources; r != nil {
		if c, ok := r.Capacity[api.ResourceShoots]; ok {
			alloc := c.DeepCopy()
			if res, ok := r.Reserved[api.ResourceShoots]; ok {
				alloc.Sub(res)
			}
			seed.Status.Capacity = corev1.ResourceList{api.ResourceShoots: c}
			seed.Status.Allocatable = corev1.ResourceList{api.ResourceShoots: alloc}
		}
	}
	return seed, true, nil
}

// Model is the Seed named name that a new replica registers once it is
// ready, modelled on like (SeedTemplate, or an existing seed of the set):
// like's labels, spec and allocatable, and a status that placement counts
// as ready.
func Model(like *api.Seed, name string) *api.Seed {
	s := like.DeepCopy()
	s.ObjectMeta = metav1.ObjectMeta{Name: name, Labels: s.Labels, Annotations: s.Annotations}
	s.Status.LastOperation = &api.LastOperation{Type: "Reconcile", State: "Succeeded", Progress: 100}
	s.Status.Conditions = []api.Condition{{Type: api.ConditionGardenletReady, Status: api.ConditionTrue}}
	if s.Spec.Backup != nil {
		s.Status.Conditions = append(s.Status.Conditions, api.Condition{Type: api.ConditionBackupBucketsReady, Status: api.ConditionTrue})
	}
	return s
}

// Replica is one of the set's seeds as the ManagedSeedSet controller sees
// it when it scales in.
type Replica struct {
	Name string
	// HasShoots: some Shoot names the seed (the controller never deletes
	// such a replica).
	HasShoots bool
	// Protected: the replica's Shoot or ManagedSeed carries
	// AnnotationProtectFromDeletion "true".
	Protected bool
	// Ready: the seed is ready; the controller deletes replicas that are
	// not before those that are.
	Ready bool
}

// ScaleInOrder returns the replicas the ManagedSeedSet controller may
// delete, in the order it deletes them: only replicas without Shoots and
// without protection; among them, seeds that are not ready first, then
// the lowest ordinal. (Gardener also ranks by the replica's own Shoot's
// reconciliation and health, which the landscape does not show; among
// empty seeds from one template that only changes which name goes.)
func ScaleInOrder(rs []Replica) []Replica {
	out := slices.DeleteFunc(slices.Clone(rs), func(r Replica) bool { return r.HasShoots || r.Protected })
	slices.SortStableFunc(out, func(a, b Replica) int {
		if a.Ready != b.Ready {
			if a.Ready {
				return 1
			}
			return -1
		}
		return cmp.Compare(Ordinal(a.Name), Ordinal(b.Name))
	})
	return out
}
