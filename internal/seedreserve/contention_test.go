package seedreserve

import (
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/metrics"
)

// A replica that does not lead learns that another writes a seed's
// ConfigMap from the write of its own that the other's beat, and leaves
// that seed to the leader for deferAfterConflict; the leader never defers,
// and without Options.Leading nobody does.
func TestDefersToTheLeaderAfterAConflict(t *testing.T) {
	clk := newClock()
	c := newFake(nil)
	local := landscape(map[string]int64{"s": 10, "t": 10}, nil)
	leading := false
	r := newTestReserver(t, c, local, clk, func(o *Options) { o.Leading = func() bool { return leading } })
	leader := newTestReserver(t, c, local, clk, func(o *Options) { o.Leading = func() bool { return true } })
	alone := newTestReserver(t, c, local, clk)

	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a", "", 10))
	require.NoError(t, r.Reserve(ctx, "t", "garden-dev/t", "", 10))
	assert.False(t, r.Defers("s"), "no other writer yet")
	require.NoError(t, leader.Reserve(ctx, "s", "garden-dev/b", "", 10))
	assert.False(t, r.Defers("s"), "r has not written since")

	// r's copy is stale: its update is refused, then it reads and writes.
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/c", "", 10))
	assert.Len(t, entries(t, c, "s"), 3)
	assert.True(t, r.Defers("s"))
	assert.False(t, r.Defers("t"), "per seed")
	assert.False(t, r.Defers("unknown"))
	leading = true
	assert.False(t, r.Defers("s"), "the leader never defers")
	leading = false

	// The leader's and a lone replica's copies are stale now too.
	require.NoError(t, leader.Reserve(ctx, "s", "garden-dev/d", "", 10))
	require.NoError(t, alone.Reserve(ctx, "s", "garden-dev/e", "", 10))
	require.NoError(t, leader.Reserve(ctx, "s", "garden-dev/f", "", 10))
	assert.False(t, leader.Defers("s"), "the leader's write was beaten, and it never defers")
	assert.False(t, alone.Defers("s"), "no Options.Leading: nobody defers")

	clk.Step(deferAfterConflict - 1)
	assert.True(t, r.Defers("s"))
	clk.Step(1)
	assert.False(t, r.Defers("s"))
}

// After a stale copy the leader decides on its copy again at once (the
// others leave it the seed); a replica that does not lead, or one without
// Options.Leading, reads first for staleCopyPause.
func TestLeaderTrustsItsCopyAgainAtOnce(t *testing.T) {
	for _, tt := range []struct {
		name    string
		leading func() bool
		want    []string
	}{
		{name: "leader", leading: func() bool { return true }, want: []string{"UPDATE"}},
		{name: "not the leader", leading: func() bool { return false }, want: []string{"GET", "UPDATE"}},
		{name: "no leader", want: []string{"GET", "UPDATE"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls := &apiCalls{}
			c := countingFake(calls)
			clk := newClock()
			local := landscape(map[string]int64{"s": 10}, nil)
			r := newTestReserver(t, c, local, clk, noLimits, func(o *Options) { o.Leading = tt.leading })
			other := newTestReserver(t, c, local, clk, noLimits)
			require.NoError(t, create(r, "s", "garden-dev/a", "ci", 10))
			require.NoError(t, create(other, "s", "garden-dev/o", "ci", 10))
			require.NoError(t, create(r, "s", "garden-dev/b", "ci", 10))
			calls.take()
			require.NoError(t, create(r, "s", "garden-dev/c", "ci", 10))
			assert.Equal(t, tt.want, calls.take())
			assert.Len(t, entries(t, c, "s"), 4)
		})
	}
}

// A deferred placement stands without a reservation, as at a limit: the
// mutating webhook admits the Shoot without a seed, nothing is reserved
// across replicas or held in memory. Dry runs and the seeds not deferred
// reserve as ever.
func TestClusterPlacerDefersToLeader(t *testing.T) {
	tests := []struct {
		name      string
		deferred  map[string]bool
		dryRun    bool
		wantCalls []string
		wantDefer bool
	}{
		{name: "seed contended: left to the leader", deferred: map[string]bool{"a": true}, wantDefer: true},
		{name: "another seed contended", deferred: map[string]bool{"b": true}, wantCalls: []string{"reserve a garden-dev/crazy-botany 10"}},
		{name: "dry run: checked, never deferred", deferred: map[string]bool{"a": true}, dryRun: true, wantCalls: []string{"check a garden-dev/crazy-botany 10"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := placerStore()
			cluster := &seedCluster{}
			reg := prometheus.NewRegistry()
			p := &ClusterPlacer{Local: store, Cluster: cluster, Defer: func(seed string) bool { return tt.deferred[seed] },
				Metrics: metrics.New(reg, metrics.GroupReservations), Log: logr.Discard()}
			key := "uid-1"
			if tt.dryRun {
				key = ""
			}
			d, unreserved := p.Place(t.Context(), placerShoot("crazy-botany"), placerOptions, key, "")
			assert.Equal(t, "a", d.Seed, "the decision is the same")
			assert.Equal(t, tt.wantCalls, cluster.calls)
			_, held := store.Reservation("uid-1")
			if tt.wantDefer {
				var deferred *DeferredError
				require.ErrorAs(t, unreserved, &deferred)
				assert.Equal(t, "a", deferred.Seed)
				assert.Contains(t, unreserved.Error(), `seed "a"`)
				assert.False(t, held, "nothing held in memory")
				assert.Zero(t, store.Usage("a"))
				assert.InDelta(t, 1, counterValue(t, reg, metrics.ReservationDeferralsName), 0)
				return
			}
			require.NoError(t, unreserved)
			assert.Equal(t, !tt.dryRun, held)
			assert.Zero(t, counterValue(t, reg, metrics.ReservationDeferralsName))
		})
	}
}
