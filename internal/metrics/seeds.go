package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/sets"
)

// The gauges read at scrape time: per-seed usage from the Store, and the
// informer cache's staleness.

// SeedStat is the state of one seed at scrape time.
type SeedStat struct {
	Name           string
	Usage          int64
	Allocatable    int64
	HasAllocatable bool
}

var (
	seedUsageDesc = prometheus.NewDesc(SeedUsageName,
		"Shoots charged to the seed (spec and status seed names, plus in-flight reservations).",
		[]string{"seed"}, nil)
	seedAllocatableDesc = prometheus.NewDesc(SeedAllocatableName,
		"The seed's status.allocatable.shoots; absent when the seed sets no limit.",
		[]string{"seed"}, nil)
)

// seedCollector reads seed state at scrape time, so there are no per-event
// gauge updates and deleted seeds vanish from the output instead of lingering
// as stale series.
type seedCollector struct {
	list func() []SeedStat
}

// NewSeedCollector returns a collector producing seedwarden_seed_usage and
// seedwarden_seed_allocatable from list, called once per scrape (it must be
// safe for concurrent use and cheap: it runs on every scrape).
func NewSeedCollector(list func() []SeedStat) prometheus.Collector {
	return &seedCollector{list: list}
}

func (c *seedCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- seedUsageDesc
	ch <- seedAllocatableDesc
}

func (c *seedCollector) Collect(ch chan<- prometheus.Metric) {
	if c.list == nil {
		return
	}
	stats := c.list()
	// A duplicate name would fail the whole scrape ("collected before with
	// the same name and label values"); keep the first.
	seen := sets.New[string]()
	for _, s := range stats {
		if seen.Has(s.Name) {
			continue
		}
		seen.Insert(s.Name)
		// NewConstMetric only fails for label values that are not valid
		// UTF-8, which seed names (DNS labels) never are; skipping such a
		// seed beats failing every scrape.
		m, err := prometheus.NewConstMetric(seedUsageDesc, prometheus.GaugeValue, float64(s.Usage), s.Name)
		if err != nil {
			continue
		}
		ch <- m
		if s.HasAllocatable {
			if m, err := prometheus.NewConstMetric(seedAllocatableDesc, prometheus.GaugeValue, float64(s.Allocatable), s.Name); err == nil {
				ch <- m
			}
		}
	}
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

// RegisterSeeds exports seedwarden_seed_usage and seedwarden_seed_allocatable
// from list (NewSeedCollector), replacing an earlier Store's.
func (m *Recorder) RegisterSeeds(list func() []SeedStat) {
	m.registerReplacing(NewSeedCollector(list))
}

// RegisterCacheStaleness exports seedwarden_cache_stale_seconds from
// staleFor (NewCacheStaleness), replacing an earlier cache's.
func (m *Recorder) RegisterCacheStaleness(staleFor func() time.Duration) {
	m.registerReplacing(NewCacheStaleness(staleFor))
}
