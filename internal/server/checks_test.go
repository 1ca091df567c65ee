package server

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/handlers"
)

// staleFor reports the cache stale for a fixed duration.
type staleFor time.Duration

func (d *staleFor) StaleFor(time.Time) time.Duration { return time.Duration(*d) }

func TestFreshnessChecker(t *testing.T) {
	var d staleFor
	check := FreshnessChecker(handlers.StalenessGuard{Freshness: &d, MaxStaleness: 30 * time.Second}, 30*time.Second, time.Now)

	require.NoError(t, check(nil), "fresh")
	d = staleFor(30 * time.Second)
	require.NoError(t, check(nil), "stale within the bound")
	d = staleFor(45 * time.Second)
	err := check(nil)
	require.Error(t, err)
	assert.Equal(t, "the informer cache is stale: watch broken for 45s (cache.maxStaleness 30s)", err.Error())
	d = 0 // watching again
	require.NoError(t, check(nil))

	// Bound disabled.
	d = staleFor(time.Hour)
	require.NoError(t, FreshnessChecker(handlers.StalenessGuard{Freshness: &d}, 0, time.Now)(nil))
	require.NoError(t, FreshnessChecker(handlers.StalenessGuard{}, 0, time.Now)(nil))
}

func TestSyncedChecker(t *testing.T) {
	synced := false
	check := SyncedChecker(func() bool { return synced })
	err := check(nil)
	require.Error(t, err)
	assert.Equal(t, "informers have not synced yet", err.Error())
	synced = true
	assert.NoError(t, check(nil))
}
