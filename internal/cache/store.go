package cache

// Long file (over 450 lines): the Store still decides and reserves, counts
// and decodes in one place; splitting it by job is issue 13, item 2.

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// AnnotationReservation is set by the webhook on a Shoot it placed; when the
// Shoot arrives through the watch with spec.seedName set, the reservation of
// that key ends because the Shoot itself is now counted.
const AnnotationReservation = "seedwarden.io/reservation"

// Defaults for Options: the configuration file's, defined there once.
const (
	DefaultGardenNamespace = config.DefaultGardenNamespace
	DefaultReservationTTL  = config.DefaultReservationTTL
)

// Options configure a Store.
type Options struct {
	// GardenNamespace holds the region-config ConfigMaps (default "garden").
	GardenNamespace string
	// ReservationTTL bounds how long a placement holds a place on its seed
	// without the Shoot showing up (default 30s).
	ReservationTTL time.Duration
	// Now is the clock (default time.Now); tests inject one.
	Now func() time.Time
}

// Store is the landscape every decision reads. All methods are safe for
// concurrent use.
//
// The landscape (everything but Shoots) changes rarely, so it is rebuilt
// copy-on-write and published through an atomic pointer: Snapshot is a load.
// Shoots change often, so they only move per-seed atomic counters that the
// published snapshot reads live.
type Store struct {
	gardenNamespace string
	ttl             time.Duration
	now             func() time.Time
	// decide is placement.Decide; a field so Place's reservation loop can be
	// tested on its own.
	decide func(*placement.Snapshot, *api.Shoot, placement.Options) placement.Decision

	land atomic.Pointer[landscape]
	// nextExpiry is the earliest reservation deadline in UnixNano
	// (math.MaxInt64 with none), so readers can skip the lock when nothing
	// has expired.
	nextExpiry atomic.Int64

	mu sync.Mutex // guards everything below and every landscape rebuild
	// counters exist for every seed in the landscape and for every seed name
	// some Shoot or reservation is charged to; others are dropped.
	counters map[string]*counter
	// shoots remembers each Shoot's last contribution (namespace/name -> seeds)
	// so an update or delete can undo it without trusting the old object.
	shoots     map[string]charge
	namespaces map[string]int
	// versions are the resourceVersions of landscape objects, so informer
	// resyncs do not rebuild the landscape.
	versions          map[objectKey]string
	kindCounts        map[string]int    // landscape objects per kind (keys of versions)
	projectNamespaces map[string]string // project name -> spec.namespace
	reservations      map[string]*reservation
	expiries          reservationHeap

	// arrived, when set, is told of every Shoot that arrives on the seed an
	// admission of this Store reserved for it (see OnArrival).
	arrived func(shoot *api.Shoot, seed string)

	// reserved holds the keys of reservations (key -> struct{}), so that
	// Release can skip the lock for a key without one (reservations.go).
	// Written under mu: a key is added before it enters reservations and
	// deleted after it leaves, so a key in reservations is always in here.
	reserved sync.Map
}

// counter is a seed's live usage. Writes happen under Store.mu (so capacity
// checks are exact); reads from snapshots are lock-free.
type counter struct {
	name     string // also the interned seed name kept in charges
	shoots   atomic.Int64
	reserved atomic.Int64
}

func (c *counter) usage() int64 { return c.shoots.Load() + c.reserved.Load() }

// charge is what one Shoot counts against: placement.ChargedSeeds.
type charge struct{ spec, status string }

type objectKey struct{ kind, namespace, name string }

// landscape is immutable once published.
type landscape struct {
	snap     placement.Snapshot
	seeds    map[string]*placement.Seed
	counters map[string]*counter // for the seeds in this landscape
}

func (l *landscape) usage(sd *placement.Seed) int64 {
	if c := l.counters[sd.Name]; c != nil {
		return c.usage()
	}
	return 0
}

// clone is a shallow copy: the caller replaces (never edits) the parts it changes.
func (l *landscape) clone() *landscape {
	return &landscape{snap: l.snap, seeds: l.seeds, counters: l.counters}
}

// NewStore returns an empty Store.
func NewStore(o Options) *Store {
	if o.GardenNamespace == "" {
		o.GardenNamespace = DefaultGardenNamespace
	}
	if o.ReservationTTL <= 0 {
		o.ReservationTTL = DefaultReservationTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Store{
		gardenNamespace:   o.GardenNamespace,
		ttl:               o.ReservationTTL,
		now:               o.Now,
		decide:            placement.Decide,
		counters:          map[string]*counter{},
		shoots:            map[string]charge{},
		namespaces:        map[string]int{},
		versions:          map[objectKey]string{},
		kindCounts:        map[string]int{},
		projectNamespaces: map[string]string{},
		reservations:      map[string]*reservation{},
	}
	s.nextExpiry.Store(math.MaxInt64)
	s.publish(&landscape{
		snap: placement.Snapshot{
			CloudProfiles:           map[string]*placement.CloudProfile{},
			NamespacedCloudProfiles: map[string]*placement.CloudProfile{},
			Projects:                map[string]*placement.Project{},
		},
		seeds:    map[string]*placement.Seed{},
		counters: map[string]*counter{},
	})
	return s
}

func (s *Store) publish(l *landscape) {
	l.snap.Usage = l.usage
	s.land.Store(l)
}

// Snapshot returns the current landscape with live usage. It is shared and
// read-only: callers must not modify it. Cost does not depend on the number
// of Shoots.
func (s *Store) Snapshot() *placement.Snapshot {
	s.maybeSweep()
	return &s.land.Load().snap
}

// Seed returns the digested seed of that name.
func (s *Store) Seed(name string) (*placement.Seed, bool) {
	sd, ok := s.land.Load().seeds[name]
	return sd, ok
}

// Usage returns a seed's Shoots plus live reservations; it works for seeds
// whose Seed object has not arrived yet.
func (s *Store) Usage(seed string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.now())
	if c := s.counters[seed]; c != nil {
		return c.usage()
	}
	return 0
}

// ShootChargedTo reports whether the Shoot namespace/name counts against
// seed: its spec.seedName, or its status.seedName while it migrates (as
// placement.ChargedSeeds says). O(1).
func (s *Store) ShootChargedTo(namespace, name, seed string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chargedToLocked(namespace+"/"+name, seed)
}

// ShootsOnSeed returns how many Shoots count against seed (reservations
// excluded) and, for each of keys ("namespace/name"), whether that Shoot is
// one of them. Both come from one instant of the Store, so a Shoot that
// arrives meanwhile is never missed by one and counted by the other. Cost is
// O(len(keys)).
func (s *Store) ShootsOnSeed(seed string, keys []string) (shoots int64, charged []bool) {
	charged = make([]bool, len(keys))
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.counters[seed]; c != nil {
		shoots = c.shoots.Load()
	}
	for i, k := range keys {
		charged[i] = s.chargedToLocked(k, seed)
	}
	return shoots, charged
}

func (s *Store) chargedToLocked(key, seed string) bool {
	if seed == "" {
		return false
	}
	c, ok := s.shoots[key]
	return ok && (c.spec == seed || c.status == seed)
}

// ShootsInNamespace counts the Shoots known in a namespace.
func (s *Store) ShootsInNamespace(ns string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.namespaces[ns]
}

// ProjectForNamespace returns the Project whose spec.namespace is ns and
// whether it is being deleted (has a deletionTimestamp); ok is false when no
// known Project claims ns. It reads the published snapshot: O(1), no lock.
func (s *Store) ProjectForNamespace(ns string) (name string, deleting, ok bool) {
	p := s.land.Load().snap.Projects[ns]
	if p == nil {
		return "", false, false
	}
	return p.Name, p.Deleting, true
}

// SeedStats returns usage and allocatable of every known Seed, sorted by name.
// Seeds that Shoots point to but that do not exist are left out.
func (s *Store) SeedStats() []metrics.SeedStat {
	s.maybeSweep()
	l := s.land.Load()
	out := make([]metrics.SeedStat, 0, len(l.snap.Seeds))
	for _, sd := range l.snap.Seeds {
		alloc, has := sd.Allocatable()
		out = append(out, metrics.SeedStat{Name: sd.Name, Usage: l.usage(sd), Allocatable: alloc, HasAllocatable: has})
	}
	return out
}

// Load applies every object; for static landscapes.
func (s *Store) Load(objs []client.Object) {
	for _, o := range objs {
		s.Apply(o)
	}
}

// Apply adds or updates a supported object; others are ignored. Landscape
// objects are deep-copied, so callers may reuse theirs.
func (s *Store) Apply(obj client.Object) {
	switch o := obj.(type) {
	case *api.Shoot:
		if o != nil {
			s.applyShoot(o)
		}
	case *api.Seed:
		if o != nil {
			s.applySeed(o)
		}
	case *api.CloudProfile:
		if o != nil {
			s.applyCloudProfile(o)
		}
	case *api.NamespacedCloudProfile:
		if o != nil {
			s.applyNamespacedCloudProfile(o)
		}
	case *api.Project:
		if o != nil {
			s.applyProject(o)
		}
	case *corev1.ConfigMap:
		if o != nil {
			s.applyConfigMap(o)
		}
	}
}

// Remove deletes a supported object; unknown objects are ignored.
func (s *Store) Remove(obj client.Object) {
	switch o := obj.(type) {
	case *api.Shoot:
		if o != nil {
			s.removeShoot(o)
		}
	case *api.Seed:
		if o != nil {
			s.removeSeed(o.Name)
		}
	case *api.CloudProfile:
		if o != nil {
			s.removeCloudProfile(o.Name)
		}
	case *api.NamespacedCloudProfile:
		if o != nil {
			s.removeNamespacedCloudProfile(o.Namespace, o.Name)
		}
	case *api.Project:
		if o != nil {
			s.removeProject(o.Name)
		}
	case *corev1.ConfigMap:
		if o != nil && o.Namespace == s.gardenNamespace {
			s.removeRegionConfig(o.Name)
		}
	}
}

// ---- Shoots and counters ----

func shootKey(o client.Object) string { return o.GetNamespace() + "/" + o.GetName() }

func (s *Store) applyShoot(o *api.Shoot) {
	spec, _ := placement.ChargedSeeds(o)
	if s.countShoot(o) && s.arrived != nil {
		s.arrived(o, spec)
	}
}

// countShoot counts the Shoot; it reports whether the Shoot fulfilled a
// reservation its admission took (the reservation annotation).
func (s *Store) countShoot(o *api.Shoot) (fulfilled bool) {
	key := shootKey(o)
	spec, status := placement.ChargedSeeds(o)

	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.now())
	next := charge{spec: s.intern(spec), status: s.intern(status)}
	old, known := s.shoots[key]
	if !known {
		s.namespaces[o.Namespace]++
	}
	if !known || old != next {
		// Add before subtracting: lock-free readers may briefly overcount
		// (harmless) but never undercount.
		s.addCharge(next, 1)
		if known {
			s.addCharge(old, -1)
		}
	}
	s.shoots[key] = next
	if spec != "" {
		if k := o.Annotations[AnnotationReservation]; k != "" && s.reservations[k] != nil {
			s.releaseLocked(k) // the Shoot itself now holds the place
			fulfilled = true
		}
		// A manual placement (validated binding or spec.seedName set by a
		// user) ends when the Shoot shows up on the seed it reserved; an
		// event still showing the old seed leaves it in place.
		if r := s.reservations[ManualReservationKey(o.Namespace, o.Name)]; r != nil && r.ctr.name == spec {
			s.releaseLocked(r.key)
		}
	}
	return fulfilled
}

// OnArrival sets f to be told, outside the Store's lock, of every Shoot that
// shows up on a seed under the reservation an admission through this Store
// took: once per placement, on the replica that made it. The placement mode
// "patch" records its success event there, since the admission itself
// happens before the Shoot exists. Set it before the Store is fed.
func (s *Store) OnArrival(f func(shoot *api.Shoot, seed string)) { s.arrived = f }

func (s *Store) removeShoot(o *api.Shoot) {
	key := shootKey(o)
	s.mu.Lock()
	defer s.mu.Unlock()
	// Undo what was counted, not what the (possibly stale) final object says.
	old, known := s.shoots[key]
	if !known {
		return
	}
	delete(s.shoots, key)
	if s.namespaces[o.Namespace]--; s.namespaces[o.Namespace] <= 0 {
		delete(s.namespaces, o.Namespace)
	}
	s.addCharge(old, -1)
}

// intern returns the seed name shared with its counter, so 100k Shoots on a
// few hundred seeds do not hold 100k copies of the names.
func (s *Store) intern(seed string) string {
	if seed == "" {
		return ""
	}
	return s.counterLocked(seed).name
}

func (s *Store) counterLocked(seed string) *counter {
	c := s.counters[seed]
	if c == nil {
		c = &counter{name: seed}
		s.counters[seed] = c
	}
	return c
}

func (s *Store) addCharge(c charge, delta int64) {
	for _, seed := range [2]string{c.spec, c.status} {
		if seed == "" {
			continue
		}
		ctr := s.counterLocked(seed)
		ctr.shoots.Add(delta)
		s.gcCounterLocked(ctr)
	}
}

// gcCounterLocked drops a counter that nothing refers to any more.
func (s *Store) gcCounterLocked(c *counter) {
	if c.shoots.Load() != 0 || c.reserved.Load() != 0 {
		return
	}
	if _, inLandscape := s.land.Load().counters[c.name]; inLandscape {
		return
	}
	if s.counters[c.name] == c {
		delete(s.counters, c.name)
	}
}

// ---- landscape ----

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
	n := s.land.Load().clone()
	n.snap.Seeds = upsertSorted(n.snap.Seeds, sd, func(x *placement.Seed) string { return x.Name })
	n.seeds = cloneMapWith(n.seeds, sd.Name, sd)
	n.counters = cloneMapWith(n.counters, sd.Name, s.counterLocked(sd.Name))
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

func (s *Store) applyProject(o *api.Project) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.changedLocked(objectKey{kind: kindProject, name: o.Name}, o.ResourceVersion) {
		return
	}
	ns := ""
	if o.Spec.Namespace != nil {
		ns = *o.Spec.Namespace
	}
	prev, hadPrev := s.projectNamespaces[o.Name]
	n := s.land.Load().clone()
	projects := n.snap.Projects
	if hadPrev && prev != ns {
		projects = cloneMapWithout(projects, prev)
	}
	if ns == "" {
		delete(s.projectNamespaces, o.Name)
	} else {
		s.projectNamespaces[o.Name] = ns
		projects = cloneMapWith(projects, ns, &placement.Project{Name: o.Name, Deleting: o.DeletionTimestamp != nil})
	}
	n.snap.Projects = projects
	s.publish(n)
}

func (s *Store) removeProject(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(objectKey{kind: kindProject, name: name})
	ns, ok := s.projectNamespaces[name]
	if !ok {
		return
	}
	delete(s.projectNamespaces, name)
	n := s.land.Load().clone()
	n.snap.Projects = cloneMapWithout(n.snap.Projects, ns)
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
