package cache

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The one rule of a reservation's life, as both books apply it.
func TestLifetime(t *testing.T) {
	l := Lifetime{ConfirmWindow: 5 * time.Second, TTL: 30 * time.Second}
	for _, tc := range []struct {
		age   time.Duration
		shoot ShootState
		want  Standing
	}{
		{0, ShootAbsent, Provisional},
		{4 * time.Second, ShootElsewhere, Provisional},
		{5 * time.Second, ShootAbsent, Ended},
		{5 * time.Second, ShootElsewhere, Ended}, // another Shoot of the name confirms nothing
		{0, ShootPending, Confirmed},
		{29 * time.Second, ShootPending, Confirmed},
		{30 * time.Second, ShootPending, Ended},
		{0, ShootOnSeed, Fulfilled},
		{40 * time.Second, ShootOnSeed, Fulfilled},
		{0, ShootDeleted, Ended},
	} {
		st := l.Standing(tc.age, tc.shoot)
		assert.Equal(t, tc.want, st, "age %s, shoot %d", tc.age, tc.shoot)
		assert.Equal(t, tc.want == Provisional || tc.want == Confirmed, st.Holds())
	}
	taken := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	assert.Equal(t, taken.Add(5*time.Second), l.Deadline(taken, Provisional))
	assert.Equal(t, taken.Add(30*time.Second), l.Deadline(taken, Confirmed))
}

// A confirmed reservation ends when its Shoot is deleted, not at the TTL
// (the finding: three create+delete pairs left a follower's view at "usage
// 3, allocatable 3" for 32 s). A manual reservation ends with the deletion
// of the Shoot it was taken for only, not of an earlier Shoot of the name.
func TestDeletionEndsReservations(t *testing.T) {
	clock := newFakeClock()
	s := NewStore(Options{Now: clock.Now})
	s.Apply(seed("a", 3))
	for i, name := range []string{"s1", "s2", "s3"} {
		key := "uid-" + name
		require.NoError(t, s.Reserve("a", Claim{Key: key, Namespace: "p", Name: name, User: "alice"}))
		sh := annotated(shoot("p", name, "", ""), key)
		s.Apply(sh) // pending: confirmed
		clock.Step(time.Second)
		s.Remove(sh)
		assert.Equal(t, int64(0), s.Usage("a"), "pair %d: no place held after the delete is seen", i)
	}

	current := shoot("p", "m", "", "")
	current.UID = "uid-current"
	s.Apply(current)
	require.NoError(t, s.Reserve("a", Claim{Key: ManualReservationKey("p", "m"), Namespace: "p", Name: "m", Exists: true, UID: "uid-current"}))
	earlier := shoot("p", "m", "", "")
	earlier.UID = "uid-earlier"
	s.Remove(earlier) // a late event of an earlier Shoot of the name
	assert.Equal(t, int64(1), s.Usage("a"), "the current Shoot's place stands")
	s.Remove(current)
	assert.Equal(t, int64(0), s.Usage("a"))
}

// Confirmed reservations count against maxPerNamespace (with the
// unconfirmed ones), not against maxPerUser or maxTotal; a reservation for
// a Shoot that exists is counted but never refused.
func TestConfirmedReservationsCountAgainstTheNamespaceLimit(t *testing.T) {
	s := NewStore(Options{Limits: Limits{PerNamespace: 3, PerUser: 2, Total: 100}})
	s.Apply(seed("a", 100))
	for _, name := range []string{"s1", "s2"} {
		require.NoError(t, s.Reserve("a", Claim{Key: "uid-" + name, Namespace: "p", Name: name, User: "alice"}))
		s.Apply(annotated(shoot("p", name, "", ""), "uid-"+name))
	}
	require.NoError(t, s.Reserve("a", Claim{Key: "uid-s3", Namespace: "p", Name: "s3", User: "alice"}), "alice's count holds one")
	var le *LimitError
	require.ErrorAs(t, s.Reserve("a", Claim{Key: "uid-s4", Namespace: "p", Name: "s4", User: "bob"}), &le)
	assert.Equal(t, "namespace", le.Reason)
	require.NoError(t, s.Reserve("a", Claim{Key: "uid-o1", Namespace: "other", Name: "o1", User: "bob"}))

	s.Apply(shoot("p", "s5", "", ""))
	require.NoError(t, s.Reserve("a", Claim{Key: ManualReservationKey("p", "s5"), Namespace: "p", Name: "s5", Exists: true}),
		"the retry controller's bind is never refused")
	s.Apply(annotated(shoot("p", "s1", "a", ""), "uid-s1")) // bound
	require.ErrorAs(t, s.Reserve("a", Claim{Key: "uid-s4", Namespace: "p", Name: "s4", User: "bob"}), &le, "s5's bind counts")
	s.Apply(shoot("p", "s5", "a", ""))
	require.NoError(t, s.Reserve("a", Claim{Key: "uid-s4", Namespace: "p", Name: "s4", User: "bob"}))
}
