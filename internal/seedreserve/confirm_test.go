package seedreserve

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
)

// pendingShoot is a Shoot in the cache that waits for its binding, created
// by the request create(namespace/name) stands for.
func pendingShoot(namespace, name string) *api.Shoot {
	s := shootObj(namespace, name, "")
	s.Spec.SeedName = nil
	s.UID = types.UID("uid-" + name)
	s.Annotations = map[string]string{cache.AnnotationReservation: requestUID(namespace + "/" + name)}
	return s
}

// requestUID stands for the UID of the mutating webhook's request that
// created the Shoot key.
func requestUID(key string) string { return "req-" + strings.ReplaceAll(key, "/", "-") }

// create reserves for a CREATE of the Shoot key, as the mutating webhook
// does: under its request's UID.
func create(r *Reserver, seed, key, user string, alloc int64) error {
	return r.ReserveFor(ctx, seed, cache.Holder{ShootRef: cache.ShootRef{Key: key, ID: requestUID(key)}, User: user}, alloc)
}

// An entry lives by cache.Lifetime: it counts for the confirm window
// whatever the cache shows, after it only while its own Shoot (the one
// carrying the request's identity) waits in the cache without a seed (until
// the TTL ends it). Past the window an entry whose Shoot is absent, on
// another seed, or another Shoot of the same name (a re-CREATE of an
// existing name) was never confirmed, and the next write drops it. One whose
// Shoot is on the seed counts as the Shoot, and is dropped once PruneAfter
// old. One whose Shoot the watch showed deleted ends at once.
func TestReserveConfirmWindow(t *testing.T) {
	const window = 5 * time.Second
	// otherShoot is an earlier Shoot of the name, waiting for its binding:
	// the request for garden-dev/a was a CREATE of a name that exists.
	otherShoot := func() *api.Shoot {
		s := pendingShoot("garden-dev", "a")
		s.UID, s.Annotations = "uid-older", map[string]string{cache.AnnotationReservation: "req-older"}
		return s
	}
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
		{"young, another Shoot of the name pending", otherShoot(), window - time.Second, true, true},
		{"past the window, another Shoot of the name pending", otherShoot(), window, false, false},
		{"on the seed, younger than PruneAfter", shootObj("garden-dev", "a", "s"), DefaultPruneAfter - time.Second, false, true},
		{"on the seed, PruneAfter old", shootObj("garden-dev", "a", "s"), DefaultPruneAfter, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			c := newFake(nil)
			local := landscape(map[string]int64{"s": 10, "t": 10}, nil)
			r := newTestReserver(t, c, local, clk, func(o *Options) { o.ConfirmWindow = window })

			require.NoError(t, create(r, "s", "garden-dev/a", "alice", 10))
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

			require.NoError(t, create(r, "s", "garden-dev/b", "bob", 10))
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
// the total only. Past the confirm window an unconfirmed entry leaves the
// ledger's counts; a confirmed one (its Shoot waits for its binding) leaves
// the per-user and total counts but stays in the namespace's, which
// maxPerNamespace bounds, until its Shoot is on the seed or deleted.
func TestReserveLimitsPerUser(t *testing.T) {
	clk := newClock()
	c := newFake(nil)
	local := landscape(map[string]int64{"s": 100}, nil)
	m := &countingRecorder{}
	r := newTestReserver(t, c, local, clk, func(o *Options) {
		o.Limits = cache.Limits{PerNamespace: 4, PerUser: 2, Total: 100}
		o.Metrics = m
	})

	require.NoError(t, create(r, "s", "garden-dev/a1", "alice", 100))
	require.NoError(t, create(r, "s", "garden-dev/a2", "alice", 100))
	var le *cache.LimitError
	require.ErrorAs(t, create(r, "s", "garden-dev/a3", "alice", 100), &le)
	assert.Equal(t, cache.LimitError{Namespace: "garden-dev", User: "alice", Reason: "user", Limit: 2}, *le)
	assert.Contains(t, le.Error(), `user "alice" holds 2 unconfirmed reservations, the limit (reservations.maxPerUser, and 2 more per confirmed one)`)
	require.NoError(t, create(r, "s", "garden-dev/a1", "alice", 100), "a held key is not new")

	require.NoError(t, create(r, "s", "garden-dev/b1", "bob", 100), "another user of the namespace")
	require.NoError(t, create(r, "s", "garden-dev/n1", "", 100), "no user: no per-user limit")
	require.ErrorAs(t, create(r, "s", "garden-dev/b2", "bob", 100), &le)
	assert.Equal(t, "namespace", le.Reason)
	assert.Equal(t, []string{"garden-dev.a1", "garden-dev.a2", "garden-dev.b1", "garden-dev.n1"}, sortedKeys(entries(t, c, "s")))
	assert.Equal(t, map[string]int{"apiserver/user": 1, "apiserver/namespace": 1}, m.refused)
	n, total := r.ledger.counts("garden-dev")
	assert.Equal(t, 4, n)
	assert.Equal(t, 4, total)

	// a1's Shoot waits for its binding; the others never came.
	local.Apply(pendingShoot("garden-dev", "a1"))
	clk.Step(cache.DefaultConfirmWindow)
	require.NoError(t, create(r, "s", "garden-dev/a3", "alice", 100))
	n, total = r.ledger.counts("garden-dev")
	assert.Equal(t, 1, n, "only a3 counts as unconfirmed")
	assert.Equal(t, 1, total)
	assert.Equal(t, 1, r.ledger.confirmed.Held(cache.Claim{Namespace: "garden-dev"}).Namespace, "a1 counts as confirmed")
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
			err := create(r, "s", "garden-dev/"+k, "", 100)
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
// ServiceAccount, binding a backlog, holds no unconfirmed entry, so no limit
// ever refuses it (the e2e suite caught the leader refused with "holds 20
// unconfirmed reservations" after a burst). Its entries count as confirmed
// in the namespace until the Shoots are on the seed.
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
	assert.Equal(t, 10, r.ledger.confirmed.Held(cache.Claim{Namespace: "garden-dev"}).Namespace)
	assert.Len(t, entries(t, c, "s"), 10, "each holds its place")
	for k, v := range entries(t, c, "s") {
		assert.Contains(t, v, ";uid-pending-", "%s is the Shoot's, by its uid", k)
	}

	var le *cache.LimitError
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/new-1", binder, 100))
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/new-2", binder, 100))
	require.ErrorAs(t, r.Reserve(ctx, "s", "garden-dev/new-3", binder, 100), &le, "a Shoot not in the cache is limited as ever")
}
