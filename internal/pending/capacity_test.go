package pending

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// fakeCluster records the cross-replica reservations asked of it.
type fakeCluster struct {
	mu    sync.Mutex
	calls []clusterCall
	err   error
}

type clusterCall struct {
	seed, key, id string
	exists        bool
	allocatable   int64
	announced     string // the admission's reservation the Shoot carries
}

func (c *fakeCluster) ReserveFor(_ context.Context, seed string, h cache.Holder, allocatable int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, clusterCall{seed, h.Key, h.ID, h.Exists, allocatable, h.Announced})
	return c.err
}

func seedWithAllocatable(name string, shoots int64) *placement.Seed {
	obj := &api.Seed{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if shoots >= 0 {
		obj.Status.Allocatable = corev1.ResourceList{"shoots": *resource.NewQuantity(shoots, resource.DecimalSI)}
	}
	return placement.NewSeed(obj)
}

// The capacity webhook's matchConditions leave the controller's own binds
// out, so the controller reserves across replicas itself, under the Shoot's
// own key and uid (an existing Shoot's entry), before it binds; a refusal binds nothing and is retried on the
// short conflict backoff (the place it lacks frees any moment), an error
// on the backoff.
func TestBindReservesAcrossReplicasFirst(t *testing.T) {
	full := &cache.CapacityError{Seed: "aws-eu1", Shoots: 3, Allocatable: 3}
	tests := []struct {
		name      string
		seed      *placement.Seed // nil: unknown to the Store
		announced string          // the Shoot's seedwarden.io/reservation
		cluster   bool
		refuse    error
		wantCalls []clusterCall
		wantBound bool
		// wantRefused: retried on the conflict backoff (else the backoff).
		wantRefused bool
	}{
		{name: "no cross-replica coordination", seed: seedWithAllocatable("aws-eu1", 3), wantBound: true},
		{name: "seed with a capacity", seed: seedWithAllocatable("aws-eu1", 3), cluster: true,
			wantCalls: []clusterCall{{"aws-eu1", "garden-dev/s1", "uid-s1", true, 3, ""}}, wantBound: true},
		{name: "announced: the admission's entry is named, to be kept", seed: seedWithAllocatable("aws-eu1", 3), cluster: true, announced: "req-1",
			wantCalls: []clusterCall{{"aws-eu1", "garden-dev/s1", "uid-s1", true, 3, "req-1"}}, wantBound: true},
		{name: "seed without a capacity", seed: seedWithAllocatable("aws-eu1", -1), cluster: true, wantBound: true},
		{name: "seed full across replicas", seed: seedWithAllocatable("aws-eu1", 3), cluster: true, refuse: full,
			wantCalls: []clusterCall{{"aws-eu1", "garden-dev/s1", "uid-s1", true, 3, ""}}, wantRefused: true},
		{name: "reservation limits", seed: seedWithAllocatable("aws-eu1", 3), cluster: true, refuse: &cache.LimitError{Namespace: "garden-dev", Reason: metrics.RefusedReasonNamespace, Limit: 1},
			wantCalls: []clusterCall{{"aws-eu1", "garden-dev/s1", "uid-s1", true, 3, ""}}, wantRefused: true},
		{name: "API server unreachable", seed: seedWithAllocatable("aws-eu1", 3), cluster: true, refuse: errors.New("connection refused"),
			wantCalls: []clusterCall{{"aws-eu1", "garden-dev/s1", "uid-s1", true, 3, ""}}},
		{name: "seed gone from the cache", cluster: true, wantRefused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := fullShoot("s1", nil)
			if tt.announced != "" {
				sh.SetAnnotations(map[string]string{cache.AnnotationReservation: tt.announced})
			}
			f := newFixture(t, BindThroughSubresource, sh)
			f.store.decide = func(*api.Shoot) placement.Decision { return scheduled }
			if tt.seed != nil {
				f.store.seeds = map[string]*placement.Seed{tt.seed.Name: tt.seed}
			}
			c := &fakeCluster{err: tt.refuse}
			if tt.cluster {
				f.r.Cluster = c
			}
			res := f.reconcile(t, "s1")

			assert.Equal(t, tt.wantCalls, c.calls)
			events := f.recorder.Events()
			require.Len(t, events, 1)
			if tt.wantBound {
				assert.Zero(t, res)
				require.Len(t, f.writes.Writes(), 1)
				assert.Equal(t, api.SubresourceBinding, f.writes.Writes()[0].subResource)
				assert.Equal(t, ReasonSchedulingSuccessful, events[0].reason)
				return
			}
			assert.Empty(t, f.writes.Writes(), "nothing is bound without a place across replicas")
			assert.Equal(t, ReasonSchedulingFailed, events[0].reason)
			assert.Equal(t, []string{"manual/garden-dev/s1"}, f.store.releases, "the Store's place is given back")
			wait, _ := f.r.Backoff(keyOf("s1"))
			if tt.wantRefused {
				assert.Equal(t, 50*time.Millisecond, res.RequeueAfter, "retried on the conflict backoff")
				assert.Contains(t, events[0].note, `binding to seed "aws-eu1" refused, retrying shortly: `)
				assert.Equal(t, 1.0, f.retries(metrics.ResultRefused))
				assert.Zero(t, wait, "a refusal is no failed attempt")
				return
			}
			assert.Equal(t, time.Second, res.RequeueAfter, "retried with backoff")
			assert.Contains(t, events[0].note, `binding to seed "aws-eu1" failed: `)
			assert.Equal(t, 1.0, f.retries(metrics.ResultError))
			assert.Equal(t, time.Second, wait, "a failed attempt")
		})
	}
}

// Refusals in a row retry on the conflict backoff up to its cap, with one
// event, maxQuickRefusals times; the backoff does not move. The next one is
// a failed attempt.
func TestRefusedBindsRetryShortly(t *testing.T) {
	f := newFixture(t, BindThroughSubresource, fullShoot("s1", nil))
	f.r.Config.ConflictBackoffMax = 300 * time.Millisecond
	f.store.decide = func(*api.Shoot) placement.Decision { return scheduled }
	f.store.seeds = map[string]*placement.Seed{"aws-eu1": seedWithAllocatable("aws-eu1", 2)}
	c := &fakeCluster{err: &cache.CapacityError{Seed: "aws-eu1", Shoots: 1, Reserved: 1, Allocatable: 2}}
	f.r.Cluster = c
	var got []time.Duration
	for range maxQuickRefusals {
		wait := f.reconcile(t, "s1").RequeueAfter
		got = append(got, wait)
		f.advance(wait)
	}
	ms := time.Millisecond
	assert.Equal(t, []time.Duration{50 * ms, 100 * ms, 200 * ms, 300 * ms, 300 * ms, 300 * ms, 300 * ms, 300 * ms}, got)
	assert.Len(t, f.recorder.Events(), 1, "one event per run of refusals")
	assert.Equal(t, float64(maxQuickRefusals), f.retries(metrics.ResultRefused))
	wait, tracked := f.r.Backoff(keyOf("s1"))
	assert.True(t, tracked)
	assert.Zero(t, wait)

	// Refused for longer: a failed attempt.
	assert.Equal(t, time.Second, f.reconcile(t, "s1").RequeueAfter)
	wait, _ = f.r.Backoff(keyOf("s1"))
	assert.Equal(t, time.Second, wait)
	assert.Equal(t, 1.0, f.retries(metrics.ResultError))

	// The place frees: bound, and the conflict backoff starts over.
	c.err = nil
	assert.Zero(t, f.reconcile(t, "s1"))
	assert.Equal(t, 0, f.r.Pending())
}
