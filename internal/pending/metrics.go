package pending

import (
	"context"
	"time"
)

// reportLeader sets the retry-controller leader gauge while ctx lives. As
// a plain runnable it needs leader election like the controller, so it
// runs exactly where the controller runs.
func (r *Reconciler) reportLeader(ctx context.Context) error {
	r.Metrics.SetRetryControllerLeader(true)
	<-ctx.Done()
	r.Metrics.SetRetryControllerLeader(false)
	return nil
}

// oldestPendingAge is how long the longest-known pending Shoot has been
// pending here, 0 for none; it runs at every scrape (a linear scan: the
// pending Shoots are few).
func (r *Reconciler) oldestPendingAge() time.Duration {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	var oldest time.Time
	for _, t := range r.since {
		if oldest.IsZero() || t.Before(oldest) {
			oldest = t
		}
	}
	if oldest.IsZero() {
		return 0
	}
	return r.Now().Sub(oldest)
}
