package cache

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/api"
)

// What the validating webhooks need from the Store: manual reservations,
// capacity checks without reserving, and object counts.

func TestManualReservationEndsWhenShootArrivesOnItsSeed(t *testing.T) {
	key := ManualReservationKey("p", "s")
	assert.Equal(t, "manual/p/s", key)
	tests := []struct {
		name    string
		shoot   *api.Shoot
		stillOn bool
		wantA   int64
	}{
		{"arrives on the reserved seed", shoot("p", "s", "a", ""), false, 1},
		{"still on its old seed keeps it", shoot("p", "s", "b", ""), true, 1},
		{"without seed keeps it", shoot("p", "s", "", ""), true, 1},
		{"another shoot keeps it", shoot("p", "t", "a", ""), true, 2},
		{"same name in another namespace keeps it", shoot("q", "s", "a", ""), true, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore(Options{})
			s.Apply(seed("a", 10))
			s.Apply(seed("b", 10))
			require.NoError(t, s.Reserve("a", Claim{Key: key, Namespace: "ns"}))
			s.Apply(tc.shoot)
			_, on := s.Reservation(key)
			assert.Equal(t, tc.stillOn, on)
			assert.Equal(t, tc.wantA, s.Usage("a"))
		})
	}
}

func TestReservationLookup(t *testing.T) {
	clock := newFakeClock()
	s := NewStore(Options{Now: clock.Now, ReservationTTL: 10 * time.Second})
	s.Apply(seed("a", 10))
	_, ok := s.Reservation("k")
	assert.False(t, ok)
	require.NoError(t, s.Reserve("a", Claim{Key: "k", Namespace: "ns"}))
	got, ok := s.Reservation("k")
	assert.True(t, ok)
	assert.Equal(t, "a", got)
	clock.Step(10 * time.Second)
	_, ok = s.Reservation("k")
	assert.False(t, ok, "expired")
}

func TestCheckCapacity(t *testing.T) {
	s := NewStore(Options{})
	s.Apply(seed("a", 2))
	s.Apply(seed("unlimited", -1))
	s.Apply(shoot("p", "x", "a", ""))

	assert.NoError(t, s.CheckCapacity("a", "k"))
	assert.NoError(t, s.CheckCapacity("a", ""))
	assert.Equal(t, int64(1), s.Usage("a"), "checking reserves nothing")

	require.NoError(t, s.Reserve("a", Claim{Key: "k", Namespace: "ns"}))
	assert.NoError(t, s.CheckCapacity("a", "k"), "the key already holds its place")
	var ce *CapacityError
	require.ErrorAs(t, s.CheckCapacity("a", "other"), &ce)
	assert.Equal(t, CapacityError{Seed: "a", Shoots: 1, Reserved: 1, Allocatable: 2}, *ce)
	require.ErrorAs(t, s.CheckCapacity("a", ""), &ce)

	assert.NoError(t, s.CheckCapacity("unlimited", "other"))
	assert.ErrorIs(t, s.CheckCapacity("nope", "k"), ErrUnknownSeed)
	// Same answers as Reserve.
	assert.ErrorAs(t, s.Reserve("a", Claim{Key: "other", Namespace: "ns"}), &ce)
}

func TestCount(t *testing.T) {
	s := NewStore(Options{})
	for _, r := range CountableResources() {
		n, ok := s.Count(r)
		assert.True(t, ok, r)
		assert.Zero(t, n, r)
	}
	_, ok := s.Count("shoots")
	assert.False(t, ok, "shoots are namespaced and reduced; not countable")
	_, ok = s.Count("secrets")
	assert.False(t, ok)

	s.Apply(seed("a", 1))
	s.Apply(seed("b", 1))
	s.Apply(seed("b", 1)) // update
	withRV := seed("c", 1)
	withRV.ResourceVersion = "7"
	s.Apply(withRV)
	s.Apply(withRV) // resync
	s.Apply(cloudProfile("aws"))
	s.Apply(project("p1", "garden-p1"))
	noNamespace := project("p2", "")
	noNamespace.Spec.Namespace = nil
	s.Apply(noNamespace)
	s.Apply(shoot("p", "s", "a", ""))

	count := func(r string) int {
		n, ok := s.Count(r)
		require.True(t, ok)
		return n
	}
	assert.Equal(t, 3, count("seeds"))
	assert.Equal(t, 1, count("cloudprofiles"))
	assert.Equal(t, 2, count("projects"), "projects without spec.namespace count too")

	s.Remove(&api.Seed{ObjectMeta: metav1.ObjectMeta{Name: "b"}})
	s.Remove(&api.Seed{ObjectMeta: metav1.ObjectMeta{Name: "never"}})
	s.Remove(&api.Project{ObjectMeta: metav1.ObjectMeta{Name: "p2"}})
	s.Remove(&api.CloudProfile{ObjectMeta: metav1.ObjectMeta{Name: "aws"}})
	assert.Equal(t, 2, count("seeds"))
	assert.Equal(t, 1, count("projects"))
	assert.Equal(t, 0, count("cloudprofiles"))
}
