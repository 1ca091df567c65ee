package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/handlers"
)

type fakeRV struct{ rv string }

func (r *fakeRV) LastSyncResourceVersion() string { return r.rv }

func TestFreshnessChecker(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	f := cache.NewFreshness(func() bool { return true })
	check := freshnessChecker(handlers.StalenessGuard{Freshness: f, MaxStaleness: 30 * time.Second}, func() time.Time { return now })

	require.NoError(t, check(nil), "fresh")
	r := &fakeRV{rv: "5"}
	f.MarkReflectorStale(t0, r)
	now = t0.Add(30 * time.Second)
	require.NoError(t, check(nil), "stale within the bound")
	now = t0.Add(45 * time.Second)
	err := check(nil)
	require.Error(t, err)
	assert.Equal(t, "the informer cache is stale: watch broken for 45s (cache.maxStaleness 30s)", err.Error())
	r.rv = "9" // re-listed
	require.NoError(t, check(nil))

	// Bound disabled.
	f.MarkReflectorStale(now, r)
	now = now.Add(time.Hour)
	disabled := freshnessChecker(handlers.StalenessGuard{Freshness: f, MaxStaleness: 0}, func() time.Time { return now })
	require.NoError(t, disabled(nil))
	require.NoError(t, freshnessChecker(handlers.StalenessGuard{}, time.Now)(nil))
}
