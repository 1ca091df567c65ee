package seedreserve

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/cache"
)

// The leader's bind of an announced Shoot finds the admission's entry under
// the identity the Shoot carries (seedwarden.io/reservation) and keeps it as
// written: one GET, no update. An entry of another identity, or one that
// would not last keptUntil (with the defaults: older than 5 s; the bound
// Shoot must reach every watch before it ends), is written afresh, and the
// seed's capacity still decides.
func TestBindOfAnnouncedShootKeepsTheAdmissionEntry(t *testing.T) {
	tests := []struct {
		name      string
		announced func(key string) string
		age       time.Duration
		wantWrite bool
	}{
		{name: "the admission's entry", announced: requestUID},
		{name: "no announcement", announced: func(string) string { return "" }, wantWrite: true},
		{name: "another identity", announced: func(string) string { return "req-someone-else" }, wantWrite: true},
		{name: "4 s old", announced: requestUID, age: 4 * time.Second},
		{name: "6 s old: it might end before every watch shows the bound Shoot", announced: requestUID, age: 6 * time.Second, wantWrite: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			c := newFake(nil)
			local := landscape(map[string]int64{"s": 1}, nil)
			r := newTestReserver(t, c, local, clk, noLimits)
			const key = "garden-dev/a"
			require.NoError(t, create(r, "s", key, "ci", 1))
			local.Apply(pendingShoot("garden-dev", "a"))
			written := entries(t, c, "s")["garden-dev.a"]
			rv := resourceVersion(t, c, "s")
			clk.Step(tc.age)

			h := cache.Holder{ShootRef: cache.ShootRef{Key: key, ID: "uid-a"}, Exists: true, Announced: tc.announced(key)}
			require.NoError(t, r.ReserveFor(ctx, "s", h, 1), "the Shoot's own place")
			if !tc.wantWrite {
				assert.Equal(t, rv, resourceVersion(t, c, "s"), "no update")
				assert.Equal(t, written, entries(t, c, "s")["garden-dev.a"], "the entry as the admission wrote it")
			} else {
				assert.NotEqual(t, rv, resourceVersion(t, c, "s"), "written afresh")
				assert.Contains(t, entries(t, c, "s")["garden-dev.a"], ";uid-a")
			}
			var full *cache.CapacityError
			require.ErrorAs(t, create(r, "s", "garden-dev/b", "ci", 1), &full, "the one place stays held")
		})
	}
}

// The ledger's per-user limit grows with the user's confirmed entries, as
// the Store's does: once the first Shoots of a burst are in the cache
// (confirmed at the next prune), the same user's next CREATEs are reserved.
func TestLedgerUserBurstEarnsRoom(t *testing.T) {
	clk := newClock()
	c := newFake(nil)
	local := landscape(map[string]int64{"s": 100}, nil)
	r := newTestReserver(t, c, local, clk, func(o *Options) {
		o.Limits = cache.Limits{PerNamespace: 100, PerUser: 2, Total: 100}
	})
	require.NoError(t, create(r, "s", "garden-dev/a1", "ci", 100))
	require.NoError(t, create(r, "s", "garden-dev/a2", "ci", 100))
	var le *cache.LimitError
	require.ErrorAs(t, create(r, "s", "garden-dev/a3", "ci", 100), &le)
	assert.Equal(t, 2, le.Limit)

	local.Apply(pendingShoot("garden-dev", "a1"))
	local.Apply(pendingShoot("garden-dev", "a2"))
	clk.Step(pruneEvery)
	for _, name := range []string{"a3", "a4", "a5", "a6", "a7", "a8"} {
		require.NoError(t, create(r, "s", "garden-dev/"+name, "ci", 100), "two confirmed earn four more: six unconfirmed")
	}
	require.ErrorAs(t, create(r, "s", "garden-dev/a9", "ci", 100), &le)
	assert.Equal(t, 6, le.Limit)
	require.NoError(t, create(r, "s", "garden-dev/m1", "mallory", 100))
	require.NoError(t, create(r, "s", "garden-dev/m2", "mallory", 100))
	require.ErrorAs(t, create(r, "s", "garden-dev/m3", "mallory", 100), &le, "another user earns nothing from it")
	assert.Equal(t, 2, le.Limit)
}
