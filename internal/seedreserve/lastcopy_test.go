package seedreserve

import (
	"context"
	"sync"
	"testing"
	"time"

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
	assert.Empty(t, calls.take(), "answered from the copy (TestBindKeepsFromCopy)")
}

// The bind of an announced Shoot that keeps the admission's entry is
// answered from this replica's copy, with no request, while the copy is
// younger than the confirm window and the entry lasts keptUntil; even when
// another replica wrote since (its write cannot have ended the entry). An
// entry that would not last, a copy as old as the window, one just found
// stale, or a batch with anything else to decide still reads (and writes
// what it must). Either way the entry holds its place.
func TestBindKeepsFromCopy(t *testing.T) {
	announcedA := requestUID("garden-dev/a")
	tests := []struct {
		name      string
		window    time.Duration // confirm window; 0: the default (5 s)
		age       time.Duration // of the admission's entry (and the copy)
		other     bool          // another replica wrote the seed since
		stale     bool          // the copy was just found stale
		announced string
		id        string // of the request; "": the Shoot's uid
		want      []string
	}{
		{name: "fresh copy", age: time.Second, announced: announcedA},
		{name: "another replica wrote since", age: time.Second, other: true, announced: announcedA},
		{name: "4 s old entry", age: 4 * time.Second, announced: announcedA},
		{name: "6 s old entry: would not last keptUntil, written afresh (on the copy)", age: 6 * time.Second, announced: announcedA, want: []string{"UPDATE"}},
		{name: "copy as old as the window", window: 2 * time.Second, age: 2 * time.Second, announced: announcedA, want: []string{"GET"}},
		{name: "copy just found stale", age: time.Second, stale: true, announced: announcedA, want: []string{"GET"}},
		{name: "a retried admission: not a kept bind", age: time.Second, id: announcedA, want: []string{"GET"}},
		{name: "no announcement: written afresh", age: time.Second, want: []string{"UPDATE"}},
		{name: "another identity: written afresh", age: time.Second, announced: "req-someone-else", want: []string{"UPDATE"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := &apiCalls{}
			c := countingFake(calls)
			clk := newClock()
			local := landscape(map[string]int64{"s": 3}, nil)
			mod := func(o *Options) {
				if tc.window > 0 {
					o.ConfirmWindow = tc.window
				}
			}
			r := newTestReserver(t, c, local, clk, noLimits, mod)
			require.NoError(t, create(r, "s", "garden-dev/a", "ci", 3))
			local.Apply(pendingShoot("garden-dev", "a"))
			if tc.other {
				other := newTestReserver(t, c, local, clk, noLimits, mod)
				require.NoError(t, create(other, "s", "garden-dev/o", "ci", 3))
			}
			clk.Step(tc.age)
			if tc.stale {
				r.queue("s").stale = clk.Now()
			}
			calls.take()

			id := "uid-a"
			if tc.id != "" {
				id = tc.id
			}
			h := cache.Holder{ShootRef: cache.ShootRef{Key: "garden-dev/a", ID: id}, Exists: tc.id == "", Announced: tc.announced}
			require.NoError(t, r.ReserveFor(ctx, "s", h, 3), "the Shoot's own place")
			if tc.want == nil {
				assert.Empty(t, calls.take(), "no request")
			} else {
				assert.Equal(t, tc.want, calls.take())
			}
			assert.Contains(t, entries(t, c, "s"), "garden-dev.a", "the place stays held")
		})
	}
}
