package metrics

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPending(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	p := New(reg, GroupPending)
	p.SetPending(3)
	p.ObserveRetry(ResultUnschedulable)
	p.ObserveRetry(ResultUnschedulable)
	p.ObserveRetry(ResultConflict)
	p.ObserveRetry(ResultRefused)
	p.ObserveRetry(ResultScheduled)
	p.SetPending(2)

	want := `
# HELP seedwarden_pending_shoots Shoots without a seed that the retry controller knows of and keeps trying to place (0 on replicas that are not the leader).
# TYPE seedwarden_pending_shoots gauge
seedwarden_pending_shoots 2
# HELP seedwarden_scheduling_retries_total Placement attempts of the retry controller for pending Shoots, by result (scheduled, unschedulable, conflict, refused, error).
# TYPE seedwarden_scheduling_retries_total counter
seedwarden_scheduling_retries_total{result="conflict"} 1
seedwarden_scheduling_retries_total{result="refused"} 1
seedwarden_scheduling_retries_total{result="scheduled"} 1
seedwarden_scheduling_retries_total{result="unschedulable"} 2
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), PendingShootsName, SchedulingRetriesName))
	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems)

	// Registering again reuses the collectors.
	again := New(reg, GroupPending)
	again.ObserveRetry(ResultScheduled)
	assert.Equal(t, 2.0, testutil.ToFloat64(p.pending.retries.WithLabelValues(ResultScheduled)))
}

// The leader gauge follows the controller; the oldest pending age is read
// at scrape time from the controller's function, and a second Recorder on
// the same registry (a second server in one process) takes it over.
func TestPendingLeaderAndOldestAge(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	p := New(reg, GroupPending)
	age := 90 * time.Second
	gauge := func(name string) float64 {
		mfs, err := reg.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() == name {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatalf("%s not gathered", name)
		return 0
	}
	assert.Equal(t, 0.0, gauge(PendingOldestAgeName), "no source yet")
	assert.Equal(t, 0.0, gauge(RetryControllerLeaderName))
	p.SetPendingOldestAge(func() time.Duration { return age })
	p.SetRetryControllerLeader(true)
	assert.Equal(t, 90.0, gauge(PendingOldestAgeName))
	assert.Equal(t, 1.0, gauge(RetryControllerLeaderName))
	age = 2 * time.Minute
	assert.Equal(t, 120.0, gauge(PendingOldestAgeName), "read at scrape time")
	p.SetRetryControllerLeader(false)
	assert.Equal(t, 0.0, gauge(RetryControllerLeaderName))

	again := New(reg, GroupPending)
	again.SetPendingOldestAge(func() time.Duration { return time.Second })
	assert.Equal(t, 1.0, gauge(PendingOldestAgeName))

	// The longest backoff step, the same way.
	assert.Equal(t, 0.0, gauge(PendingLongestBackoffName), "no source yet")
	again.SetPendingLongestBackoff(func() time.Duration { return 30 * time.Second })
	assert.Equal(t, 30.0, gauge(PendingLongestBackoffName))
	third := New(reg, GroupPending)
	third.SetPendingLongestBackoff(func() time.Duration { return time.Minute })
	assert.Equal(t, 60.0, gauge(PendingLongestBackoffName), "a second Recorder takes it over")
	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems)
}

func TestPendingNil(t *testing.T) {
	var p *Recorder
	p.SetPending(1)
	p.ObserveRetry(ResultError)
	p.SetRetryControllerLeader(true)
	p.SetPendingOldestAge(func() time.Duration { return 0 })
	p.SetPendingLongestBackoff(func() time.Duration { return 0 })
	New(nil, GroupPending).ObserveRetry(ResultError)
}

func TestPendingReasons(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg, GroupPending)
	assert.Empty(t, gatherPendingReasons(t, reg), "nothing until the controller sets a reader")
	counts := map[PendingReasonKey]int{{"TaintNotTolerated", "aws", "eu-west-1"}: 2, {"SeedFull", "aws", "eu-west-1"}: 1}
	m.SetPendingReasons(func() map[PendingReasonKey]int { return counts })
	assert.Equal(t, counts, gatherPendingReasons(t, reg))
	m.SetPendingReasons(nil)
	assert.Empty(t, gatherPendingReasons(t, reg), "a replica that stopped leading reports none")

	// Past MaxPendingRegions pairs, the last by name count as "other".
	many := map[PendingReasonKey]int{}
	for i := range MaxPendingRegions + 2 {
		many[PendingReasonKey{"SeedFull", "aws", fmt.Sprintf("r%03d", i)}] = 1
	}
	m.SetPendingReasons(func() map[PendingReasonKey]int { return many })
	got := gatherPendingReasons(t, reg)
	assert.Len(t, got, MaxPendingRegions+1)
	assert.Equal(t, 2, got[PendingReasonKey{"SeedFull", OtherLabelValue, OtherLabelValue}])
	assert.Equal(t, 1, got[PendingReasonKey{"SeedFull", "aws", "r000"}])
}

func gatherPendingReasons(t *testing.T, reg prometheus.Gatherer) map[PendingReasonKey]int {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	out := map[PendingReasonKey]int{}
	for _, mf := range families {
		if mf.GetName() != PendingUnschedulableName {
			continue
		}
		for _, s := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range s.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			out[PendingReasonKey{l["reason"], l["provider"], l["region"]}] = int(s.GetGauge().GetValue())
		}
	}
	return out
}
