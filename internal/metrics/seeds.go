package metrics

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/sets"
)

// The gauges read at scrape time: per-seed usage from the Store, and the
// informer cache's staleness.

// SeedStat is the state of one seed at scrape time.
type SeedStat struct {
	Name     string
	Provider string // spec.provider.type
	Region   string // spec.provider.region
	// Labels are the values of the allowlisted Seed labels, in the order of
	// the collector's label names ("" for a label the seed lacks).
	Labels []string
	// Shoots are the Shoots scheduled to the seed as gardener-scheduler
	// counts them: spec.seedName, plus status.seedName while migrating.
	Shoots int64
	// Usage is Shoots plus the in-flight reservations.
	Usage          int64
	Allocatable    int64
	HasAllocatable bool
}

// SeedLabels are the labels every per-seed gauge carries before the
// allowlisted Seed labels (config metrics.seedLabels).
var SeedLabels = []string{"seed", "provider", "region"}

// seedCollector reads seed state at scrape time, so there are no per-event
// gauge updates and deleted seeds vanish from the output instead of lingering
// as stale series.
type seedCollector struct {
	list                                    func() []SeedStat
	extra                                   int // allowlisted Seed labels
	shoots, usage, allocatable, utilization *prometheus.Desc
}

// NewSeedCollector returns a collector producing seedwarden_seed_shoots,
// seedwarden_seed_charged_shoots, seedwarden_seed_allocatable_shoots and
// seedwarden_seed_utilization_ratio from list, called once per scrape (it
// must be safe for concurrent use and cheap: it runs on every scrape).
// labelNames are the Prometheus names of the allowlisted Seed labels
// (config.SeedLabelName), whose values SeedStat.Labels holds.
func NewSeedCollector(labelNames []string, list func() []SeedStat) prometheus.Collector {
	labels := append(slices.Clone(SeedLabels), labelNames...)
	desc := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, labels, nil) }
	return &seedCollector{
		list:  list,
		extra: len(labelNames),
		shoots: desc(SeedShootsName,
			"Shoots scheduled to the seed as gardener-scheduler counts them: spec.seedName, plus status.seedName while a Shoot migrates; reservations excluded."),
		usage: desc(SeedChargedShootsName,
			"Shoots charged to the seed when placing: seedwarden_seed_shoots plus the in-flight reservations of Shoots being admitted."),
		allocatable: desc(SeedAllocatableShootsName,
			"The seed's status.allocatable.shoots; absent when the seed sets no limit."),
		utilization: desc(SeedUtilizationName,
			"seedwarden_seed_charged_shoots divided by seedwarden_seed_allocatable_shoots; absent when the seed sets no limit or a limit of 0."),
	}
}

func (c *seedCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.shoots
	ch <- c.usage
	ch <- c.allocatable
	ch <- c.utilization
}

func (c *seedCollector) Collect(ch chan<- prometheus.Metric) {
	if c.list == nil {
		return
	}
	stats := c.list()
	// A duplicate name would fail the whole scrape ("collected before with
	// the same name and label values"); keep the first.
	seen := sets.New[string]()
	values := make([]string, len(SeedLabels)+c.extra)
	for _, s := range stats {
		if seen.Has(s.Name) {
			continue
		}
		seen.Insert(s.Name)
		values[0], values[1], values[2] = s.Name, s.Provider, s.Region
		for i := range c.extra {
			values[len(SeedLabels)+i] = ""
			if i < len(s.Labels) {
				values[len(SeedLabels)+i] = s.Labels[i]
			}
		}
		// NewConstMetric only fails for label values that are not valid
		// UTF-8; skipping such a seed beats failing every scrape.
		if !emit(ch, c.usage, float64(s.Usage), values) {
			continue
		}
		emit(ch, c.shoots, float64(s.Shoots), values)
		if s.HasAllocatable {
			emit(ch, c.allocatable, float64(s.Allocatable), values)
			if s.Allocatable > 0 {
				emit(ch, c.utilization, float64(s.Usage)/float64(s.Allocatable), values)
			}
		}
	}
}

// emit sends one gauge sample; it reports whether the labels were valid.
func emit(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, values []string) bool {
	m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, v, values...)
	if err != nil {
		return false
	}
	ch <- m
	return true
}

// NewCacheStaleness returns a gauge, seedwarden_cache_stale_seconds, of how
// long the informer cache has been stale (some informer without an open
// watch: cache.Freshness), 0 while every informer watches. Alert on it
// above cache.maxStaleness: beyond that the replica does not place.
func NewCacheStaleness(staleFor func() time.Duration) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: CacheStaleSecondsName,
		Help: "How long the informer cache has been without a watch on some resource (the API server unreachable, a watch broken); 0 while every informer watches.",
	}, func() float64 { return staleFor().Seconds() })
}

// RegisterSeeds exports the per-seed gauges from list, with the allowlisted
// Seed labels labelNames (NewSeedCollector), replacing an earlier Store's.
func (m *Recorder) RegisterSeeds(labelNames []string, list func() []SeedStat) {
	if m == nil || m.reg == nil {
		return
	}
	seedSlots.Lock()
	defer seedSlots.Unlock()
	slot := seedSlots.by[m.reg]
	if slot == nil {
		slot = &seedSlot{}
		m.reg.MustRegister(slot)
		seedSlots.by[m.reg] = slot
	}
	slot.current.Store(NewSeedCollector(labelNames, list).(*seedCollector))
}

// seedSlot is the one per-seed collector registered on a registry; the
// Store it reads is swapped in. It is unchecked (describes nothing) because
// its label names come from the configuration, and a registry keeps the
// label names it first saw for a metric even after the collector is
// unregistered: a second server in one process (tests) with other
// metrics.seedLabels could not register its own.
type seedSlot struct{ current atomic.Pointer[seedCollector] }

func (s *seedSlot) Describe(chan<- *prometheus.Desc) {}

func (s *seedSlot) Collect(ch chan<- prometheus.Metric) {
	if c := s.current.Load(); c != nil {
		c.Collect(ch)
	}
}

var seedSlots = struct {
	sync.Mutex
	by map[prometheus.Registerer]*seedSlot
}{by: map[prometheus.Registerer]*seedSlot{}}

// RegisterCacheStaleness exports seedwarden_cache_stale_seconds from
// staleFor (NewCacheStaleness) and cache.maxStaleness as
// seedwarden_cache_max_staleness_seconds (absent when 0, which disables the
// bound), replacing an earlier cache's. The shipped alert compares the two
// on each replica.
func (m *Recorder) RegisterCacheStaleness(maxStaleness time.Duration, staleFor func() time.Duration) {
	m.registerReplacing(NewCacheStaleness(staleFor))
	if m == nil || m.reg == nil {
		return
	}
	if maxStaleness <= 0 {
		// A bound of an earlier cache in this process (tests) goes too.
		m.reg.Unregister(newMaxStaleness(0))
		return
	}
	m.registerReplacing(newMaxStaleness(maxStaleness))
}

func newMaxStaleness(d time.Duration) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: CacheMaxStalenessName,
		Help: "The configured cache.maxStaleness: beyond it (seedwarden_cache_stale_seconds above it) the replica stops placing and fails /readyz. Absent when 0 (no bound).",
	}, func() float64 { return d.Seconds() })
}
