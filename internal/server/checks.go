package server

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// SyncedChecker fails until synced reports the informers synced.
func SyncedChecker(synced func() bool) healthz.Checker {
	return func(*http.Request) error {
		if !synced() {
			return errors.New("informers have not synced yet")
		}
		return nil
	}
}

// StalenessBound reports whether the cache has been stale for longer than
// its bound, and for how long (handlers.StalenessGuard).
type StalenessBound interface {
	StaleBeyond(now time.Time) (time.Duration, bool)
}

// FreshnessChecker fails while the cache has been stale for longer than the
// bound (cache.maxStaleness, named in the message as maxStaleness), so that
// the Service sends requests to replicas whose watch works; it passes again
// once every informer watches again.
func FreshnessChecker(b StalenessBound, maxStaleness time.Duration, now func() time.Time) healthz.Checker {
	return func(*http.Request) error {
		if d, stale := b.StaleBeyond(now()); stale {
			return fmt.Errorf("the informer cache is stale: watch broken for %s (cache.maxStaleness %s)", d.Round(time.Second), maxStaleness)
		}
		return nil
	}
}
