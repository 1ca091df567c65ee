package server

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outcomes counts what a Budget reports.
type outcomes struct {
	mu sync.Mutex
	n  map[string]int
}

func (o *outcomes) ObserveRequestBudget(outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == nil {
		o.n = map[string]int{}
	}
	o.n[outcome]++
}

func (o *outcomes) get() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.n)
}

// acquireAsync starts acquire(n) and returns where its result arrives.
func acquireAsync(b *Budget, n int64) <-chan bool {
	ch := make(chan bool, 1)
	go func() { ch <- b.acquire(context.Background(), n) }()
	return ch
}

// waitQueued waits until n requests wait in b.
func waitQueued(t *testing.T, b *Budget, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.queue) == n
	}, 5*time.Second, time.Millisecond)
}

// Whatever fits is let in at once; larger requests leave the reserve to
// small ones.
func TestBudgetAdmitsWhatFits(t *testing.T) {
	m := &outcomes{}
	b := NewBudget(10<<20, 3<<20, time.Second, m)
	require.True(t, b.acquire(context.Background(), 4<<20))
	require.True(t, b.acquire(context.Background(), 5<<20))
	for range SmallRequestReserve / SmallRequestBytes {
		require.True(t, b.acquire(context.Background(), SmallRequestBytes))
	}
	assert.Equal(t, int64(10<<20), b.InFlight())
	b.release(4 << 20)
	b.release(5 << 20)
	assert.Equal(t, int64(SmallRequestReserve), b.InFlight())
	assert.Empty(t, m.get(), "nothing waited")
}

// The reserve gives way when the budget would otherwise not hold one
// request of the body limit.
func TestBudgetAlwaysHoldsTheLargestRequest(t *testing.T) {
	b := NewBudget(3<<20, 3<<20, 0, nil)
	require.True(t, b.acquire(context.Background(), 3<<20))
	b = NewBudget(3<<20+SmallRequestReserve/2, 3<<20, 0, nil)
	require.True(t, b.acquire(context.Background(), 3<<20))
	assert.True(t, b.acquire(context.Background(), SmallRequestBytes), "what is left of the reserve")
}

// A large request does not take the reserve: with the large share in use
// it waits (here: is refused at once), while a small one gets in.
func TestBudgetReserveIsForSmallRequests(t *testing.T) {
	b := NewBudget(10<<20, 3<<20, 0, nil)
	require.True(t, b.acquire(context.Background(), 9<<20))
	assert.False(t, b.acquire(context.Background(), SmallRequestBytes+1))
	assert.True(t, b.acquire(context.Background(), SmallRequestBytes))
}

// A request that does not fit waits for room: it gets in as soon as
// enough is released, and counts as queued.
func TestBudgetQueuesUntilRoom(t *testing.T) {
	m := &outcomes{}
	b := NewBudget(10<<20, 3<<20, 5*time.Second, m)
	require.True(t, b.acquire(context.Background(), 8<<20))
	got := acquireAsync(b, 4<<20)
	waitQueued(t, b, 1)
	b.release(8 << 20)
	assert.True(t, <-got)
	assert.Equal(t, int64(4<<20), b.InFlight())
	assert.Equal(t, map[string]int{BudgetQueued: 1}, m.get())
}

// No room within the wait: refused, and the bytes it asked for were never
// taken.
func TestBudgetRefusesAfterWait(t *testing.T) {
	m := &outcomes{}
	b := NewBudget(10<<20, 3<<20, 50*time.Millisecond, m)
	require.True(t, b.acquire(context.Background(), 8<<20))
	assert.False(t, b.acquire(context.Background(), 4<<20))
	assert.Equal(t, int64(8<<20), b.InFlight())
	assert.Equal(t, map[string]int{BudgetRefused: 1}, m.get())

	// "0s": refused at once.
	b = NewBudget(10<<20, 3<<20, 0, nil)
	require.True(t, b.acquire(context.Background(), 8<<20))
	assert.False(t, b.acquire(context.Background(), 4<<20))
}

// A client that goes away stops waiting.
func TestBudgetWaitEndsWithContext(t *testing.T) {
	b := NewBudget(10<<20, 3<<20, time.Minute, nil)
	require.True(t, b.acquire(context.Background(), 10<<20))
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan bool, 1)
	go func() { got <- b.acquire(ctx, 1<<20) }()
	waitQueued(t, b, 1)
	cancel()
	assert.False(t, <-got)
	waitQueued(t, b, 0)
}

// Large requests are served in arrival order: a later, smaller large one
// does not pass an earlier one that is waiting, even when it would fit.
func TestBudgetLargeRequestsInOrder(t *testing.T) {
	b := NewBudget(10<<20, 3<<20, 5*time.Second, nil)
	require.True(t, b.acquire(context.Background(), 6<<20))
	first := acquireAsync(b, 8<<20)
	waitQueued(t, b, 1)
	second := acquireAsync(b, 3<<20) // fits (6+3 <= 9), but the 8 MiB one waits before it
	waitQueued(t, b, 2)
	b.release(6 << 20)
	assert.True(t, <-first)
	assert.Equal(t, int64(8<<20), b.InFlight(), "the second still waits")
	b.release(8 << 20)
	assert.True(t, <-second)
}

// Small requests are not starved by large ones: they pass waiting large
// requests whenever they fit.
func TestBudgetSmallRequestsPassLargeOnes(t *testing.T) {
	b := NewBudget(10<<20, 3<<20, 5*time.Second, nil)
	require.True(t, b.acquire(context.Background(), 9<<20))
	large := acquireAsync(b, 3<<20)
	waitQueued(t, b, 1)
	// Small requests fit beside the 9 MiB in flight, although a large
	// request waits: they fill the budget.
	for range (1 << 20) / SmallRequestBytes {
		require.True(t, b.acquire(context.Background(), SmallRequestBytes))
	}
	assert.Equal(t, int64(10<<20), b.InFlight())

	// With the budget full, a small request waits too, and is let in
	// first once there is room for it but not yet for the large one.
	small := acquireAsync(b, 10<<10)
	waitQueued(t, b, 2)
	b.release(SmallRequestBytes)
	assert.True(t, <-small)
	select {
	case <-large:
		t.Fatal("the large request got in without room")
	default:
	}
	b.release(9 << 20)
	assert.True(t, <-large)
}

// A large request that gives up at the head of the queue lets those
// behind it in.
func TestBudgetRefusalUnblocksQueue(t *testing.T) {
	b := NewBudget(10<<20, 3<<20, 5*time.Second, nil)
	require.True(t, b.acquire(context.Background(), 5<<20))
	ctx, cancel := context.WithCancel(context.Background())
	head := make(chan bool, 1)
	go func() { head <- b.acquire(ctx, 8<<20) }()
	waitQueued(t, b, 1)
	behind := acquireAsync(b, 4<<20)
	waitQueued(t, b, 2)
	cancel()
	assert.False(t, <-head)
	assert.True(t, <-behind)
	assert.Equal(t, int64(9<<20), b.InFlight())
}
