package pending

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seedwarden/seedwarden/internal/metrics"
)

// The oldest pending age counts from when this replica first saw the
// Shoot pending, follows the oldest one still pending, and is 0 for none.
func TestOldestPendingAge(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
	reg := prometheus.NewRegistry()
	r := &Reconciler{Metrics: metrics.New(reg, metrics.GroupPending), Now: func() time.Time { return now }}
	r.Metrics.SetPendingOldestAge(r.oldestPendingAge)
	a := types.NamespacedName{Namespace: "garden-dev", Name: "a"}
	b := types.NamespacedName{Namespace: "garden-dev", Name: "b"}

	assert.Equal(t, 0.0, gathered(reg, metrics.PendingOldestAgeName, ""), "nothing pending")
	r.track(a)
	now = now.Add(5 * time.Minute)
	r.track(b)
	r.track(a) // seen again: still counted from the first time
	now = now.Add(time.Minute)
	assert.Equal(t, (6 * time.Minute).Seconds(), gathered(reg, metrics.PendingOldestAgeName, ""))
	r.forget(a)
	assert.Equal(t, time.Minute.Seconds(), gathered(reg, metrics.PendingOldestAgeName, ""), "b is the oldest left")
	r.forget(b)
	assert.Equal(t, 0.0, gathered(reg, metrics.PendingOldestAgeName, ""))
}

// The leader gauge is 1 exactly while the runnable (started where the
// controller runs) lives.
func TestReportLeader(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := &Reconciler{Metrics: metrics.New(reg, metrics.GroupPending)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.reportLeader(ctx) }()
	require.Eventually(t, func() bool { return gathered(reg, metrics.RetryControllerLeaderName, "") == 1 }, 5*time.Second, time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	assert.Equal(t, 0.0, gathered(reg, metrics.RetryControllerLeaderName, ""))
}
