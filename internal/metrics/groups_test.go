package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A group's collectors are registered only when asked for: a part of
// seedwarden that is off exports nothing.
func TestGroupsRegisteredOnRequest(t *testing.T) {
	gathered := func(groups ...Group) []string {
		reg := prometheus.NewPedanticRegistry()
		m := New(reg, groups...)
		m.SetPending(0)
		m.ObserveReservationConflict()
		m.SetCertificateReady("ns", "cert", true)
		m.SetHeadroom("p", 1, time.Unix(1, 0), time.Millisecond)
		mfs, err := reg.Gather()
		require.NoError(t, err)
		var names []string
		for _, mf := range mfs {
			names = append(names, mf.GetName())
		}
		return names
	}
	none := gathered()
	assert.NotContains(t, none, PendingShootsName)
	assert.NotContains(t, none, ReservationConflictsName)
	assert.NotContains(t, none, ReservationBatchSizeName)
	assert.NotContains(t, none, CertificateReadyName)
	assert.NotContains(t, none, HeadroomShootsName)
	all := gathered(GroupPending, GroupReservations, GroupCertificates, GroupHeadroom)
	assert.Subset(t, all, []string{PendingShootsName, ReservationConflictsName, ReservationBatchSizeName, CertificateReadyName, HeadroomShootsName})
	assert.Panics(t, func() { New(prometheus.NewRegistry(), Group(99)) })
}

func TestReservations(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg, GroupReservations)
	m.ObserveReservation(OperationReserve, ReservationOK, 2*time.Millisecond)
	m.ObserveReservation(OperationReserve, ReservationFull, 2*time.Millisecond)
	m.ObserveReservation(OperationCheck, ReservationError, 2*time.Millisecond)
	m.ObserveReservationConflict()
	m.ObserveReservationBatch(3)

	assert.Equal(t, 3, testutil.CollectAndCount(m.reservations.duration))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.reservations.conflicts))
	want := `
# HELP seedwarden_capacity_reservation_conflicts_total Writes of a seed's reservation ConfigMap that another replica's write beat (409 Conflict or AlreadyExists); each is retried.
# TYPE seedwarden_capacity_reservation_conflicts_total counter
seedwarden_capacity_reservation_conflicts_total 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), ReservationConflictsName))
	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems)

	var none *Recorder
	assert.NotPanics(t, func() {
		none.ObserveReservation(OperationCheck, ReservationOK, 0)
		none.ObserveReservationConflict()
		none.ObserveReservationBatch(1)
	})
}

func TestCertificates(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg, GroupCertificates)
	notAfter := time.Unix(1_900_000_000, 0)
	m.SetCertificateReady("ns", "cert", true)
	m.SetCertificateExpiry("ns", "cert", &notAfter)
	want := `
# HELP seedwarden_certificate_expiry_timestamp_seconds status.notAfter of the webhook's cert-manager Certificate, in Unix seconds; absent while the Certificate has none.
# TYPE seedwarden_certificate_expiry_timestamp_seconds gauge
seedwarden_certificate_expiry_timestamp_seconds{certificate="cert",certificate_namespace="ns"} 1.9e+09
# HELP seedwarden_certificate_ready 1 when the webhook's cert-manager Certificate has condition Ready=True, else 0 (also when it is missing or cannot be watched).
# TYPE seedwarden_certificate_ready gauge
seedwarden_certificate_ready{certificate="cert",certificate_namespace="ns"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), CertificateExpiryTimestampName, CertificateReadyName))

	m.SetCertificateReady("ns", "cert", false)
	m.SetCertificateExpiry("ns", "cert", nil)
	want = `
# HELP seedwarden_certificate_ready 1 when the webhook's cert-manager Certificate has condition Ready=True, else 0 (also when it is missing or cannot be watched).
# TYPE seedwarden_certificate_ready gauge
seedwarden_certificate_ready{certificate="cert",certificate_namespace="ns"} 0
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), CertificateExpiryTimestampName, CertificateReadyName))

	var none *Recorder
	assert.NotPanics(t, func() {
		none.SetCertificateReady("ns", "cert", true)
		none.SetCertificateExpiry("ns", "cert", nil)
	})
}

// The scrape-time gauges replace those of an earlier Store or cache (a
// second server in one process) instead of panicking.
func TestRegisterSeedsReplaces(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg)
	m.RegisterSeeds(nil, func() []SeedStat { return []SeedStat{{Name: "old", Usage: 1}} })
	m.RegisterSeeds([]string{"label_env"}, func() []SeedStat { return []SeedStat{{Name: "new", Usage: 2}} })
	m.RegisterCacheStaleness(time.Minute, func() time.Duration { return time.Second })
	m.RegisterCacheStaleness(30*time.Second, func() time.Duration { return 2 * time.Second })
	want := `
# HELP seedwarden_cache_max_staleness_seconds The configured cache.maxStaleness: beyond it (seedwarden_cache_stale_seconds above it) the replica stops placing and fails /readyz. Absent when 0 (no bound).
# TYPE seedwarden_cache_max_staleness_seconds gauge
seedwarden_cache_max_staleness_seconds 30
# HELP seedwarden_cache_stale_seconds How long the informer cache has been without a watch on some resource (the API server unreachable, a watch broken); 0 while every informer watches.
# TYPE seedwarden_cache_stale_seconds gauge
seedwarden_cache_stale_seconds 2
# HELP seedwarden_seed_charged_shoots Shoots charged to the seed when placing: seedwarden_seed_shoots plus the in-flight reservations of Shoots being admitted.
# TYPE seedwarden_seed_charged_shoots gauge
seedwarden_seed_charged_shoots{label_env="",provider="",region="",seed="new"} 2
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), SeedChargedShootsName, CacheStaleSecondsName, CacheMaxStalenessName))
	// cache.maxStaleness 0: no bound, no threshold series.
	m.RegisterCacheStaleness(0, func() time.Duration { return 0 })
	n, err := testutil.GatherAndCount(reg, CacheMaxStalenessName)
	require.NoError(t, err)
	assert.Zero(t, n)

	assert.NotPanics(t, func() {
		New(nil).RegisterSeeds(nil, nil)
		var none *Recorder
		none.RegisterCacheStaleness(time.Second, nil)
	})
}
