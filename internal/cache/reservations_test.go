package cache

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
)

func TestReserve(t *testing.T) {
	type step struct {
		seed, key string
		wantErr   string // substring; "" means success
	}
	tests := []struct {
		name   string
		shoots int // on seed "a" (allocatable 3)
		steps  []step
		want   map[string]int64
	}{
		{
			name:  "up to allocatable",
			steps: []step{{"a", "k1", ""}, {"a", "k2", ""}, {"a", "k3", ""}, {"a", "k4", `seed "a" is full: usage 3 (0 shoots + 3 reservations) + 1 would exceed allocatable shoots 3`}},
			want:  map[string]int64{"a": 3},
		},
		{
			name:   "shoots and reservations share the capacity",
			shoots: 2,
			steps:  []step{{"a", "k1", ""}, {"a", "k2", "usage 3 (2 shoots + 1 reservations)"}},
			want:   map[string]int64{"a": 3},
		},
		{
			name:   "already over capacity",
			shoots: 5,
			steps:  []step{{"a", "k1", "usage 5 (5 shoots + 0 reservations) + 1 would exceed allocatable shoots 3"}},
			want:   map[string]int64{"a": 5},
		},
		{
			name:  "same key twice is idempotent",
			steps: []step{{"a", "k1", ""}, {"a", "k1", ""}, {"a", "k1", ""}},
			want:  map[string]int64{"a": 1},
		},
		{
			name:   "same key is idempotent even when the seed is full",
			shoots: 2,
			steps:  []step{{"a", "k1", ""}, {"a", "k1", ""}},
			want:   map[string]int64{"a": 3},
		},
		{
			name:  "same key on another seed moves",
			steps: []step{{"a", "k1", ""}, {"unlimited", "k1", ""}},
			want:  map[string]int64{"a": 0, "unlimited": 1},
		},
		{
			name:   "a failed move keeps the old reservation",
			shoots: 3,
			steps:  []step{{"unlimited", "k1", ""}, {"a", "k1", "is full"}},
			want:   map[string]int64{"a": 3, "unlimited": 1},
		},
		{
			name:  "seed without allocatable is unlimited",
			steps: []step{{"unlimited", "k1", ""}, {"unlimited", "k2", ""}, {"unlimited", "k3", ""}, {"unlimited", "k4", ""}},
			want:  map[string]int64{"unlimited": 4},
		},
		{
			name:  "unknown seed",
			steps: []step{{"nope", "k1", `unknown seed "nope"`}},
			want:  map[string]int64{"nope": 0},
		},
		{
			name:  "empty key",
			steps: []step{{"a", "", "key must not be empty"}},
			want:  map[string]int64{"a": 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore(Options{})
			s.Apply(seed("a", 3))
			s.Apply(seed("unlimited", -1))
			for i := range tc.shoots {
				s.Apply(shoot("p", fmt.Sprint(i), "a", ""))
			}
			for i, st := range tc.steps {
				err := s.Reserve(st.seed, Claim{Key: st.key, Namespace: "ns"})
				if st.wantErr == "" {
					assert.NoError(t, err, "step %d", i)
				} else {
					assert.ErrorContains(t, err, st.wantErr, "step %d", i)
				}
			}
			names := make([]string, 0, len(tc.want))
			for n := range tc.want {
				names = append(names, n)
			}
			assert.Equal(t, tc.want, usages(s, names...))
		})
	}
}

func TestReserveErrorTypes(t *testing.T) {
	s := NewStore(Options{})
	s.Apply(seed("a", 0))
	var ce *CapacityError
	require.ErrorAs(t, s.Reserve("a", Claim{Key: "k", Namespace: "ns"}), &ce)
	assert.Equal(t, CapacityError{Seed: "a", Allocatable: 0}, *ce)
	assert.ErrorIs(t, s.Reserve("b", Claim{Key: "k", Namespace: "ns"}), ErrUnknownSeed)
}

func TestRelease(t *testing.T) {
	s := NewStore(Options{})
	s.Apply(seed("a", 1))
	require.NoError(t, s.Reserve("a", Claim{Key: "k1", Namespace: "ns"}))
	require.Error(t, s.Reserve("a", Claim{Key: "k2", Namespace: "ns"}))
	s.Release("k1")
	s.Release("k1")    // idempotent
	s.Release("never") // unknown
	assert.Equal(t, int64(0), s.Usage("a"))
	assert.NoError(t, s.Reserve("a", Claim{Key: "k2", Namespace: "ns"}))
}

func TestReservationEndsWhenShootArrives(t *testing.T) {
	withAnnotation := func(sh *api.Shoot, key string) *api.Shoot {
		sh.Annotations = map[string]string{AnnotationReservation: key}
		return sh
	}
	tests := []struct {
		name    string
		shoot   *api.Shoot
		want    int64
		stillOn bool // the reservation survives
	}{
		{"annotated shoot with seed replaces its reservation", withAnnotation(shoot("p", "s", "a", ""), "k"), 1, false},
		{"annotated shoot placed elsewhere still ends it", withAnnotation(shoot("p", "s", "b", ""), "k"), 0, false},
		{"annotated shoot without seed keeps it", withAnnotation(shoot("p", "s", "", ""), "k"), 1, true},
		{"other key keeps it", withAnnotation(shoot("p", "s", "a", ""), "other"), 2, true},
		{"no annotation keeps it", shoot("p", "s", "a", ""), 2, true},
		// The annotation is the user's to write: a key copied onto another
		// Shoot ends nothing.
		{"key on another Shoot keeps it", withAnnotation(shoot("p", "t", "a", ""), "k"), 2, true},
		{"key on a Shoot of another namespace keeps it", withAnnotation(shoot("q", "s", "a", ""), "k"), 2, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore(Options{})
			s.Apply(seed("a", 10))
			s.Apply(seed("b", 10))
			require.NoError(t, s.Reserve("a", Claim{Key: "k", Namespace: "p", Name: "s"}))
			s.Apply(tc.shoot)
			assert.Equal(t, tc.want, s.Usage("a"))
			s.mu.Lock()
			_, on := s.reservations["k"]
			s.mu.Unlock()
			assert.Equal(t, tc.stillOn, on)
		})
	}
}

func TestReservationTTL(t *testing.T) {
	clock := newFakeClock()
	// A window as long as the TTL: the TTL alone ends these.
	s := NewStore(Options{ReservationTTL: 30 * time.Second, ConfirmWindow: 30 * time.Second, Now: clock.Now})
	s.Apply(seed("a", 2))
	require.NoError(t, s.Reserve("a", Claim{Key: "k1", Namespace: "ns"}))
	clock.Step(10 * time.Second)
	require.NoError(t, s.Reserve("a", Claim{Key: "k2", Namespace: "ns"}))
	require.Error(t, s.Reserve("a", Claim{Key: "k3", Namespace: "ns"}))

	clock.Step(19 * time.Second) // k1 at 29s, k2 at 19s
	snap := s.Snapshot()
	assert.Equal(t, int64(2), snap.Usage(snap.Seeds[0]))

	clock.Step(time.Second) // k1 expires at exactly 30s
	snap = s.Snapshot()     // Snapshot sweeps lazily
	assert.Equal(t, int64(1), snap.Usage(snap.Seeds[0]))
	assert.Equal(t, []metrics.SeedStat{{Name: "a", Provider: "aws", Region: "eu-west-1", Usage: 1, Allocatable: 2, HasAllocatable: true}}, s.SeedStats(nil))

	clock.Step(10 * time.Second)
	assert.Equal(t, int64(0), s.Usage("a"))
	assert.NoError(t, s.Reserve("a", Claim{Key: "k1", Namespace: "ns"}), "an expired key can be reserved again")
	assert.Equal(t, int64(1), s.Usage("a"))
}

func TestReservationTTLExpiresOnReserve(t *testing.T) {
	clock := newFakeClock()
	s := NewStore(Options{Now: clock.Now}) // default TTL 30s
	s.Apply(seed("a", 1))
	require.NoError(t, s.Reserve("a", Claim{Key: "k1", Namespace: "ns"}))
	clock.Step(31 * time.Second)
	assert.NoError(t, s.Reserve("a", Claim{Key: "k2", Namespace: "ns"}), "the expired reservation no longer holds the place")
}

// TestReserveConcurrent: Reserve alone never overfills.
func TestReserveConcurrent(t *testing.T) {
	s := NewStore(Options{})
	s.Apply(seed("a", 60))
	for i := range 10 {
		s.Apply(shoot("p", fmt.Sprint(i), "a", ""))
	}
	var ok, full atomic.Int32
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			var ce *CapacityError
			switch err := s.Reserve("a", Claim{Key: fmt.Sprint("k", i), Namespace: "ns"}); {
			case err == nil:
				ok.Add(1)
			case errors.As(err, &ce):
				full.Add(1)
			default:
				t.Errorf("unexpected error: %v", err)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(50), ok.Load())
	assert.Equal(t, int32(150), full.Load())
	assert.Equal(t, int64(60), s.Usage("a"))
}

// Release of a key without a reservation takes no lock (Place releases
// every fresh admission UID first), even with reservations due to expire:
// those go at the next sweep. With a reservation it waits for the lock and
// ends it.
func TestReleaseFastPath(t *testing.T) {
	clock := newFakeClock()
	s := NewStore(Options{ReservationTTL: 30 * time.Second, Now: clock.Now})
	s.Apply(seed("a", 10))
	require.NoError(t, s.Reserve("a", Claim{Key: "held", Namespace: "ns"}))

	returns := func(key string) bool {
		done := make(chan struct{})
		go func() { s.Release(key); close(done) }()
		select {
		case <-done:
			return true
		case <-time.After(100 * time.Millisecond):
			return false
		}
	}

	s.mu.Lock()
	assert.True(t, returns("never-reserved"), "no reservation: no lock")
	done := make(chan struct{})
	go func() { s.Release("held"); close(done) }()
	select {
	case <-done:
		t.Fatal("Release of a held key did not wait for the lock")
	case <-time.After(50 * time.Millisecond):
	}
	s.mu.Unlock()
	<-done
	assert.Equal(t, int64(0), s.Usage("a"))
	_, held := s.reserved.Load("held")
	assert.False(t, held, "the index forgets a released key")

	// An expired reservation is not swept by Release of another key, but
	// no longer counts, and leaves the index when swept.
	require.NoError(t, s.Reserve("a", Claim{Key: "expiring", Namespace: "ns"}))
	clock.Step(31 * time.Second)
	s.mu.Lock()
	assert.True(t, returns("never-reserved"), "a reservation due to expire does not make Release lock")
	s.mu.Unlock()
	assert.Equal(t, int64(0), s.Usage("a"), "readers sweep first")
	_, held = s.reserved.Load("expiring")
	assert.False(t, held, "expiry removes the key from the index")

	// Releasing an expired key that was not swept yet sweeps it.
	require.NoError(t, s.Reserve("a", Claim{Key: "expired", Namespace: "ns"}))
	clock.Step(31 * time.Second)
	s.Release("expired")
	s.mu.Lock()
	assert.Empty(t, s.reservations)
	s.mu.Unlock()
	_, held = s.reserved.Load("expired")
	assert.False(t, held)
}

// The index and the reservations agree under concurrent Reserve, Release
// and Place of shared and fresh keys (run with -race).
func TestReleaseFastPathConcurrent(t *testing.T) {
	s := NewStore(Options{})
	s.decide = leastUsedDecide
	s.Apply(seed("a", 1000))
	s.Apply(seed("b", 1000))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				shared := fmt.Sprintf("shared-%d", i%5)
				switch i % 4 {
				case 0:
					_ = s.Reserve([]string{"a", "b"}[(g+i)%2], Claim{Key: shared, Namespace: "ns"})
				case 1:
					s.Release(shared)
				case 2:
					s.Place(&api.Shoot{}, placement.Options{}, fmt.Sprintf("fresh-%d-%d", g, i))
				case 3:
					s.Release(fmt.Sprintf("fresh-%d-%d", g, i-1))
				}
			}
		})
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	indexed := 0
	s.reserved.Range(func(k, _ any) bool {
		indexed++
		assert.Contains(t, s.reservations, k)
		return true
	})
	assert.Equal(t, len(s.reservations), indexed)
	var reserved int64
	for _, name := range []string{"a", "b"} {
		if c := s.counters[name]; c != nil {
			reserved += c.reserved.Load()
		}
	}
	assert.Equal(t, int64(len(s.reservations)), reserved)
}

// A Shoot awaiting a seed holds a place when its admission's reservation
// (its annotation) or a manual one is live for it; a key on the wrong
// Shoot, or one that was released, holds none.
func TestHoldsPlace(t *testing.T) {
	annotated := func(name, key string) *api.Shoot {
		sh := shoot("p", name, "", "")
		sh.Annotations = map[string]string{AnnotationReservation: key}
		return sh
	}
	s := NewStore(Options{})
	s.Apply(seed("a", 10))
	require.NoError(t, s.Reserve("a", Claim{Key: "adm", Namespace: "p", Name: "s"}))
	require.NoError(t, s.Reserve("a", Claim{Key: ManualReservationKey("p", "bound"), Namespace: "p", Name: "bound"}))
	tests := []struct {
		name  string
		shoot *api.Shoot
		want  bool
	}{
		{"admission reservation", annotated("s", "adm"), true},
		{"manual reservation of a bind", shoot("p", "bound", "", ""), true},
		{"another Shoot's key", annotated("t", "adm"), false},
		{"no reservation", shoot("p", "free", "", ""), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, s.HoldsPlace(tc.shoot))
		})
	}
	s.Release("adm")
	assert.False(t, s.HoldsPlace(annotated("s", "adm")), "released")
}
