package cache

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

func TestPlaceDryRunReservesNothing(t *testing.T) {
	s := NewStore(Options{})
	s.decide = leastUsedDecide
	s.Apply(seed("a", 1))
	for range 3 {
		d := s.Place(shoot("p", "s", "", ""), placement.Options{}, "")
		assert.Equal(t, "a", d.Seed)
	}
	assert.Equal(t, int64(0), s.Usage("a"))
}

func TestPlaceReserves(t *testing.T) {
	s := NewStore(Options{})
	s.decide = leastUsedDecide
	s.Apply(seed("a", 1))
	s.Apply(seed("b", 1))
	assert.Equal(t, "a", s.Place(shoot("p", "s1", "", ""), placement.Options{}, "k1").Seed)
	assert.Equal(t, "b", s.Place(shoot("p", "s2", "", ""), placement.Options{}, "k2").Seed)
	d := s.Place(shoot("p", "s3", "", ""), placement.Options{}, "k3")
	assert.False(t, d.Schedulable())
	assert.Equal(t, map[string]int64{"a": 1, "b": 1}, usages(s, "a", "b"))
}

func TestPlaceRetryReplacesOwnReservation(t *testing.T) {
	s := NewStore(Options{})
	s.decide = leastUsedDecide
	s.Apply(seed("a", 1))
	for range 3 {
		// A retried admission (same key) must find its own place again.
		assert.Equal(t, "a", s.Place(shoot("p", "s", "", ""), placement.Options{}, "k").Seed)
	}
	assert.Equal(t, int64(1), s.Usage("a"))
}

func TestPlaceGivesUpAfterBoundedRetries(t *testing.T) {
	s := NewStore(Options{})
	s.Apply(seed("a", 1))
	require.NoError(t, s.Reserve("a", Claim{Key: "other", Namespace: "ns"}))
	var calls atomic.Int32
	// A decider that ignores usage keeps choosing the full seed.
	s.decide = func(snap *placement.Snapshot, _ *api.Shoot, _ placement.Options) placement.Decision {
		calls.Add(1)
		return placement.Decision{Seed: "a", Tied: []string{"a"}, Total: len(snap.Seeds)}
	}
	d := s.Place(shoot("p", "s", "", ""), placement.Options{}, "k")
	assert.False(t, d.Schedulable())
	assert.Equal(t, placement.StepCandidates, d.Step)
	assert.Contains(t, d.Reasons["a"], "is full")
	assert.Equal(t, int32(maxPlaceAttempts), calls.Load())
	assert.Equal(t, int64(1), s.Usage("a"))
}

func placeConcurrently(t *testing.T, s *Store, n int) (placed map[string]int, unschedulable int) {
	t.Helper()
	var mu sync.Mutex
	placed = map[string]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sh := shoot("p", fmt.Sprint("new-", i), "", "")
			d := s.Place(sh, placement.Options{Strategy: placement.SameRegion, NetworkMode: placement.Disjoint}, fmt.Sprint("req-", i))
			mu.Lock()
			defer mu.Unlock()
			if d.Schedulable() {
				placed[d.Seed]++
			} else {
				unschedulable++
			}
		})
	}
	wg.Wait()
	return placed, unschedulable
}

// While the shoots' watch events race with admissions, usage must stay exact.
func concurrentLandscape(s *Store) {
	s.Apply(cloudProfile("aws"))
	s.Apply(project("p", "p"))
	s.Apply(seed("a", 60))
	for i := range 10 {
		s.Apply(shoot("other", fmt.Sprint(i), "a", ""))
	}
}

func TestPlaceConcurrent(t *testing.T) {
	s := NewStore(Options{})
	s.decide = leastUsedDecide
	concurrentLandscape(s)
	placed, unschedulable := placeConcurrently(t, s, 200)
	assert.Equal(t, map[string]int{"a": 50}, placed)
	assert.Equal(t, 150, unschedulable)
	assert.Equal(t, int64(60), s.Usage("a"))
}

func TestPlaceConcurrentWithDecide(t *testing.T) {
	s := NewStore(Options{}) // the real placement.Decide
	concurrentLandscape(s)
	probe := s.Place(shoot("p", "probe", "", ""), placement.Options{Strategy: placement.SameRegion, NetworkMode: placement.Disjoint}, "")
	require.True(t, probe.Schedulable(), "the probe Shoot must be placeable (%s: %s)", probe.Step, probe.Message)
	placed, unschedulable := placeConcurrently(t, s, 200)
	assert.Equal(t, map[string]int{"a": 50}, placed)
	assert.Equal(t, 150, unschedulable)
	assert.Equal(t, int64(60), s.Usage("a"))
}

// Shoots arriving (with their reservation annotation) while others place must
// not let usage drift.
func TestPlaceConcurrentWithArrivals(t *testing.T) {
	s := NewStore(Options{})
	s.decide = leastUsedDecide
	s.Apply(seed("a", 100))
	var wg sync.WaitGroup
	var placedN atomic.Int32
	for i := range 150 {
		wg.Go(func() {
			key := fmt.Sprint("req-", i)
			d := s.Place(shoot("p", fmt.Sprint(i), "", ""), placement.Options{}, key)
			if !d.Schedulable() {
				return
			}
			placedN.Add(1)
			arrived := shoot("p", fmt.Sprint(i), d.Seed, "")
			arrived.ObjectMeta = metav1.ObjectMeta{Namespace: "p", Name: fmt.Sprint(i), Annotations: map[string]string{AnnotationReservation: key}}
			s.Apply(arrived)
		})
	}
	wg.Wait()
	assert.Equal(t, int32(100), placedN.Load())
	assert.Equal(t, int64(100), s.Usage("a"))
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Empty(t, s.reservations, "every reservation ended when its shoot arrived")
}
