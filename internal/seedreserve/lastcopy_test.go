package seedreserve

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/seedwarden/seedwarden/internal/cache"
)

// apiCalls counts a fake API server's calls by verb.
type apiCalls struct {
	mu    sync.Mutex
	verbs []string
}

func (a *apiCalls) add(verb string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.verbs = append(a.verbs, verb)
}

func (a *apiCalls) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.verbs
	a.verbs = nil
	return out
}

func countingFake(calls *apiCalls) client.WithWatch {
	return newFake(&interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			calls.add("GET")
			return c.Get(ctx, key, obj, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			calls.add("CREATE")
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			calls.add("UPDATE")
			return c.Update(ctx, obj, opts...)
		},
	})
}

// A batch that writes is decided on the ConfigMap as this replica last
// wrote it: one UPDATE, no GET, while no other replica wrote. A stale copy
// costs one refused UPDATE, then the batch is decided on a fresh GET, as
// without the copy (the same answer: the seed never overfills), and the
// seed is read first for staleCopyPause. A batch that writes nothing is
// answered from a fresh GET only.
func TestBatchDecidesOnLastCopy(t *testing.T) {
	calls := &apiCalls{}
	c := countingFake(calls)
	clk := newClock()
	local := landscape(map[string]int64{"s": 3}, nil)
	r := newTestReserver(t, c, local, clk, noLimits)
	other := newTestReserver(t, c, local, clk, noLimits)

	require.NoError(t, create(r, "s", "garden-dev/a", "ci", 3))
	assert.Equal(t, []string{"GET", "CREATE"}, calls.take(), "first use: read, then create")
	require.NoError(t, create(r, "s", "garden-dev/b", "ci", 3))
	assert.Equal(t, []string{"UPDATE"}, calls.take(), "decided on the copy it wrote")

	require.NoError(t, create(other, "s", "garden-dev/o", "ci", 3))
	assert.Equal(t, []string{"GET", "UPDATE"}, calls.take(), "the other replica has no copy")

	var full *cache.CapacityError
	require.ErrorAs(t, create(r, "s", "garden-dev/c", "ci", 3), &full, "a, b and the other replica's o fill the seed")
	assert.Equal(t, []string{"UPDATE", "GET"}, calls.take(), "the stale copy's update is refused; decided again on a fresh GET")
	assert.Equal(t, []string{"garden-dev.a", "garden-dev.b", "garden-dev.o"}, sortedKeys(entries(t, c, "s")))
	calls.take() // the test's own read

	require.NoError(t, create(r, "s", "garden-dev/a", "ci", 3), "a retried request writes nothing")
	assert.Equal(t, []string{"GET"}, calls.take(), "answered from a fresh GET, not from the copy")

	local.Apply(pendingShoot("garden-dev", "a"))
	local.Apply(pendingShoot("garden-dev", "b"))
	local.Apply(pendingShoot("garden-dev", "o"))
	clk.Step(staleCopyPause)
	h := cache.Holder{ShootRef: cache.ShootRef{Key: "garden-dev/a", ID: "uid-a"}, Exists: true, Announced: requestUID("garden-dev/a")}
	require.NoError(t, r.ReserveFor(ctx, "s", h, 3), "the bind of the announced a keeps its entry")
	assert.Equal(t, []string{"GET"}, calls.take())
}
