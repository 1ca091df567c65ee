package seedreserve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/seedwarden/seedwarden/internal/cache"
)

// 409s from other replicas' writes are retried from a fresh read, and the
// decision is taken again on what is there now.
func TestReserveRetriesConflicts(t *testing.T) {
	t.Run("injected conflicts", func(t *testing.T) {
		var updates atomic.Int32
		c := newFake(&interceptor.Funcs{
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				if updates.Add(1) <= 3 {
					return apierrors.NewConflict(configMapsGR, obj.GetName(), errors.New("the object has been modified"))
				}
				return c.Update(ctx, obj, opts...)
			},
		})
		r := newTestReserver(t, c, landscape(map[string]int64{"s": 5}, nil), newClock())
		require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a", "", 5)) // creates
		require.NoError(t, r.Reserve(ctx, "s", "garden-dev/b", "", 5)) // 3 conflicts, then updates
		assert.Equal(t, int32(4), updates.Load())
		assert.Len(t, entries(t, c, "s"), 2)
	})

	t.Run("another replica takes the last place in between", func(t *testing.T) {
		clk := newClock()
		var other *Reserver
		var interfered atomic.Bool
		c := newFake(&interceptor.Funcs{
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				// Between this replica's read and write, the other one
				// writes: a real resourceVersion conflict follows.
				if !interfered.Swap(true) {
					assert.NoError(t, other.Reserve(ctx, "s", "garden-dev/other", "", 2))
				}
				return c.Update(ctx, obj, opts...)
			},
		})
		local := landscape(map[string]int64{"s": 2}, nil)
		r := newTestReserver(t, c, local, clk)
		other = newTestReserver(t, c, local, clk)
		require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a", "", 2))
		capacityError(t, r.Reserve(ctx, "s", "garden-dev/b", "", 2), 0, 2, 2)
		assert.Equal(t, []string{"garden-dev.a", "garden-dev.other"}, sortedKeys(entries(t, c, "s")))
	})

	t.Run("bounded", func(t *testing.T) {
		var updates atomic.Int32
		c := newFake(&interceptor.Funcs{
			Update: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.UpdateOption) error {
				updates.Add(1)
				return apierrors.NewConflict(configMapsGR, obj.GetName(), errors.New("the object has been modified"))
			},
		})
		r := newTestReserver(t, c, landscape(map[string]int64{"s": 5}, nil), newClock(), func(o *Options) { o.MaxAttempts = 4 })
		require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a", "", 5))
		err := r.Reserve(ctx, "s", "garden-dev/b", "", 5)
		require.Error(t, err)
		assert.False(t, errors.As(err, new(*cache.CapacityError)))
		assert.Contains(t, err.Error(), `reserving a place on seed "s": 4 attempts conflicted with other replicas' updates of ConfigMap seedwarden/seedwarden-capacity-s`)
		assert.Equal(t, int32(4), updates.Load())
		assert.Len(t, entries(t, c, "s"), 1)
	})
}

// Two replicas creating the ConfigMap at once: one gets AlreadyExists, reads
// the other's, and adds to it.
func TestReserveCreateRace(t *testing.T) {
	clk := newClock()
	local := landscape(map[string]int64{"s": 2}, nil)
	var other *Reserver
	var creates atomic.Int32
	c := newFake(&interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if creates.Add(1) == 1 {
				// The other replica creates it first.
				assert.NoError(t, other.Reserve(ctx, "s", "garden-dev/other", "", 2))
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	r := newTestReserver(t, c, local, clk)
	other = newTestReserver(t, c, local, clk)

	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a", "", 2))
	assert.Equal(t, []string{"garden-dev.a", "garden-dev.other"}, sortedKeys(entries(t, c, "s")))
	capacityError(t, r.Reserve(ctx, "s", "garden-dev/b", "", 2), 0, 2, 2)
	assert.Equal(t, int32(2), creates.Load())

	// And truly concurrently, many replicas on a fresh seed.
	c2 := newFake(nil)
	var wg sync.WaitGroup
	var ok atomic.Int32
	for i := range 8 {
		ri := newTestReserver(t, c2, local, clk)
		wg.Go(func() {
			if ri.Reserve(ctx, "fresh", fmt.Sprintf("garden-dev/r%d", i), "", 5) == nil {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(5), ok.Load())
	assert.Len(t, entries(t, c2, "fresh"), 5)
}

// Every failure to talk to the API server is an error, never a place (and
// never a CapacityError): the webhook denies.
func TestReserveFailsClosed(t *testing.T) {
	forbidden := apierrors.NewForbidden(configMapsGR, "seedwarden-capacity-s", errors.New(`User "system:serviceaccount:seedwarden:seedwarden" cannot get resource "configmaps"`))
	for _, tc := range []struct {
		name  string
		funcs interceptor.Funcs
		want  string
	}{{
		name: "get",
		funcs: interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return forbidden
		}},
		want: `reading reservations of seed "s" (ConfigMap seedwarden/seedwarden-capacity-s): configmaps "seedwarden-capacity-s" is forbidden`,
	}, {
		name: "create",
		funcs: interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
			return apierrors.NewServiceUnavailable("etcd is down")
		}},
		want: `creating reservations of seed "s" (ConfigMap seedwarden/seedwarden-capacity-s): etcd is down`,
	}, {
		name: "get times out",
		funcs: interceptor.Funcs{Get: func(ctx context.Context, _ client.WithWatch, _ client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
			<-ctx.Done()
			return ctx.Err()
		}},
		want: "context deadline exceeded",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := newFake(&tc.funcs)
			r := newTestReserver(t, c, landscape(map[string]int64{"s": 5}, nil), newClock(), func(o *Options) { o.Timeout = 100 * time.Millisecond })
			start := time.Now()
			err := r.Reserve(ctx, "s", "garden-dev/a", "", 5)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.False(t, errors.As(err, new(*cache.CapacityError)))
			assert.Less(t, time.Since(start), 2*time.Second)
			if tc.name != "create" {
				err = r.Check(ctx, "s", "garden-dev/a", 5)
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.want)
			}
		})
	}

	t.Run("update", func(t *testing.T) {
		clk := newClock()
		var fail atomic.Bool
		c := newFake(&interceptor.Funcs{
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				if fail.Load() {
					return apierrors.NewTooManyRequests("slow down", 1)
				}
				return c.Update(ctx, obj, opts...)
			},
		})
		r := newTestReserver(t, c, landscape(map[string]int64{"s": 2}, nil), clk)
		require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a", "", 2))
		fail.Store(true)
		err := r.Reserve(ctx, "s", "garden-dev/b", "", 2)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `updating reservations of seed "s" (ConfigMap seedwarden/seedwarden-capacity-s): slow down`)
		assert.Len(t, entries(t, c, "s"), 1)
	})

	t.Run("invalid names", func(t *testing.T) {
		r := newTestReserver(t, newFake(nil), landscape(nil, nil), newClock())
		for _, tc := range []struct{ seed, key, want string }{
			{"s", "no-slash", `reservation key "no-slash" is not <namespace>/<name>`},
			{"s", "/name", `is not <namespace>/<name>`},
			{"s", "ns.dotted/name", `is not <namespace>/<name>`},
			{"s", "ns/bad?name", `reservation key "ns/bad?name" cannot be stored`},
			{"", "ns/name", `seed name "" cannot name a reservation ConfigMap`},
			{"UPPER", "ns/name", `seed name "UPPER" cannot name`},
		} {
			err := r.Reserve(ctx, tc.seed, tc.key, "", 5)
			require.Error(t, err, "%s %s", tc.seed, tc.key)
			assert.Contains(t, err.Error(), tc.want)
			err = r.Check(ctx, tc.seed, tc.key, 5)
			require.Error(t, err)
		}
	})
}

// Concurrent reservations for one seed on one replica are decided together
// and written with few updates, in order, never past allocatable.
func TestReserveBatches(t *testing.T) {
	var writes atomic.Int32
	release := make(chan struct{})
	var first sync.Once
	c := newFake(&interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			writes.Add(1)
			// Hold the first write back until every request is queued.
			first.Do(func() { <-release })
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			writes.Add(1)
			return c.Update(ctx, obj, opts...)
		},
	})
	reg := &countingRecorder{}
	r := newTestReserver(t, c, landscape(map[string]int64{"s": 30}, map[string]int{"s": 10}), newClock(),
		func(o *Options) { o.Metrics = reg })

	const n = 50
	var (
		wg       sync.WaitGroup
		ok, full atomic.Int32
		other    = make(chan error, n)
	)
	wg.Go(func() {
		if r.Reserve(ctx, "s", "garden-dev/first", "", 30) == nil {
			ok.Add(1)
		}
	})
	require.Eventually(t, func() bool { return writes.Load() == 1 }, 5*time.Second, time.Millisecond)
	for i := range n - 1 {
		wg.Go(func() {
			switch err := r.Reserve(ctx, "s", fmt.Sprintf("garden-dev/s%02d", i), "", 30); {
			case err == nil:
				ok.Add(1)
			case errors.As(err, new(*cache.CapacityError)):
				full.Add(1)
			default:
				other <- err
			}
		})
	}
	require.Eventually(t, func() bool {
		q := r.queue("s")
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.pending) == n-1
	}, 5*time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	close(other)
	for err := range other {
		t.Error(err)
	}
	assert.Equal(t, int32(20), ok.Load())
	assert.Equal(t, int32(30), full.Load())
	assert.Equal(t, int32(2), writes.Load(), "one create, then one update for the 49 queued meanwhile")
	assert.Len(t, entries(t, c, "s"), 20)
}

// A caller whose context ends stops waiting with an error.
func TestReserveCallerGivesUp(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	c := newFake(&interceptor.Funcs{
		Get: func(ctx context.Context, _ client.WithWatch, _ client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
			select {
			case <-block:
			case <-ctx.Done():
			}
			return errors.New("unreachable")
		},
	})
	r := newTestReserver(t, c, landscape(nil, nil), newClock())
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	err := r.Reserve(cctx, "s", "garden-dev/a", "", 1)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), `reserving a place on seed "s" through the API server`)
}
