package cache

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/metrics"
)

// refusals counts what a Store records of refused reservations.
type refusals struct {
	mu sync.Mutex
	n  map[string]int // store/reason
}

func (r *refusals) ObserveReservationConfirmed(time.Duration) {}
func (r *refusals) ObserveReservationExpired(bool)            {}

func (r *refusals) ObserveReservationRefused(store, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[string]int{}
	}
	r.n[store+"/"+reason]++
}

func (r *refusals) counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

func TestReserveLimits(t *testing.T) {
	type step struct {
		ns, seed, key string
		want          string // "" ok, "namespace" or "total" (a *LimitError), "full" (a *CapacityError)
	}
	tests := []struct {
		name  string
		steps []step
		want  map[string]int // live reservations per namespace
	}{{
		name: "per namespace",
		steps: []step{
			{"garden-a", "big", "a1", ""}, {"garden-a", "big", "a2", ""}, {"garden-a", "big", "a3", "namespace"},
			{"garden-b", "big", "b1", ""},
		},
		want: map[string]int{"garden-a": 2, "garden-b": 1},
	}, {
		name: "total",
		steps: []step{
			{"garden-a", "big", "a1", ""}, {"garden-b", "big", "b1", ""}, {"garden-c", "big", "c1", ""},
			{"garden-a", "big", "a2", "total"},
			// A namespace holding none is never refused by the total: a
			// flood over other namespaces cannot leave it without a seed.
			{"garden-d", "big", "d1", ""}, {"garden-d", "big", "d2", "total"},
		},
		want: map[string]int{"garden-a": 1, "garden-b": 1, "garden-c": 1, "garden-d": 1},
	}, {
		name: "a held key counts once, and may move at the limit",
		steps: []step{
			{"garden-a", "big", "a1", ""}, {"garden-a", "big", "a2", ""},
			{"garden-a", "big", "a1", ""}, {"garden-a", "other", "a1", ""},
		},
		want: map[string]int{"garden-a": 2},
	}, {
		name:  "a full seed is a capacity error, not a limit",
		steps: []step{{"garden-a", "small", "a1", ""}, {"garden-a", "big", "a2", ""}, {"garden-b", "small", "b1", "full"}},
		want:  map[string]int{"garden-a": 2},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &refusals{}
			s := NewStore(Options{Limits: Limits{PerNamespace: 2, Total: 3}, Recorder: rec})
			s.Apply(seed("big", 100))
			s.Apply(seed("other", 100))
			s.Apply(seed("small", 1))
			wantRefused := map[string]int{}
			for _, st := range tc.steps {
				err := s.Reserve(st.seed, Claim{Key: st.key, Namespace: st.ns})
				switch st.want {
				case "":
					require.NoError(t, err, "%+v", st)
				case "full":
					var ce *CapacityError
					require.ErrorAs(t, err, &ce, "%+v", st)
				default:
					var le *LimitError
					require.ErrorAs(t, err, &le, "%+v", st)
					assert.Equal(t, LimitError{Namespace: st.ns, Reason: st.want, Limit: map[string]int{"namespace": 2, "total": 3}[st.want]}, *le)
					_, held := s.Reservation(st.key)
					assert.False(t, held, "a refused reservation holds nothing")
					wantRefused["memory/"+st.want]++
				}
			}
			for ns, n := range tc.want {
				got, _ := s.ReservationCounts(ns)
				assert.Equal(t, n, got, ns)
			}
			if len(wantRefused) == 0 {
				wantRefused = nil
			}
			assert.Equal(t, wantRefused, rec.counts())
		})
	}
}

func TestLimitErrorMessages(t *testing.T) {
	assert.Equal(t, `namespace "garden-a" holds 50 reservations of Shoots not yet on their seed, the limit (reservations.maxPerNamespace); no place is reserved for this Shoot until some end`,
		(&LimitError{Namespace: "garden-a", Reason: metrics.RefusedReasonNamespace, Limit: 50}).Error())
	assert.Equal(t, `user "alice" holds 20 unconfirmed reservations, the limit (reservations.maxPerUser, and 2 more per confirmed one); no place is reserved for this Shoot until some end`,
		(&LimitError{Namespace: "garden-a", User: "alice", Reason: metrics.RefusedReasonUser, Limit: 20}).Error())
	assert.Equal(t, `1000 unconfirmed reservations are held, the limit (reservations.maxTotal); no place is reserved for this Shoot until some end`,
		(&LimitError{Namespace: "garden-a", Reason: metrics.RefusedReasonTotal, Limit: 1000}).Error())
	assert.Equal(t, Limits{PerNamespace: 100, PerUser: 20, Total: 1000}, Limits{}.WithDefaults())
}

// The limits count live reservations only: one that expired or whose Shoot
// arrived frees its slot.
func TestReserveLimitsCountLiveOnly(t *testing.T) {
	clock := newFakeClock()
	s := NewStore(Options{Limits: Limits{PerNamespace: 2, Total: 10}, ConfirmWindow: 30 * time.Second, Now: clock.Now})
	s.Apply(seed("a", 100))
	require.NoError(t, s.Reserve("a", Claim{Key: "k1", Namespace: "garden-a"}))
	clock.Step(10 * time.Second)
	require.NoError(t, s.Reserve("a", Claim{Key: "k2", Namespace: "garden-a", Name: "s2"}))
	var le *LimitError
	require.ErrorAs(t, s.Reserve("a", Claim{Key: "k3", Namespace: "garden-a"}), &le)

	arrived := shoot("garden-a", "s2", "a", "")
	arrived.Annotations = map[string]string{AnnotationReservation: "k2"}
	s.Apply(arrived)
	require.NoError(t, s.Reserve("a", Claim{Key: "k3", Namespace: "garden-a"}), "k2's Shoot arrived: its slot is free")
	require.ErrorAs(t, s.Reserve("a", Claim{Key: "k4", Namespace: "garden-a"}), &le)

	clock.Step(20 * time.Second) // k1's TTL
	require.NoError(t, s.Reserve("a", Claim{Key: "k4", Namespace: "garden-a"}), "k1 expired: its slot is free")
	n, total := s.ReservationCounts("garden-a")
	assert.Equal(t, 2, n)
	assert.Equal(t, 2, total)
}

// Reserving a held key again, even on another seed, keeps its first expiry.
func TestReserveAgainKeepsExpiry(t *testing.T) {
	clock := newFakeClock()
	s := NewStore(Options{Now: clock.Now}) // TTL 30s
	s.Apply(seed("a", 10))
	s.Apply(seed("b", 10))
	require.NoError(t, s.Reserve("a", Claim{Key: "k", Namespace: "garden-a"}))
	clock.Step(20 * time.Second)
	require.NoError(t, s.Reserve("a", Claim{Key: "k", Namespace: "garden-a"}))
	require.NoError(t, s.Reserve("b", Claim{Key: "k", Namespace: "garden-a"}))
	clock.Step(10 * time.Second) // 30s after the first
	_, held := s.Reservation("k")
	assert.False(t, held, "the moved reservation ends at the first one's TTL")
	assert.Equal(t, map[string]int64{"a": 0, "b": 0}, usages(s, "a", "b"))
}

// Place at a limit still decides; the decision stands without a reservation.
func TestPlaceAtLimit(t *testing.T) {
	rec := &refusals{}
	s := NewStore(Options{Limits: Limits{PerNamespace: 1, Total: 10}, Recorder: rec})
	s.decide = leastUsedDecide
	s.Apply(seed("a", 10))
	s.Apply(seed("b", 10))

	d, unreserved := s.PlaceReserved(shoot("garden-a", "s1", "", ""), placementOpts, "uid-1", "")
	require.NoError(t, unreserved)
	assert.Equal(t, "a", d.Seed)

	d, unreserved = s.PlaceReserved(shoot("garden-a", "s2", "", ""), placementOpts, "uid-2", "")
	var le *LimitError
	require.ErrorAs(t, unreserved, &le)
	assert.Equal(t, metrics.RefusedReasonNamespace, le.Reason)
	assert.True(t, d.Schedulable())
	assert.Equal(t, "b", d.Seed, "the decision is made as ever")
	_, held := s.Reservation("uid-2")
	assert.False(t, held)
	assert.Equal(t, map[string]int64{"a": 1, "b": 0}, usages(s, "a", "b"))

	d, unreserved = s.PlaceReserved(shoot("garden-b", "s3", "", ""), placementOpts, "uid-3", "")
	require.NoError(t, unreserved, "another namespace still reserves")
	assert.Equal(t, "b", d.Seed)
	d, unreserved = s.PlaceReserved(shoot("garden-a", "s4", "", ""), placementOpts, "", "")
	assert.NoError(t, unreserved, "a dry run reserves nothing and is refused nothing")
	assert.True(t, d.Schedulable())
	assert.Equal(t, map[string]int{"memory/namespace": 1}, rec.counts())
}

// Placing the same request (UID) again releases its reservation and takes
// a new one, but never past the first one's TTL: a review sent again and
// again holds its place no longer than the first sending's TTL. (Sent after
// that, it is a new reservation, like any other review's: the limits bound
// how many there are.)
func TestPlaceAgainKeepsExpiry(t *testing.T) {
	clock := newFakeClock()
	s := NewStore(Options{Now: clock.Now}) // TTL 30s
	s.decide = leastUsedDecide
	s.Apply(seed("a", 10))
	for range 3 { // at 0s, 10s, 20s
		d := s.Place(shoot("garden-a", "s", "", ""), placementOpts, "uid-1")
		require.Equal(t, "a", d.Seed)
		assert.Equal(t, int64(1), s.Usage("a"), "counted once")
		clock.Step(10 * time.Second)
	}
	assert.Equal(t, int64(0), s.Usage("a"), "free 30s after the first sending")
	_, held := s.Reservation("uid-1")
	assert.False(t, held)
}

// A user's limit grows with the user's confirmed reservations (Shoots that
// exist and wait for a seed), two per one; refused CREATEs never confirm, so
// a user whose CREATEs are all refused stays at PerUser. The namespace and
// the total still bound it.
func TestUserLimitGrowsWithConfirmed(t *testing.T) {
	tests := []struct {
		name string
		held Held
		want string // "" ok, else the LimitError's reason
		at   int    // its Limit
	}{
		{name: "below PerUser", held: Held{User: 1}},
		{name: "at PerUser, none confirmed", held: Held{User: 2}, want: metrics.RefusedReasonUser, at: 2},
		{name: "one confirmed earns two", held: Held{User: 3, Confirmed: 1, UserConfirmed: 1}},
		{name: "at PerUser+2", held: Held{User: 4, Confirmed: 1, UserConfirmed: 1}, want: metrics.RefusedReasonUser, at: 4},
		{name: "the namespace still bounds it", held: Held{Namespace: 6, User: 6, Confirmed: 4, UserConfirmed: 4}, want: metrics.RefusedReasonNamespace, at: 10},
		{name: "and the total", held: Held{Namespace: 1, User: 5, Total: 50, Confirmed: 3, UserConfirmed: 3}, want: metrics.RefusedReasonTotal, at: 50},
	}
	l := Limits{PerNamespace: 10, PerUser: 2, Total: 50}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := l.Check(Claim{Namespace: "p", User: "ci"}, tc.held)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			var le *LimitError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tc.want, le.Reason)
			assert.Equal(t, tc.at, le.Limit)
		})
	}
}

// Through the Store: an automation user's burst is refused at PerUser, and
// once its first Shoots appear (confirmed, waiting for a seed) the next ones
// are reserved; the credit ends when those Shoots are bound.
func TestStoreUserBurstEarnsRoom(t *testing.T) {
	s := NewStore(Options{Limits: Limits{PerNamespace: 100, PerUser: 2, Total: 100}})
	s.Apply(seed("a", 100))
	reserve := func(name string) error {
		return s.Reserve("a", Claim{Key: "uid-" + name, Namespace: "p", Name: name, User: "ci"})
	}
	require.NoError(t, reserve("s1"))
	require.NoError(t, reserve("s2"))
	var le *LimitError
	require.ErrorAs(t, reserve("s3"), &le)
	assert.Equal(t, 2, le.Limit)
	s.Apply(annotated(shoot("p", "s1", "", ""), "uid-s1"))
	s.Apply(annotated(shoot("p", "s2", "", ""), "uid-s2"))
	for _, name := range []string{"s3", "s4", "s5", "s6", "s7", "s8"} {
		require.NoError(t, reserve(name), "two confirmed earn four more, six unconfirmed in all")
	}
	require.ErrorAs(t, reserve("s9"), &le)
	assert.Equal(t, 6, le.Limit)
	s.Apply(annotated(shoot("p", "s1", "a", ""), "uid-s1")) // bound: its credit ends
	s.Apply(annotated(shoot("p", "s2", "a", ""), "uid-s2"))
	require.ErrorAs(t, reserve("s9"), &le)
	assert.Equal(t, 2, le.Limit)
}
