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
		{Name: "seed-a", Provider: "aws", Region: "eu-west-1", Labels: []string{"set-1", "prod"}, Shoots: 2, Usage: 3, Allocatable: 10, HasAllocatable: true},
		{Name: "seed-b", Provider: "gcp", Region: "us-east1", Labels: []string{"", "dev"}},
		{Name: "seed-c", Provider: "aws", Region: "eu-west-1", Labels: []string{"set-1"}, Shoots: 1, Usage: 1, HasAllocatable: true}, // allocatable 0, one label short
		{Name: "seed-a", Usage: 99}, // duplicate: must not break the scrape
	}
	list := func() []SeedStat {
		mu.Lock()
		defer mu.Unlock()
		return append([]SeedStat(nil), stats...)
	}
	names := []string{"label_seedmanagement_gardener_cloud_managed_seed_set", "label_environment"}
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(NewSeedCollector(names, list)))

	all := []string{SeedShootsName, SeedChargedShootsName, SeedAllocatableShootsName, SeedUtilizationName}
	const a = `label_environment="prod",label_seedmanagement_gardener_cloud_managed_seed_set="set-1",provider="aws",region="eu-west-1",seed="seed-a"`
	const b = `label_environment="dev",label_seedmanagement_gardener_cloud_managed_seed_set="",provider="gcp",region="us-east1",seed="seed-b"`
	const c = `label_environment="",label_seedmanagement_gardener_cloud_managed_seed_set="set-1",provider="aws",region="eu-west-1",seed="seed-c"`
	want := seedHeaders[SeedAllocatableShootsName] + `seedwarden_seed_allocatable_shoots{` + a + `} 10
seedwarden_seed_allocatable_shoots{` + c + `} 0
` + seedHeaders[SeedShootsName] + `seedwarden_seed_shoots{` + a + `} 2
seedwarden_seed_shoots{` + b + `} 0
seedwarden_seed_shoots{` + c + `} 1
` + seedHeaders[SeedChargedShootsName] + `seedwarden_seed_charged_shoots{` + a + `} 3
seedwarden_seed_charged_shoots{` + b + `} 0
seedwarden_seed_charged_shoots{` + c + `} 1
` + seedHeaders[SeedUtilizationName] + `seedwarden_seed_utilization_ratio{` + a + `} 0.3
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), all...))

	// Values are read at scrape time; a seed that is gone is gone.
	mu.Lock()
	stats = []SeedStat{{Name: "seed-b", Shoots: 7, Usage: 9, Allocatable: 8, HasAllocatable: true}}
	mu.Unlock()
	const b2 = `label_environment="",label_seedmanagement_gardener_cloud_managed_seed_set="",provider="",region="",seed="seed-b"`
	want = seedHeaders[SeedAllocatableShootsName] + `seedwarden_seed_allocatable_shoots{` + b2 + `} 8
` + seedHeaders[SeedShootsName] + `seedwarden_seed_shoots{` + b2 + `} 7
` + seedHeaders[SeedChargedShootsName] + `seedwarden_seed_charged_shoots{` + b2 + `} 9
` + seedHeaders[SeedUtilizationName] + `seedwarden_seed_utilization_ratio{` + b2 + `} 1.125
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), all...))

	// No seeds: no series, and no error.
	mu.Lock()
	stats = nil
	mu.Unlock()
	n, err := testutil.GatherAndCount(reg)
	require.NoError(t, err)
	assert.Zero(t, n)

	problems, err := testutil.CollectAndLint(NewSeedCollector(names, list))
	require.NoError(t, err)
	assert.Empty(t, problems)
}

var seedHeaders = map[string]string{
	SeedAllocatableShootsName: `
# HELP seedwarden_seed_allocatable_shoots The seed's status.allocatable.shoots; absent when the seed sets no limit.
# TYPE seedwarden_seed_allocatable_shoots gauge
`,
	SeedShootsName: `
# HELP seedwarden_seed_shoots Shoots scheduled to the seed as gardener-scheduler counts them: spec.seedName, plus status.seedName while a Shoot migrates; reservations excluded.
# TYPE seedwarden_seed_shoots gauge
`,
	SeedChargedShootsName: `
# HELP seedwarden_seed_charged_shoots Shoots charged to the seed when placing: seedwarden_seed_shoots plus the in-flight reservations of Shoots being admitted.
# TYPE seedwarden_seed_charged_shoots gauge
`,
	SeedUtilizationName: `
# HELP seedwarden_seed_utilization_ratio seedwarden_seed_charged_shoots divided by seedwarden_seed_allocatable_shoots; absent when the seed sets no limit or a limit of 0.
# TYPE seedwarden_seed_utilization_ratio gauge
`,
}

func TestSeedCollectorWithoutSeedLabels(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(NewSeedCollector(nil, func() []SeedStat {
		return []SeedStat{{Name: "s", Provider: "aws", Region: "r", Labels: []string{"ignored"}, Shoots: 1, Usage: 1}}
	})))
	want := seedHeaders[SeedShootsName] + `seedwarden_seed_shoots{provider="aws",region="r",seed="s"} 1
` + seedHeaders[SeedChargedShootsName] + `seedwarden_seed_charged_shoots{provider="aws",region="r",seed="s"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), SeedShootsName, SeedChargedShootsName, SeedAllocatableShootsName, SeedUtilizationName))
}

func TestSeedCollectorSkipsInvalidNames(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(NewSeedCollector([]string{"label_x"}, func() []SeedStat {
		return []SeedStat{
			{Name: "bad-\xff", Usage: 1, HasAllocatable: true},
			{Name: "bad-label", Labels: []string{"\xff"}, Usage: 1, Allocatable: 1, HasAllocatable: true},
			{Name: "ok", Usage: 2},
		}
	})))
	n, err := testutil.GatherAndCount(reg, SeedChargedShootsName, SeedAllocatableShootsName, SeedShootsName, SeedUtilizationName)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "usage and shoots of ok")

	assert.NotPanics(t, func() {
		assert.Zero(t, testutil.CollectAndCount(NewSeedCollector(nil, nil)))
	})
}

func TestHeadroomMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg, GroupHeadroom)
	m.SetHeadroom("aws-small", 37, time.Unix(1700000000, 500e6), 3*time.Millisecond)
	m.SetHeadroom("aws-small", 36, time.Unix(1700000060, 0), 2*time.Millisecond)
	m.SetHeadroom("gcp", 0, time.Unix(1700000060, 0), time.Millisecond)
	m.SetHeadroomAlertThreshold("aws-small", 10)
	m.SetSoftHeadroom("aws-small", 20)
	want := `
# HELP seedwarden_headroom_alert_threshold_shoots The profile's headroom.profiles[].alertBelow: the shipped alert fires while seedwarden_headroom_shoots is below it. Absent for profiles without one.
# TYPE seedwarden_headroom_alert_threshold_shoots gauge
seedwarden_headroom_alert_threshold_shoots{profile="aws-small"} 10
# HELP seedwarden_headroom_last_success_timestamp_seconds When the profile's headroom was last computed, in Unix seconds.
# TYPE seedwarden_headroom_last_success_timestamp_seconds gauge
seedwarden_headroom_last_success_timestamp_seconds{profile="aws-small"} 1.70000006e+09
seedwarden_headroom_last_success_timestamp_seconds{profile="gcp"} 1.70000006e+09
# HELP seedwarden_headroom_shoots How many more Shoots like the profile's template the landscape takes right now (placed one after another by the placement rules, up to the profile's limit), as last computed.
# TYPE seedwarden_headroom_shoots gauge
seedwarden_headroom_shoots{profile="aws-small"} 36
seedwarden_headroom_shoots{profile="gcp"} 0
# HELP seedwarden_headroom_soft_shoots How many more Shoots like the profile's template fit with every seed held to its soft limit (placement policies: policies.softLimitPercent, the seedwarden.io/soft-limit-percent annotation), as last computed; seedwarden_headroom_shoots where no seed has a soft limit.
# TYPE seedwarden_headroom_soft_shoots gauge
seedwarden_headroom_soft_shoots{profile="aws-small"} 20
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), HeadroomShootsName, HeadroomSoftShootsName, HeadroomAlertThresholdName, HeadroomLastSuccessName))
	n, err := testutil.GatherAndCount(reg, HeadroomDurationName)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "one histogram per profile")
	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems)

	var none *Recorder
	assert.NotPanics(t, func() {
		none.SetHeadroom("p", 1, time.Now(), time.Second)
		none.SetHeadroomAlertThreshold("p", 1)
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
