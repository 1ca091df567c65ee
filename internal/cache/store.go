package cache

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unique"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/operationsapi"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// AnnotationReservation is set by the webhook on a Shoot it placed; when the
// Shoot arrives through the watch with spec.seedName set, the reservation of
// that key ends because the Shoot itself is now counted.
const AnnotationReservation = "seedwarden.io/reservation"

// Defaults for Options. cmd/webhook always passes the configured values; the
// configuration file's defaults equal these (a test there keeps them so),
// so a Store built without options behaves as a default installation.
const (
	DefaultGardenNamespace = "garden"
	DefaultReservationTTL  = 30 * time.Second
	DefaultConfirmWindow   = 5 * time.Second
)

// Options configure a Store.
type Options struct {
	// GardenNamespace holds the region-config ConfigMaps (default "garden").
	GardenNamespace string
	// ReservationTTL bounds how long a placement holds a place on its seed
	// without the Shoot showing up (default 30s).
	ReservationTTL time.Duration
	// ConfirmWindow is how long a reservation holds its place before the
	// watch shows its Shoot (default DefaultConfirmWindow; at most
	// ReservationTTL).
	ConfirmWindow time.Duration
	// Limits bound the unconfirmed reservations (zero fields: the defaults).
	Limits Limits
	// Recorder counts refused, confirmed and expired reservations; nil
	// counts nothing.
	Recorder ReservationRecorder
	// Now is the clock (default time.Now); tests inject one.
	Now func() time.Time
	// WatchSeedDrains makes Register watch SeedDrains too, whose seeds
	// then take no new Shoots (cordon.go); it needs their CRD installed
	// (seedDrain.enabled). Apply takes SeedDrains either way.
	WatchSeedDrains bool
}

// Store is the landscape every decision reads. All methods are safe for
// concurrent use.
//
// The landscape (everything but Shoots) changes rarely, so it is rebuilt
// copy-on-write and published through an atomic pointer: Snapshot is a load.
// Shoots change often, so they only move per-seed atomic counters that the
// published snapshot reads live, and per-namespace maps replaced whole
// (spread.go).
type Store struct {
	gardenNamespace string
	life            Lifetime // reservationTTL and the confirm window
	limits          Limits
	recorder        ReservationRecorder
	now             func() time.Time
	// decide is placement.Decide; a field so Place's reservation loop can be
	// tested on its own.
	decide func(*placement.Snapshot, *api.Shoot, placement.Options) placement.Decision
	// watchDrains is Options.WatchSeedDrains.
	watchDrains bool

	land atomic.Pointer[landscape]
	// nextExpiry is the earliest reservation deadline in UnixNano
	// (math.MaxInt64 with none), so readers can skip the lock when nothing
	// has expired.
	nextExpiry atomic.Int64

	mu sync.Mutex // guards everything below and every landscape rebuild
	// counters exist for every seed in the landscape and for every seed name
	// some Shoot or reservation is charged to; others are dropped.
	counters map[string]*counter
	// shoots remembers each Shoot's last contribution (namespace -> name ->
	// seeds) so an update or delete can undo it without trusting the old
	// object: 24 bytes a Shoot in the map.
	shoots map[unique.Handle[string]]map[string]charge
	// seedIDs are the counters by id (0: none), the ids charges keep;
	// freeIDs are those of dropped counters, for reuse.
	seedIDs []*counter
	freeIDs []uint32
	// versions are the resourceVersions of landscape objects, so informer
	// resyncs do not rebuild the landscape.
	versions          map[objectKey]string
	kindCounts        map[string]int          // landscape objects per kind (keys of versions)
	projectNamespaces map[string]projectClaim // project name -> the namespace it claims
	claimants         map[string][]string     // namespace -> the Projects claiming it, sorted by name
	reservations      map[string]*reservation
	drains            map[string]string // SeedDrain -> the seed it cordons (cordon.go)
	unconfirmed       HeldCounts        // the reservations the Limits count, unconfirmed
	confirmed         HeldCounts        // and confirmed (PerNamespace only)
	expiries          reservationHeap
	// pending are the identities of the Shoots counted against no seed;
	// deleted those of the Shoots deleted within the confirm window, in
	// order, and by Shoot (identity.go).
	pending     map[shootID]shootIdentity
	deleted     []tombstone
	deletedByID map[shootID][]shootIdentity

	// arrived, when set, is told of every Shoot that arrives on the seed an
	// admission of this Store reserved for it (see OnArrival).
	arrived func(shoot *api.Shoot, seed string)

	// reserved holds the keys of reservations (key -> struct{}), so that
	// Release can skip the lock for a key without one (reservations.go).
	// Written under mu: a key is added before it enters reservations and
	// deleted after it leaves, so a key in reservations is always in here.
	reserved sync.Map

	// spread holds each namespace's immutable seed -> Shoots map
	// (namespace -> map[string]int64), written under mu (spread.go).
	spread sync.Map

	// tokens indexes the Shoots carrying a live placement token (tokens.go).
	tokens tokenIndex
}

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
	if o.ConfirmWindow <= 0 {
		o.ConfirmWindow = DefaultConfirmWindow
	}
	o.ConfirmWindow = min(o.ConfirmWindow, o.ReservationTTL)
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Store{
		gardenNamespace:   o.GardenNamespace,
		life:              Lifetime{ConfirmWindow: o.ConfirmWindow, TTL: o.ReservationTTL},
		limits:            o.Limits.WithDefaults(),
		recorder:          o.Recorder,
		now:               o.Now,
		decide:            placement.Decide,
		watchDrains:       o.WatchSeedDrains,
		counters:          map[string]*counter{},
		shoots:            map[unique.Handle[string]]map[string]charge{},
		seedIDs:           []*counter{nil},
		versions:          map[objectKey]string{},
		kindCounts:        map[string]int{},
		projectNamespaces: map[string]projectClaim{},
		claimants:         map[string][]string{},
		reservations:      map[string]*reservation{},
		drains:            map[string]string{},
		unconfirmed:       NewHeldCounts(),
		confirmed:         NewHeldCounts(),
		pending:           map[shootID]shootIdentity{},
		deletedByID:       map[shootID][]shootIdentity{},
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
	l.snap.ProjectShoots = s.projectShoots
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

// SeedStats returns, for every known Seed sorted by name, its Shoots
// (spec.seedName, and status.seedName while migrating), usage (Shoots plus
// live reservations), allocatable, provider, region and the values of the
// Seed labels labelKeys ("" when missing). Seeds that Shoots point to but
// that do not exist are left out. It reads atomics only: no lock.
func (s *Store) SeedStats(labelKeys []string) []metrics.SeedStat {
	s.maybeSweep()
	l := s.land.Load()
	out := make([]metrics.SeedStat, 0, len(l.snap.Seeds))
	for _, sd := range l.snap.Seeds {
		alloc, has := sd.Allocatable()
		st := metrics.SeedStat{Name: sd.Name, Allocatable: alloc, HasAllocatable: has}
		if c := l.counters[sd.Name]; c != nil {
			// Shoots first: a reservation ending as its Shoot arrives moves
			// from reserved to shoots, so usage read after never undercounts.
			st.Shoots = c.shoots.Load()
			st.Usage = c.usage()
		}
		if obj := sd.Object; obj != nil {
			st.Provider, st.Region = obj.Spec.Provider.Type, obj.Spec.Provider.Region
			if len(labelKeys) > 0 {
				st.Labels = make([]string, len(labelKeys))
				for i, k := range labelKeys {
					st.Labels[i] = obj.Labels[k]
				}
			}
		}
		out = append(out, st)
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
			s.applyShoot(factsOf(o), func() *api.Shoot { return o })
			s.indexToken(o.Namespace, o.Name, func() types.UID { return o.UID }, o.Annotations[placementtoken.Annotation])
		}
	case *ReducedShoot:
		if o != nil {
			s.applyShoot(reducedFacts(o), o.Shoot)
			s.indexToken(o.GetNamespace(), o.name, o.GetUID, o.annotation(placementtoken.Annotation))
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
	case *operationsapi.SeedDrain:
		if o != nil {
			s.applySeedDrain(o)
		}
	}
}

// Remove deletes a supported object; unknown objects are ignored.
func (s *Store) Remove(obj client.Object) {
	switch o := obj.(type) {
	case *api.Shoot:
		if o != nil {
			s.removeShoot(shootID{namespace: intern(o.Namespace), name: o.Name}, identityOf(o))
			s.unindexToken(o.Namespace, o.Name)
		}
	case *ReducedShoot:
		if o != nil {
			s.removeShoot(shootID{namespace: o.namespace, name: o.name}, reducedIdentity(o))
			s.unindexToken(o.GetNamespace(), o.name)
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
	case *operationsapi.SeedDrain:
		if o != nil {
			s.removeSeedDrain(o.Name)
		}
	}
}
