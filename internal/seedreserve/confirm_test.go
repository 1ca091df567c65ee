package seedreserve

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
)

// pendingShoot is a Shoot in the cache that waits for its binding.
func pendingShoot(namespace, name string) *api.Shoot {
	s := shootObj(namespace, name, "")
	s.Spec.SeedName = nil
	return s
}

// An entry is provisional: it counts for the confirm window whatever the
// cache shows, after it only while its Shoot waits in the cache without a
// seed (until the TTL ends it). Past the window an entry whose Shoot is
// absent or on another seed was never confirmed, and the next write drops
// it. One whose Shoot is on the seed counts as the Shoot, and is dropped once
// PruneAfter old.
func TestReserveConfirmWindow(t *testing.T) {
	const window = 5 * time.Second
	for _, tc := range []struct {
		name  string
		shoot *api.Shoot // the cache's view of garden-dev/a; nil: absent
		age   time.Duration
		// counted: the entry adds to the seed's usage; kept: it is in the
		// data the next write leaves.
		counted, kept bool
	}{
		{"young, absent", nil, window - time.Second, true, true},
		{"young, elsewhere", shootObj("garden-dev", "a", "t"), window - time.Second, true, true},
		{"young, pending", pendingShoot("garden-dev", "a"), window - time.Second, true, true},
		{"past the window, absent", nil, window, false, false},
		{"past the window, elsewhere", shootObj("garden-dev", "a", "t"), window, false, false},
		{"past the window, pending", pendingShoot("garden-dev", "a"), window, true, true},
		{"pending until the TTL", pendingShoot("garden-dev", "a"), testTTL - time.Second, true, true},
		{"pending at the TTL", pendingShoot("garden-dev", "a"), testTTL, false, false},
		{"on the seed, younger than PruneAfter", shootObj("garden-dev", "a", "s"), DefaultPruneAfter - time.Second, false, true},
		{"on the seed, PruneAfter old", shootObj("garden-dev", "a", "s"), DefaultPruneAfter, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			c := newFake(nil)
			local := landscape(map[string]int64{"s": 10, "t": 10}, nil)
			r := newTestReserver(t, c, local, clk, func(o *Options) { o.ConfirmWindow = window })

			require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a", "alice", 10))
			if tc.shoot != nil {
				local.Apply(tc.shoot)
			}
			clk.Step(tc.age)

			// Allocatable 0 refuses anything and reports the usage.
			var shoots, reserved int64
			if tc.shoot != nil && tc.shoot.Spec.SeedName != nil && *tc.shoot.Spec.SeedName == "s" {
				shoots = 1
			}
			if tc.counted {
				reserved = 1
			}
			capacityError(t, r.Check(ctx, "s", "garden-dev/x", 0), shoots, reserved, 0)

			require.NoError(t, r.Reserve(ctx, "s", "garden-dev/b", "bob", 10))
			want := []string{"garden-dev.b"}
			if tc.kept {
				want = []string{"garden-dev.a", "garden-dev.b"}
			}
			assert.Equal(t, want, sortedKeys(entries(t, c, "s")))
		})
	}
}

// The ledger bounds each user's unconfirmed entries as it bounds a
// namespace's; a request without a user is bounded by the namespace and
// the total only. Past the confirm window an entry leaves the ledger's
// counts, confirmed or not: a Shoot waiting for its binding is bounded by
// the Shoots that exist, not by the limits, though its entry still holds
// its place.
func TestReserveLimitsPerUser(t *testing.T) {
	clk := newClock()
	c := newFake(nil)
	local := landscape(map[string]int64{"s": 100}, nil)
	m := &countingRecorder{}
	r := newTestReserver(t, c, local, clk, func(o *Options) {
		o.Limits = cache.Limits{PerNamespace: 4, PerUser: 2, Total: 100}
		o.Metrics = m
	})

	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a1", "alice", 100))
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a2", "alice", 100))
	var le *cache.LimitError
	require.ErrorAs(t, r.Reserve(ctx, "s", "garden-dev/a3", "alice", 100), &le)
	assert.Equal(t, cache.LimitError{Namespace: "garden-dev", User: "alice", Reason: "user", Limit: 2}, *le)
	assert.Contains(t, le.Error(), `user "alice" holds 2 unconfirmed reservations, the limit (reservations.maxPerUser)`)
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a1", "alice", 100), "a held key is not new")

	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/b1", "bob", 100), "another user of the namespace")
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/n1", "", 100), "no user: no per-user limit")
	require.ErrorAs(t, r.Reserve(ctx, "s", "garden-dev/b2", "bob", 100), &le)
	assert.Equal(t, "namespace", le.Reason)
	assert.Equal(t, []string{"garden-dev.a1", "garden-dev.a2", "garden-dev.b1", "garden-dev.n1"}, sortedKeys(entries(t, c, "s")))
	assert.Equal(t, map[string]int{"apiserver/user": 1, "apiserver/namespace": 1}, m.refused)
	n, total := r.ledger.counts("garden-dev")
	assert.Equal(t, 4, n)
	assert.Equal(t, 4, total)

	// a1's Shoot waits for its binding; the others never came.
	local.Apply(pendingShoot("garden-dev", "a1"))
	clk.Step(cache.DefaultConfirmWindow)
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a3", "alice", 100))
	n, total = r.ledger.counts("garden-dev")
	assert.Equal(t, 1, n, "only a3 counts against the limits")
	assert.Equal(t, 1, total)
	assert.Equal(t, []string{"garden-dev.a1", "garden-dev.a3"}, sortedKeys(entries(t, c, "s")),
		"a1's place is still held, the unconfirmed entries are dropped")
	capacityError(t, r.Check(ctx, "s", "garden-dev/x", 0), 0, 2, 0)
}

// Sending a request again past the confirm window writes its entry afresh
// (the old one was never confirmed), so the ledger counts it afresh too:
// otherwise pruning would drop the old count while the new entry holds a
// place, and re-sending its keys would let one namespace hold twice its
// limit.
func TestReserveSentAgainPastTheWindowCountsAgain(t *testing.T) {
	clk := newClock()
	c := newFake(nil)
	r := newTestReserver(t, c, landscape(map[string]int64{"s": 100}, nil), clk, func(o *Options) {
		o.Limits = cache.Limits{PerNamespace: 2, Total: 100}
	})
	send := func(keys ...string) (refused int) {
		for _, k := range keys {
			err := r.Reserve(ctx, "s", "garden-dev/"+k, "", 100)
			if errors.As(err, new(*cache.LimitError)) {
				refused++
				continue
			}
			require.NoError(t, err)
		}
		return refused
	}
	require.Zero(t, send("k1", "k2"))
	for range 3 {
		clk.Step(cache.DefaultConfirmWindow)
		send("k1", "k2", "k3", "k4")
		// Allocatable 0 refuses anything and reports the usage.
		capacityError(t, r.Check(ctx, "s", "garden-dev/x", 0), 0, 2, 0)
		n, _ := r.ledger.counts("garden-dev")
		assert.Equal(t, 2, n)
	}
}

// A binding is of a Shoot that exists: the retry controller's
// ServiceAccount, binding a backlog, holds no unconfirmed entry, so the
// per-user limit never refuses it (the e2e suite caught the leader refused
// with "holds 20 unconfirmed reservations" after a burst).
func TestReserveForAnExistingShootCountsAgainstNoLimit(t *testing.T) {
	clk := newClock()
	c := newFake(nil)
	local := landscape(map[string]int64{"s": 100}, nil)
	r := newTestReserver(t, c, local, clk, func(o *Options) {
		o.Limits = cache.Limits{PerNamespace: 100, PerUser: 2, Total: 100}
	})
	const binder = "system:serviceaccount:seedwarden:seedwarden"
	for i := range 10 {
		key := fmt.Sprintf("garden-dev/pending-%d", i)
		local.Apply(pendingShoot("garden-dev", fmt.Sprintf("pending-%d", i)))
		require.NoError(t, r.Reserve(ctx, "s", key, binder, 100), key)
	}
	n, total := r.ledger.counts("garden-dev")
	assert.Zero(t, n)
	assert.Zero(t, total)
	assert.Len(t, entries(t, c, "s"), 10, "each holds its place")

	var le *cache.LimitError
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/new-1", binder, 100))
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/new-2", binder, 100))
	require.ErrorAs(t, r.Reserve(ctx, "s", "garden-dev/new-3", binder, 100), &le, "a Shoot not in the cache is limited as ever")
}
