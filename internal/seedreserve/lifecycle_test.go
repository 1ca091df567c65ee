package seedreserve

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/seedwarden/seedwarden/internal/cache"
)

// A confirmed entry ends when its Shoot is deleted, on every replica whose
// watch shows the deletion, at once: within the confirm window too, where an
// absent Shoot still counts (its watch may lag). The place is free for the
// next reservation on any replica.
func TestDeletionEndsEntriesOnEveryReplica(t *testing.T) {
	clk := newClock()
	c := newFake(nil)
	caches := []*cache.Store{landscape(map[string]int64{"s": 1}, nil), landscape(map[string]int64{"s": 1}, nil)}
	var replicas []*Reserver
	for _, local := range caches {
		replicas = append(replicas, newTestReserver(t, c, local, clk))
	}
	require.NoError(t, create(replicas[1], "s", "garden-dev/a", "alice", 1), "through the follower")
	for _, local := range caches {
		local.Apply(pendingShoot("garden-dev", "a"))
	}
	clk.Step(2 * time.Second)
	for i, r := range replicas {
		capacityError(t, create(r, "s", "garden-dev/other", "bob", 1), 0, 1, 1)
		assert.Len(t, entries(t, c, "s"), 1, "replica %d: the pending Shoot holds the only place", i)
	}

	for _, local := range caches {
		local.Remove(pendingShoot("garden-dev", "a"))
	}
	for i, r := range replicas {
		require.NoError(t, r.Check(ctx, "s", "garden-dev/other", 1), "replica %d: the place is free once the delete is seen", i)
	}
	require.NoError(t, create(replicas[0], "s", "garden-dev/other", "bob", 1))
	assert.Equal(t, []string{"garden-dev.other"}, sortedKeys(entries(t, c, "s")), "the deleted Shoot's entry is dropped")
}

// A deletion ends only the entry of the Shoot deleted: a new Shoot of the
// same name, created after it, keeps its own entry (another identity).
func TestDeletionOfAnEarlierShootOfTheNameEndsNothing(t *testing.T) {
	clk := newClock()
	c := newFake(nil)
	local := landscape(map[string]int64{"s": 1}, nil)
	r := newTestReserver(t, c, local, clk)
	earlier := pendingShoot("garden-dev", "a")
	earlier.UID, earlier.Annotations[cache.AnnotationReservation] = "uid-earlier", "req-earlier"
	local.Apply(earlier)
	local.Remove(earlier) // deleted; the new one's CREATE follows
	require.NoError(t, create(r, "s", "garden-dev/a", "alice", 1))
	capacityError(t, create(r, "s", "garden-dev/other", "bob", 1), 0, 1, 1)
}

// The ledger never counts one Shoot twice: an entry whose Shoot is counted
// on the seed holds nothing, and one whose Shoot was deleted from the seed
// ends, so a place freed on a full seed is bindable at once (the finding: a
// bind refused "usage 2 (1 shoots + 1 reservations)" after a place was
// freed, because the deleted Shoot's young entry still counted).
func TestFreedPlaceIsBindableAtOnce(t *testing.T) {
	clk := newClock()
	c := newFake(nil)
	local := landscape(map[string]int64{"s": 2}, nil)
	r := newTestReserver(t, c, local, clk)
	for _, name := range []string{"kept", "freed"} {
		require.NoError(t, create(r, "s", "garden-dev/"+name, "alice", 2))
		sh := shootObj("garden-dev", name, "s")
		sh.Annotations = map[string]string{cache.AnnotationReservation: requestUID("garden-dev/" + name)}
		local.Apply(sh)
	}
	clk.Step(time.Second)
	waiting := pendingShoot("garden-dev", "waiting")
	local.Apply(waiting)
	capacityError(t, r.Reserve(ctx, "s", "garden-dev/waiting", "", 2), 2, 0, 2)

	freed := shootObj("garden-dev", "freed", "s")
	freed.Annotations = map[string]string{cache.AnnotationReservation: requestUID("garden-dev/freed")}
	local.Remove(freed)
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/waiting", "", 2), "the retry controller's bind takes the freed place")
	assert.Equal(t, []string{"garden-dev.kept", "garden-dev.waiting"}, sortedKeys(entries(t, c, "s")))
}

// Two replicas over one API server whose clocks disagree by up to
// MaxClockSkew, either way, never overfill a 1-place seed: whichever
// reserves second finds the first entry counted through the whole confirm
// window, and neither drops it early. Past the window (on the writer's
// clock, plus the skew for a reader that saw the entry late) the place of a
// Shoot that never came is free again.
func TestClockSkewNeverOverfills(t *testing.T) {
	for _, skew := range []time.Duration{-MaxClockSkew, -6 * time.Second, -time.Second, time.Second, 6 * time.Second, MaxClockSkew} {
		t.Run(skew.String(), func(t *testing.T) {
			c := newFake(nil)
			clkA := newClock()
			clkB := clocktesting.NewFakeClock(clkA.Now().Add(skew))
			a := newTestReserver(t, c, landscape(map[string]int64{"s": 1}, nil), clkA)
			b := newTestReserver(t, c, landscape(map[string]int64{"s": 1}, nil), clkB)
			step := func(d time.Duration) { clkA.Step(d); clkB.Step(d) }

			require.NoError(t, create(a, "s", "garden-dev/first", "alice", 1))
			for elapsed := time.Duration(0); elapsed < cache.DefaultConfirmWindow; elapsed += 500 * time.Millisecond {
				capacityError(t, create(b, "s", "garden-dev/second", "bob", 1), 0, 1, 1)
				capacityError(t, create(a, "s", "garden-dev/third", "carol", 1), 0, 1, 1)
				require.Equal(t, []string{"garden-dev.first"}, sortedKeys(entries(t, c, "s")), "after %s", elapsed)
				step(500 * time.Millisecond)
			}
			step(max(0, -skew)) // B's clock behind: the entry looks younger to B
			require.NoError(t, create(b, "s", "garden-dev/second", "bob", 1), "the CREATE never came: its place is free")
			assert.Equal(t, []string{"garden-dev.second"}, sortedKeys(entries(t, c, "s")))
		})
	}
}

// An entry seen late by a replica whose clock agrees (it read the object for
// the first time) is taken for no younger than its expiry says less
// MaxClockSkew: its window ends at most that much later there.
func TestEntrySeenLateEndsWithinTheSkewBound(t *testing.T) {
	clk := newClock()
	c := newFake(nil)
	a := newTestReserver(t, c, landscape(map[string]int64{"s": 1}, nil), clk)
	require.NoError(t, create(a, "s", "garden-dev/first", "alice", 1))
	clk.Step(cache.DefaultConfirmWindow + MaxClockSkew - time.Second)
	late := newTestReserver(t, c, landscape(map[string]int64{"s": 1}, nil), clk)
	capacityError(t, late.Check(ctx, "s", "garden-dev/second", 1), 0, 1, 1)
	clk.Step(time.Second)
	require.NoError(t, late.Check(ctx, "s", "garden-dev/second", 1))
}

// Entries carry their Shoot's identity after the expiry; an entry of an
// earlier version (the expiry alone) is read as one of no known Shoot, and
// an entry without an identity is written in that format.
func TestEntryValueFormat(t *testing.T) {
	exp := "2026-03-01T12:00:30.5Z"
	for _, tc := range []struct {
		value, id string
		err       bool
	}{
		{value: exp},
		{value: exp + ";5c1e7a52-1f3b-4e8e-9c1a-2f0d3b6c7e11", id: "5c1e7a52-1f3b-4e8e-9c1a-2f0d3b6c7e11"},
		{value: exp + ";bad id", err: true},
		{value: "tomorrow;uid", err: true},
	} {
		got, id, err := parseValue(tc.value)
		if tc.err {
			assert.Error(t, err, tc.value)
			continue
		}
		require.NoError(t, err, tc.value)
		assert.Equal(t, time.Date(2026, 3, 1, 12, 0, 30, 5e8, time.UTC), got)
		assert.Equal(t, tc.id, id)
		assert.Equal(t, tc.value, formatValue(exp, id), "written back the same")
	}
	assert.Equal(t, exp, formatValue(exp, "not;a token"), "an identity that cannot be stored is left out")
}

// Confirmed entries count against reservations.maxPerNamespace with the
// unconfirmed ones, not against maxPerUser or maxTotal: a namespace's pending
// Shoots hold at most that many places per replica.
func TestConfirmedEntriesCountAgainstTheNamespaceLimit(t *testing.T) {
	clk := newClock()
	c := newFake(nil)
	local := landscape(map[string]int64{"s": 100}, nil)
	r := newTestReserver(t, c, local, clk, func(o *Options) {
		o.Limits = cache.Limits{PerNamespace: 3, PerUser: 2, Total: 100}
	})
	for _, name := range []string{"p1", "p2"} {
		require.NoError(t, create(r, "s", "garden-dev/"+name, "alice", 100))
		local.Apply(pendingShoot("garden-dev", name))
	}
	clk.Step(cache.DefaultConfirmWindow)
	require.NoError(t, create(r, "s", "garden-dev/n1", "alice", 100), "the confirmed ones left alice's count")
	var le *cache.LimitError
	require.ErrorAs(t, create(r, "s", "garden-dev/n2", "bob", 100), &le)
	assert.Equal(t, "namespace", le.Reason, "2 confirmed + 1 unconfirmed reach maxPerNamespace 3")
	require.NoError(t, create(r, "s", "garden-other/n3", "bob", 100), "another namespace")

	// A Shoot bound (on the seed) leaves the count: the next request
	// prunes it.
	bound := pendingShoot("garden-dev", "p1")
	bound.Spec.SeedName = ptrTo("s")
	local.Apply(bound)
	clk.Step(pruneEvery)
	require.NoError(t, create(r, "s", "garden-dev/n2", "bob", 100))
}

func ptrTo[T any](v T) *T { return &v }

// A request of another identity for a key replaces its entry with the
// place it held (a CREATE of a name whose earlier entry never confirmed);
// denied (the seed is over its allocatable even so), it leaves the entry
// as it was, even when the batch writes.
func TestRequestOfAnotherIdentityReplacesTheEntry(t *testing.T) {
	clk := newClock()
	local := landscape(map[string]int64{"s": 2}, nil)
	r := newTestReserver(t, newFake(nil), local, clk)
	now := clk.Now()
	older := formatValue(expiryString(now.Add(testTTL-time.Second)), "req-older")
	req := func(key, id string, alloc int64) *request {
		q, err := r.newRequest("s", cache.ShootRef{Key: key, ID: id}, alloc)
		require.NoError(t, err)
		return q
	}

	d := r.decide("s", map[string]string{"garden-dev.a": older}, []*request{req("garden-dev/a", "req-newer", 1)}, now)
	require.Equal(t, []error{nil}, d.results, "the older entry's place is the request's")
	_, id, err := parseValue(d.data["garden-dev.a"])
	require.NoError(t, err)
	assert.Equal(t, "req-newer", id)

	d = r.decide("s", map[string]string{"garden-dev.a": older, "garden-dev.b": older}, []*request{
		req("garden-dev/c", "req-c", 3),     // granted: the batch writes
		req("garden-dev/a", "req-newer", 2), // as if allocatable had been lowered meanwhile
	}, now)
	require.NoError(t, d.results[0])
	capacityError(t, d.results[1], 0, 2, 2)
	assert.Equal(t, older, d.data["garden-dev.a"], "the denied request leaves the entry")
}
