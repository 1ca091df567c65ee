package cache

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// lifecycle records what the Store reports of reservations' ends.
type lifecycle struct {
	refusals
	confirmed []time.Duration
	expired   map[bool]int
}

func (l *lifecycle) ObserveReservationConfirmed(d time.Duration) {
	l.confirmed = append(l.confirmed, d)
}
func (l *lifecycle) ObserveReservationExpired(confirmed bool) {
	if l.expired == nil {
		l.expired = map[bool]int{}
	}
	l.expired[confirmed]++
}

func annotated(sh *api.Shoot, key string) *api.Shoot {
	sh.Annotations = map[string]string{AnnotationReservation: key}
	return sh
}

// A reservation whose Shoot never shows up (a later admission step refused
// the CREATE) holds its place for the confirm window only; one whose Shoot
// shows up without a seed lasts the TTL; one whose Shoot shows up on the seed
// ends, the Shoot holding the place.
func TestConfirmWindow(t *testing.T) {
	taken := Claim{Key: "k", Namespace: "p", Name: "s", User: "alice"}
	generated := Claim{Key: "gk", Namespace: "p", GenerateName: "gen-", User: "alice"}
	tests := []struct {
		name    string
		claim   Claim
		arrives *api.Shoot // at 1s
		// held at 4s, 6s (past the 5s window) and 31s (past the TTL)
		want [3]bool
		// the Store's report: confirmed, expired unconfirmed, expired confirmed
		confirmed, expiredUnconfirmed, expiredConfirmed int
	}{
		{name: "refused CREATE: ends with the window", claim: taken, want: [3]bool{true, false, false}, expiredUnconfirmed: 1},
		{name: "Shoot pending: confirmed until the TTL", claim: taken, arrives: annotated(shoot("p", "s", "", ""), "k"),
			want: [3]bool{true, true, false}, confirmed: 1, expiredConfirmed: 1},
		{name: "Shoot on the seed: it holds the place itself", claim: taken, arrives: annotated(shoot("p", "s", "a", ""), "k"),
			want: [3]bool{false, false, false}, confirmed: 1},
		{name: "key copied onto another Shoot: unconfirmed", claim: taken, arrives: annotated(shoot("p", "other", "", ""), "k"),
			want: [3]bool{true, false, false}, expiredUnconfirmed: 1},
		{name: "generateName: a Shoot with the prefix confirms", claim: generated, arrives: annotated(shoot("p", "gen-x1", "", ""), "gk"),
			want: [3]bool{true, true, false}, confirmed: 1, expiredConfirmed: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			rec := &lifecycle{}
			s := NewStore(Options{Now: clock.Now, Recorder: rec}) // window 5s, TTL 30s
			s.Apply(seed("a", 10))
			c := tc.claim
			require.NoError(t, s.Reserve("a", c))
			clock.Step(time.Second)
			if tc.arrives != nil {
				s.Apply(tc.arrives)
			}
			for i, at := range []time.Duration{3 * time.Second, 2 * time.Second, 25 * time.Second} {
				clock.Step(at)
				_, held := s.Reservation(c.Key)
				assert.Equal(t, tc.want[i], held, "held after step %d", i)
			}
			assert.Len(t, rec.confirmed, tc.confirmed)
			for _, d := range rec.confirmed {
				assert.Equal(t, time.Second, d, "time from the reservation to its Shoot")
			}
			assert.Equal(t, tc.expiredUnconfirmed, rec.expired[false], "expired unconfirmed")
			assert.Equal(t, tc.expiredConfirmed, rec.expired[true], "expired confirmed")
		})
	}
}

// The limits count unconfirmed reservations only: per user as well as per
// namespace; a confirmed one (its Shoot exists) frees its slot.
func TestLimitsCountUnconfirmedPerUser(t *testing.T) {
	clock := newFakeClock()
	rec := &lifecycle{}
	s := NewStore(Options{Now: clock.Now, Recorder: rec, Limits: Limits{PerNamespace: 10, PerUser: 2, Total: 100}})
	s.Apply(seed("a", 100))
	for i, name := range []string{"s1", "s2"} {
		require.NoError(t, s.Reserve("a", Claim{Key: "k" + name, Namespace: "p", Name: name, User: "mallory"}), i)
	}
	var le *LimitError
	require.ErrorAs(t, s.Reserve("a", Claim{Key: "k3", Namespace: "p", Name: "s3", User: "mallory"}), &le)
	assert.Equal(t, LimitError{Namespace: "p", User: "mallory", Reason: metrics.RefusedReasonUser, Limit: 2}, *le)
	require.NoError(t, s.Reserve("a", Claim{Key: "k4", Namespace: "p", Name: "s4", User: "alice"}), "another user of the namespace")
	require.NoError(t, s.Reserve("a", Claim{Key: "k5", Namespace: "p", Name: "s5"}), "no user known: the namespace bounds it")

	s.Apply(annotated(shoot("p", "s1", "", ""), "ks1")) // confirmed: pending binding
	require.NoError(t, s.Reserve("a", Claim{Key: "k3", Namespace: "p", Name: "s3", User: "mallory"}), "a confirmed one frees the user's slot")
	_, held := s.Reservation("ks1")
	assert.True(t, held, "the confirmed one still holds its place")
	assert.Equal(t, map[string]int{"memory/user": 1}, rec.counts())

	inNamespace, total := s.ReservationCounts("p")
	assert.Equal(t, 4, inNamespace, "k3, s2, k4, k5 are unconfirmed")
	assert.Equal(t, 4, total)
}

// Keys read off a Shoot prove nothing: ReservationFor, ReleaseFor and the
// retry controller's transfer act only for the Shoot the place was taken for.
func TestKeysReadOffShootsAreChecked(t *testing.T) {
	s := NewStore(Options{})
	s.Apply(cloudProfile("aws"))
	s.Apply(project("p", "p"))
	s.Apply(seed("a", 1))
	require.NoError(t, s.Reserve("a", Claim{Key: "victim-uid", Namespace: "p", Name: "victim"}))

	_, ok := s.ReservationFor("victim-uid", "p", "attacker")
	assert.False(t, ok, "another Shoot's key")
	_, ok = s.ReservationFor("victim-uid", "q", "victim")
	assert.False(t, ok, "same name, other namespace")
	seedName, ok := s.ReservationFor("victim-uid", "p", "victim")
	assert.True(t, ok)
	assert.Equal(t, "a", seedName)

	s.ReleaseFor("victim-uid", "p", "attacker")
	_, held := s.Reservation("victim-uid")
	assert.True(t, held, "ReleaseFor for another Shoot releases nothing")

	attacker := shoot("p", "attacker", "", "")
	assert.False(t, s.PlaceOn(attacker, placement.Options{Strategy: placement.SameRegion}, "a", "victim-uid", "manual/p/attacker"),
		"the one place is the victim's: the attacker's binding cannot take it over")
	_, held = s.Reservation("victim-uid")
	assert.True(t, held, "and the victim keeps it")

	s.ReleaseFor("victim-uid", "p", "victim")
	_, held = s.Reservation("victim-uid")
	assert.False(t, held)
}

// A key is the Shoot's it was taken for: reserving it again for another
// Shoot (the capacity webhook with a user's Shoot carrying the victim's key
// and its own valid token, or a forged mutating review reusing the victim's
// request UID) neither rides on the victim's place nor ends or moves it.
func TestKeyOfAnotherShootIsNotReservedAgain(t *testing.T) {
	s := NewStore(Options{})
	s.Apply(cloudProfile("aws"))
	s.Apply(project("p", "p"))
	s.Apply(seed("a", 1))
	s.Apply(seed("b", 10))
	victim := Claim{Key: "victim-uid", Namespace: "p", Name: "victim"}
	require.NoError(t, s.Reserve("a", victim))
	victimHoldsA := func(msg string) {
		t.Helper()
		seedName, ok := s.ReservationFor(victim.Key, "p", "victim")
		assert.True(t, ok, msg)
		assert.Equal(t, "a", seedName, msg)
		assert.Equal(t, int64(1), s.Usage("a"), msg)
	}

	attacker := Claim{Key: victim.Key, Namespace: "p", Name: "attacker", User: "mallory"}
	require.Error(t, s.Reserve("a", attacker), "the victim's place on a is not the attacker's")
	victimHoldsA("after a reservation on the same seed")
	require.Error(t, s.Reserve("b", attacker), "nor moved to b")
	victimHoldsA("after a reservation on another seed")
	assert.Zero(t, s.Usage("b"))

	d, _ := s.PlaceReserved(shoot("p", "attacker", "", ""), placement.Options{Strategy: placement.SameRegion}, victim.Key, "mallory")
	assert.NotEqual(t, "a", d.Seed)
	victimHoldsA("after a placement under the victim's key")

	require.NoError(t, s.Reserve("a", victim), "the victim's own retry keeps its place")
	gen := Claim{Key: "gen-uid", Namespace: "p", GenerateName: "gen-"}
	require.NoError(t, s.Reserve("b", gen))
	require.NoError(t, s.Reserve("b", Claim{Key: "gen-uid", Namespace: "p", Name: "gen-x1", GenerateName: "gen-"}),
		"the capacity webhook sees the generated name")
}

// A reservation for a Shoot that exists (an UPDATE, a binding, the retry
// controller's placement) is confirmed from the start: no limit refuses it,
// and it lasts the TTL unless released.
// A claim to exist for a Shoot the cache does not hold (a forged review) is
// limited as a CREATE's.
func TestReservationForAnExistingShoot(t *testing.T) {
	clock := newFakeClock()
	s := NewStore(Options{Now: clock.Now, Limits: Limits{PerNamespace: 1, PerUser: 1, Total: 1}})
	s.Apply(seed("a", 100))
	require.NoError(t, s.Reserve("a", Claim{Key: "k1", Namespace: "p", Name: "s1", User: "binder"}))
	var le *LimitError
	require.ErrorAs(t, s.Reserve("a", Claim{Key: "k2", Namespace: "p", Name: "s2", User: "binder"}), &le)
	s.Apply(shoot("p", "s3", "", "")) // it exists, waiting for its binding
	require.NoError(t, s.Reserve("a", Claim{Key: "manual/p/s3", Namespace: "p", Name: "s3", User: "binder", Exists: true}))

	require.ErrorAs(t, s.Reserve("a", Claim{Key: "manual/p/s4", Namespace: "p", Name: "s4", User: "binder", Exists: true}), &le,
		"s4 is not in the cache")

	clock.Step(DefaultConfirmWindow)
	_, held := s.Reservation("k1")
	assert.False(t, held, "the CREATE's ended with the window")
	_, held = s.Reservation("manual/p/s3")
	assert.True(t, held, "the existing Shoot's lasts the TTL")
	clock.Step(DefaultReservationTTL - DefaultConfirmWindow)
	_, held = s.Reservation("manual/p/s3")
	assert.False(t, held)
}
