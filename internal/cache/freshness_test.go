package cache

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

type fakeReflector struct {
	mu sync.Mutex
	rv string
}

func (r *fakeReflector) LastSyncResourceVersion() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rv
}

func (r *fakeReflector) set(rv string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rv = rv
}

func TestFreshnessErrorStaleRelistFresh(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	synced := true
	f := NewFreshness(func() bool { return synced })
	a, b := &fakeReflector{rv: "10"}, &fakeReflector{rv: "10"}

	_, stale := f.Stale(t0)
	assert.False(t, stale, "fresh before any error")
	assert.Zero(t, f.StaleFor(t0))

	f.MarkReflectorStale(t0, a)
	f.MarkReflectorStale(t0.Add(5*time.Second), b)
	f.MarkReflectorStale(t0.Add(10*time.Second), a) // later errors keep the first time
	since, stale := f.Stale(t0.Add(20 * time.Second))
	assert.True(t, stale)
	assert.Equal(t, t0, since)
	assert.Equal(t, 45*time.Second, f.StaleFor(t0.Add(45*time.Second)))

	a.set("20") // a re-listed; b has not
	assert.Equal(t, 50*time.Second, f.StaleFor(t0.Add(50*time.Second)))

	b.set("21")
	synced = false // a registration not synced yet keeps it stale
	assert.Equal(t, 51*time.Second, f.StaleFor(t0.Add(51*time.Second)))
	synced = true
	_, stale = f.Stale(t0.Add(52 * time.Second))
	assert.False(t, stale, "every failed reflector re-listed")

	// A new error starts a new stale period.
	f.MarkReflectorStale(t0.Add(60*time.Second), a)
	assert.Equal(t, 5*time.Second, f.StaleFor(t0.Add(65*time.Second)))
	f.MarkFresh()
	assert.Zero(t, f.StaleFor(t0.Add(66*time.Second)))
}

func TestFreshnessGrace(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := NewFreshness(nil)
	f.Grace = time.Minute
	r := &fakeReflector{rv: "7"}
	f.MarkReflectorStale(t0, r)
	f.MarkReflectorStale(t0.Add(50*time.Second), r) // still failing
	_, stale := f.Stale(t0.Add(100 * time.Second))
	assert.True(t, stale, "the last error is within the grace")
	_, stale = f.Stale(t0.Add(111 * time.Second))
	assert.False(t, stale, "no error for the grace: recovered with an unchanged resource version")

	f.MarkStale(t0.Add(200 * time.Second)) // without a reflector: only the grace or MarkFresh clears it
	assert.Equal(t, 30*time.Second, f.StaleFor(t0.Add(230*time.Second)))
	assert.Zero(t, f.StaleFor(t0.Add(261*time.Second)))
}

func TestFreshnessWatchErrorHandler(t *testing.T) {
	f := NewFreshness(nil)
	f.WatchErrorHandler()(context.Background(), nil, errors.New("boom"))
	_, stale := f.Stale(time.Now())
	assert.True(t, stale)
	var nilF *Freshness
	assert.Zero(t, nilF.StaleFor(time.Now()))
}
