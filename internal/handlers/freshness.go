package handlers

import (
	"fmt"
	"time"
)

// StaleCacheWarningPrefix starts the admission warning of a Shoot the
// mutating webhook admits without a seed because its cache is stale.
const StaleCacheWarningPrefix = "seedwarden: the placement cache is stale"

// Freshness reports how long the informer cache has been stale
// (cache.Freshness); 0 while it is fresh.
type Freshness interface {
	StaleFor(now time.Time) time.Duration
}

// StalenessGuard keeps the webhooks from deciding from a cache whose watch
// has been broken for longer than MaxStaleness. The zero value (no
// Freshness, or MaxStaleness 0) never reports the cache stale.
//
// What each webhook does beyond the bound, and why:
//
//   - the mutating webhook admits the Shoot without a seed and warns: a
//     Shoot without a seed is safe (it waits, and the retry controller or a
//     user places it later), while a seed chosen from outdated capacity or
//     seed state might be wrong. Refusing the CREATE would turn an API
//     server hiccup into failed Shoot creations for no safety gain;
//   - the capacity and binding webhooks deny requests that set or change a
//     seed (fail closed): they guard invariants (a seed's allocatable
//     shoots, that a chosen seed exists and takes the Shoot), and a check
//     against outdated state would not guard them. Requests that set no
//     seed are unaffected.
type StalenessGuard struct {
	Freshness    Freshness
	MaxStaleness time.Duration
}

// StaleBeyond reports how long the cache has been stale when that is longer
// than MaxStaleness.
func (g StalenessGuard) StaleBeyond(now time.Time) (time.Duration, bool) {
	if g.Freshness == nil || g.MaxStaleness <= 0 {
		return 0, false
	}
	d := g.Freshness.StaleFor(now)
	return d, d > g.MaxStaleness
}

// staleDenial is the validators' answer beyond the bound.
func staleDenial(seed string, stale, bound time.Duration) string {
	return fmt.Sprintf("seedwarden: cannot check seed %q: the placement cache is stale (watch broken for %s, longer than cache.maxStaleness %s); retry once the webhook has resynced",
		seed, stale.Round(time.Second), bound)
}
