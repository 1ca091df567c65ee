package cache

import (
	"cmp"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// Landscape objects (everything but Shoots) are few and change rarely: each
// change rebuilds the published landscape copy-on-write.

type objectKey struct{ kind, namespace, name string }

// changedLocked records rv and reports whether the object differs from the
// last one seen; an empty resourceVersion (static files) always counts as a change.
func (s *Store) changedLocked(k objectKey, rv string) bool {
	old, known := s.versions[k]
	if known && rv != "" && old == rv {
		return false
	}
	if !known {
		s.kindCounts[k.kind]++
	}
	s.versions[k] = rv
	return true
}

// forgetLocked drops the version of a removed object.
func (s *Store) forgetLocked(k objectKey) {
	if _, known := s.versions[k]; known {
		delete(s.versions, k)
		s.kindCounts[k.kind]--
	}
}

// countable maps the resources Count knows to the kind of their objects.
var countable = map[string]string{
	"seeds":         kindSeed,
	"cloudprofiles": kindCloudProfile,
	"projects":      kindProject,
}

// CountableResources are the core.gardener.cloud resources (all
// cluster-scoped) whose objects Count can count.
func CountableResources() []string { return []string{"cloudprofiles", "projects", "seeds"} }

// Count returns how many objects of a core.gardener.cloud resource the Store
// holds: seeds, cloudprofiles or projects (every Project, with or without
// spec.namespace). ok is false for any other resource.
func (s *Store) Count(resource string) (n int, ok bool) {
	kind, ok := countable[resource]
	if !ok {
		return 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kindCounts[kind], true
}

const (
	kindSeed         = "Seed"
	kindCloudProfile = "CloudProfile"
	kindNCP          = "NamespacedCloudProfile"
	kindProject      = "Project"
	kindConfigMap    = "ConfigMap"
)

func (s *Store) applySeed(o *api.Seed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.changedLocked(objectKey{kind: kindSeed, name: o.Name}, o.ResourceVersion) {
		return
	}
	sd := placement.NewSeed(o.DeepCopy())
	if reason := s.cordonLocked(o.Name); reason != "" {
		sd = sd.WithCordon(reason)
	}
	n := s.land.Load().clone()
	s.putSeed(n, sd)
	s.publish(n)
}

func (s *Store) removeSeed(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(objectKey{kind: kindSeed, name: name})
	l := s.land.Load()
	if _, ok := l.seeds[name]; !ok {
		return
	}
	n := l.clone()
	n.snap.Seeds = deleteSorted(n.snap.Seeds, name, func(x *placement.Seed) string { return x.Name })
	n.seeds = cloneMapWithout(n.seeds, name)
	n.counters = cloneMapWithout(n.counters, name)
	s.publish(n)
	if c := s.counters[name]; c != nil {
		s.gcCounterLocked(c)
	}
}

func (s *Store) applyCloudProfile(o *api.CloudProfile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.changedLocked(objectKey{kind: kindCloudProfile, name: o.Name}, o.ResourceVersion) {
		return
	}
	p := placement.NewCloudProfile(o.Name, o.Spec.DeepCopy())
	n := s.land.Load().clone()
	n.snap.CloudProfiles = cloneMapWith(n.snap.CloudProfiles, o.Name, p)
	s.publish(n)
}

func (s *Store) removeCloudProfile(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(objectKey{kind: kindCloudProfile, name: name})
	l := s.land.Load()
	if _, ok := l.snap.CloudProfiles[name]; !ok {
		return
	}
	n := l.clone()
	n.snap.CloudProfiles = cloneMapWithout(n.snap.CloudProfiles, name)
	s.publish(n)
}

func (s *Store) applyNamespacedCloudProfile(o *api.NamespacedCloudProfile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.changedLocked(objectKey{kind: kindNCP, namespace: o.Namespace, name: o.Name}, o.ResourceVersion) {
		return
	}
	p := placement.NewCloudProfile(o.Name, o.Status.CloudProfileSpec.DeepCopy())
	n := s.land.Load().clone()
	n.snap.NamespacedCloudProfiles = cloneMapWith(n.snap.NamespacedCloudProfiles, o.Namespace+"/"+o.Name, p)
	s.publish(n)
}

func (s *Store) removeNamespacedCloudProfile(ns, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(objectKey{kind: kindNCP, namespace: ns, name: name})
	key := ns + "/" + name
	l := s.land.Load()
	if _, ok := l.snap.NamespacedCloudProfiles[key]; !ok {
		return
	}
	n := l.clone()
	n.snap.NamespacedCloudProfiles = cloneMapWithout(n.snap.NamespacedCloudProfiles, key)
	s.publish(n)
}

// isRegionConfig: only labelled ConfigMaps in the garden namespace count.
func (s *Store) isRegionConfig(cm *corev1.ConfigMap) bool {
	return cm.Namespace == s.gardenNamespace &&
		cm.Labels[api.LabelSchedulingPurpose] == api.LabelSchedulingPurposeRegionConfig
}

func (s *Store) applyConfigMap(cm *corev1.ConfigMap) {
	if cm.Namespace != s.gardenNamespace {
		return
	}
	if !s.isRegionConfig(cm) {
		// A ConfigMap that lost its label stops being a region config.
		s.removeRegionConfig(cm.Name)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.changedLocked(objectKey{kind: kindConfigMap, namespace: cm.Namespace, name: cm.Name}, cm.ResourceVersion) {
		return
	}
	rc := placement.NewRegionConfig(cm)
	n := s.land.Load().clone()
	n.snap.RegionConfigs = upsertSorted(n.snap.RegionConfigs, rc, func(x *placement.RegionConfig) string { return x.Name })
	s.publish(n)
}

func (s *Store) removeRegionConfig(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(objectKey{kind: kindConfigMap, namespace: s.gardenNamespace, name: name})
	l := s.land.Load()
	byName := func(x *placement.RegionConfig) string { return x.Name }
	if _, found := slices.BinarySearchFunc(l.snap.RegionConfigs, name, func(x *placement.RegionConfig, n string) int { return cmp.Compare(byName(x), n) }); !found {
		return
	}
	n := l.clone()
	n.snap.RegionConfigs = deleteSorted(n.snap.RegionConfigs, name, byName)
	s.publish(n)
}

// ---- copy-on-write helpers ----

func cloneMapWith[V any](m map[string]V, k string, v V) map[string]V {
	out := make(map[string]V, len(m)+1)
	maps.Copy(out, m)
	out[k] = v
	return out
}

func cloneMapWithout[V any](m map[string]V, k string) map[string]V {
	out := make(map[string]V, len(m))
	maps.Copy(out, m)
	delete(out, k)
	return out
}

// upsertSorted returns a new slice, sorted by name, with v inserted or replacing
// the element of the same name.
func upsertSorted[T any](in []T, v T, name func(T) string) []T {
	i, found := slices.BinarySearchFunc(in, name(v), func(x T, n string) int { return cmp.Compare(name(x), n) })
	out := make([]T, 0, len(in)+1)
	out = append(out, in[:i]...)
	out = append(out, v)
	if found {
		i++
	}
	return append(out, in[i:]...)
}

func deleteSorted[T any](in []T, n string, name func(T) string) []T {
	i, found := slices.BinarySearchFunc(in, n, func(x T, n string) int { return cmp.Compare(name(x), n) })
	if !found {
		return in
	}
	out := make([]T, 0, len(in)-1)
	out = append(out, in[:i]...)
	return append(out, in[i+1:]...)
}
