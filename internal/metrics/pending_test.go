package metrics

import (
	"strings"
	"testing"

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
	p.ObserveRetry(ResultScheduled)
	p.SetPending(2)

	want := `
# HELP seedwarden_pending_shoots Shoots without a seed that the retry controller knows of and keeps trying to place (0 on replicas that are not the leader).
# TYPE seedwarden_pending_shoots gauge
seedwarden_pending_shoots 2
# HELP seedwarden_scheduling_retries_total Placement attempts of the retry controller for pending Shoots, by result (scheduled, unschedulable, conflict, error).
# TYPE seedwarden_scheduling_retries_total counter
seedwarden_scheduling_retries_total{result="conflict"} 1
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

func TestPendingNil(t *testing.T) {
	var p *Recorder
	p.SetPending(1)
	p.ObserveRetry(ResultError)
	New(nil, GroupPending).ObserveRetry(ResultError)
}
