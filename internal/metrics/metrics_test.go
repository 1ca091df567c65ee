package metrics

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestObserveDecision(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg)

	m.ObserveDecision(ResultScheduled, "SameRegion", 3*time.Microsecond)
	m.ObserveDecision(ResultScheduled, "SameRegion", 40*time.Microsecond)
	m.ObserveDecision(ResultUnschedulable, "SameRegion", 2*time.Millisecond)
	m.ObserveDecision(ResultSkipped, "MinimalDistance", 0)
	m.ObserveDecision(ResultError, "MinimalDistance", time.Second)

	want := `
# HELP seedwarden_scheduling_decisions_total Shoot admissions handled by the placing webhook, by result (scheduled, unschedulable, skipped, error) and strategy.
# TYPE seedwarden_scheduling_decisions_total counter
seedwarden_scheduling_decisions_total{result="error",strategy="MinimalDistance"} 1
seedwarden_scheduling_decisions_total{result="scheduled",strategy="SameRegion"} 2
seedwarden_scheduling_decisions_total{result="skipped",strategy="MinimalDistance"} 1
seedwarden_scheduling_decisions_total{result="unschedulable",strategy="SameRegion"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), DecisionsTotalName))

	wantHist := `
# HELP seedwarden_scheduling_duration_seconds Time to handle one Shoot admission in the placing webhook, from decoding the request to the response.
# TYPE seedwarden_scheduling_duration_seconds histogram
seedwarden_scheduling_duration_seconds_bucket{le="1e-06"} 1
seedwarden_scheduling_duration_seconds_bucket{le="2.5e-06"} 1
seedwarden_scheduling_duration_seconds_bucket{le="5e-06"} 2
seedwarden_scheduling_duration_seconds_bucket{le="1e-05"} 2
seedwarden_scheduling_duration_seconds_bucket{le="2.5e-05"} 2
seedwarden_scheduling_duration_seconds_bucket{le="5e-05"} 3
seedwarden_scheduling_duration_seconds_bucket{le="0.0001"} 3
seedwarden_scheduling_duration_seconds_bucket{le="0.00025"} 3
seedwarden_scheduling_duration_seconds_bucket{le="0.0005"} 3
seedwarden_scheduling_duration_seconds_bucket{le="0.001"} 3
seedwarden_scheduling_duration_seconds_bucket{le="0.0025"} 4
seedwarden_scheduling_duration_seconds_bucket{le="0.005"} 4
seedwarden_scheduling_duration_seconds_bucket{le="0.01"} 4
seedwarden_scheduling_duration_seconds_bucket{le="0.025"} 4
seedwarden_scheduling_duration_seconds_bucket{le="0.05"} 4
seedwarden_scheduling_duration_seconds_bucket{le="0.1"} 4
seedwarden_scheduling_duration_seconds_bucket{le="+Inf"} 5
seedwarden_scheduling_duration_seconds_sum 1.002043
seedwarden_scheduling_duration_seconds_count 5
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(wantHist), DurationName))

	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems)
}

func TestNewTwice(t *testing.T) {
	// Fresh registries each get their own collectors: no shared globals.
	r1, r2 := prometheus.NewRegistry(), prometheus.NewRegistry()
	m1, m2 := New(r1), New(r2)
	m1.ObserveDecision(ResultScheduled, "SameRegion", time.Microsecond)
	assert.Equal(t, 1.0, testutil.ToFloat64(m1.decisions.WithLabelValues(ResultScheduled, "SameRegion")))
	assert.Equal(t, 0.0, testutil.ToFloat64(m2.decisions.WithLabelValues(ResultScheduled, "SameRegion")))

	// The same registry twice reuses what is there instead of panicking.
	m3 := New(r1)
	m3.ObserveDecision(ResultScheduled, "SameRegion", time.Microsecond)
	assert.Equal(t, 2.0, testutil.ToFloat64(m1.decisions.WithLabelValues(ResultScheduled, "SameRegion")))

	// Unregistered collectors work too.
	assert.NotPanics(t, func() { New(nil).ObserveDecision(ResultError, "", 0) })
}

func TestConflictingRegistrationPanics(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: DecisionsTotalName, Help: "other"}))
	assert.Panics(t, func() { New(reg) })
}

func TestNilMetrics(t *testing.T) {
	var m *Recorder
	assert.NotPanics(t, func() { m.ObserveDecision(ResultScheduled, "SameRegion", time.Millisecond) })
}

func TestSeedCollector(t *testing.T) {
	var mu sync.Mutex
	stats := []SeedStat{
		{Name: "seed-a", Usage: 3, Allocatable: 10, HasAllocatable: true},
		{Name: "seed-b", Usage: 0},
		{Name: "seed-a", Usage: 99}, // duplicate: must not break the scrape
	}
	list := func() []SeedStat {
		mu.Lock()
		defer mu.Unlock()
		return append([]SeedStat(nil), stats...)
	}
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(NewSeedCollector(list)))

	const header = `
# HELP seedwarden_seed_allocatable The seed's status.allocatable.shoots; absent when the seed sets no limit.
# TYPE seedwarden_seed_allocatable gauge
`
	const usageHeader = `
# HELP seedwarden_seed_usage Shoots charged to the seed (spec and status seed names, plus in-flight reservations).
# TYPE seedwarden_seed_usage gauge
`
	want := header + `seedwarden_seed_allocatable{seed="seed-a"} 10
` + usageHeader + `seedwarden_seed_usage{seed="seed-a"} 3
seedwarden_seed_usage{seed="seed-b"} 0
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), SeedUsageName, SeedAllocatableName))

	// Values are read at scrape time; a seed that is gone is gone.
	mu.Lock()
	stats = []SeedStat{{Name: "seed-b", Usage: 7, Allocatable: 8, HasAllocatable: true}}
	mu.Unlock()
	want = header + `seedwarden_seed_allocatable{seed="seed-b"} 8
` + usageHeader + `seedwarden_seed_usage{seed="seed-b"} 7
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), SeedUsageName, SeedAllocatableName))

	// No seeds: no series, and no error.
	mu.Lock()
	stats = nil
	mu.Unlock()
	n, err := testutil.GatherAndCount(reg)
	require.NoError(t, err)
	assert.Zero(t, n)

	problems, err := testutil.CollectAndLint(NewSeedCollector(list))
	require.NoError(t, err)
	assert.Empty(t, problems)
}

func TestSeedCollectorSkipsInvalidNames(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(NewSeedCollector(func() []SeedStat {
		return []SeedStat{{Name: "bad-\xff", Usage: 1, HasAllocatable: true}, {Name: "ok", Usage: 2}}
	})))
	n, err := testutil.GatherAndCount(reg, SeedUsageName, SeedAllocatableName)
	require.NoError(t, err)
	assert.Equal(t, 1, n)

	assert.NotPanics(t, func() {
		assert.Zero(t, testutil.CollectAndCount(NewSeedCollector(nil)))
	})
}

func TestCacheStaleness(t *testing.T) {
	stale := time.Duration(0)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(NewCacheStaleness(func() time.Duration { return stale })))
	want := func(v string) string {
		return `# HELP seedwarden_cache_stale_seconds How long the informer cache has been without a watch on some resource (the API server unreachable, a watch broken); 0 while every informer watches.
# TYPE seedwarden_cache_stale_seconds gauge
seedwarden_cache_stale_seconds ` + v + "\n"
	}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want("0")), CacheStaleSecondsName))
	stale = 45500 * time.Millisecond
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want("45.5")), CacheStaleSecondsName), "read at every scrape")
}
