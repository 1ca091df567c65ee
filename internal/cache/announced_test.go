package cache

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

func TestPlaceOn(t *testing.T) {
	opts := placement.Options{Strategy: placement.SameRegion}
	const to = "manual/p/new"
	tests := []struct {
		name string
		// admission reserves under "uid" on seed a when true.
		reserved bool
		shootsA  int // existing Shoots on a (allocatable 2); b is empty
		change   func(*api.Seed)
		want     bool
		// usage afterwards, the place the Shoot holds included.
		wantA, wantB int64
	}{
		// a holds 1 Shoot and the admission's place: full, and more used
		// than b, yet kept, its own place not counted twice.
		{name: "announced seed kept though b is less used and a is full", reserved: true, shootsA: 1, want: true, wantA: 2},
		{name: "reserved afresh when the admission's place is gone", shootsA: 1, want: true, wantA: 2},
		{name: "refused when full without an own place", shootsA: 2, want: false, wantA: 2},
		{name: "refused when the seed's taints are no longer tolerated", reserved: true, change: func(s *api.Seed) {
			s.Spec.Taints = []api.SeedTaint{{Key: "drain"}}
		}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStore(Options{})
			s.Apply(cloudProfile("aws"))
			s.Apply(project("p", "p"))
			a := seed("a", 2)
			if tt.change != nil {
				tt.change(a)
			}
			s.Apply(a)
			s.Apply(seed("b", 2))
			for i := range tt.shootsA {
				s.Apply(shoot("p", string(rune('0'+i)), "a", ""))
			}
			if tt.reserved {
				require.NoError(t, s.Reserve("a", Claim{Key: "uid", Namespace: "p", Name: "new"}))
			}

			got := s.PlaceOn(shoot("p", "new", "", ""), opts, "a", "uid", to)

			assert.Equal(t, tt.want, got)
			_, held := s.Reservation("uid")
			assert.False(t, held, "the admission's key holds nothing afterwards")
			seedOf, ok := s.Reservation(to)
			assert.Equal(t, tt.want, ok, "the binding's key holds a place exactly when kept")
			if ok {
				assert.Equal(t, "a", seedOf)
			}
			assert.Equal(t, map[string]int64{"a": tt.wantA, "b": tt.wantB}, usages(s, "a", "b"))
		})
	}
}

func TestOnArrival(t *testing.T) {
	s := NewStore(Options{})
	s.Apply(cloudProfile("aws"))
	s.Apply(seed("a", -1))
	type arrival struct{ name, seed string }
	var got []arrival
	s.OnArrival(func(sh *api.Shoot, seed string) { got = append(got, arrival{sh.Name, seed}) })
	require.NoError(t, s.Reserve("a", Claim{Key: "uid-1", Namespace: "p", Name: "placed"}))

	placed := shoot("p", "placed", "a", "")
	placed.Annotations = map[string]string{AnnotationReservation: "uid-1"}
	s.Apply(placed)
	s.Apply(placed) // a later update: the reservation is fulfilled already
	other := shoot("p", "other-replica", "a", "")
	other.Annotations = map[string]string{AnnotationReservation: "uid-elsewhere"}
	s.Apply(other)
	s.Apply(shoot("p", "manual", "a", ""))

	assert.Equal(t, []arrival{{"placed", "a"}}, got, "once, for the placement this Store reserved")
}

// The reservation limits bound unconfirmed reservations: an announced
// placement is of a Shoot that exists, so a flood at the limit neither
// leaves it unreserved nor sends it elsewhere.
func TestPlaceOnAtLimit(t *testing.T) {
	opts := placement.Options{Strategy: placement.SameRegion}
	s := NewStore(Options{Limits: Limits{PerNamespace: 1, PerUser: 1, Total: 1}})
	s.Apply(cloudProfile("aws"))
	s.Apply(project("p", "p"))
	s.Apply(seed("a", 2))
	require.NoError(t, s.Reserve("a", Claim{Key: "flood", Namespace: "p", User: "mallory"}))
	s.Apply(shoot("p", "new", "", "")) // it exists, waiting for its binding

	assert.True(t, s.PlaceOn(shoot("p", "new", "", ""), opts, "a", "", "manual/p/new"))
	_, held := s.Reservation("manual/p/new")
	assert.True(t, held, "reserved, past every limit")
	assert.Equal(t, int64(2), s.Usage("a"))
	s.Release("manual/p/new")

	s.Apply(shoot("other", "x", "a", "")) // a is full now
	assert.False(t, s.PlaceOn(shoot("p", "new", "", ""), opts, "a", "", "manual/p/new"), "a full seed still refuses")
}
