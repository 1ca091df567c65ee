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
// pending here, 0 for none; it runs at every scrape (a linear scan, under
// the lock: thousands of pending Shoots cost microseconds).
func (r *Reconciler) oldestPendingAge() time.Duration {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	var oldest time.Time
	for _, st := range r.pending {
		if oldest.IsZero() || st.since.Before(oldest) {
			oldest = st.since
		}
	}
	if oldest.IsZero() {
		return 0
	}
	return r.Now().Sub(oldest)
}

// longestBackoff is the longest backoff step a pending Shoot is at (0 when
// none has failed an attempt); it runs at every scrape.
func (r *Reconciler) longestBackoff() time.Duration {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	var longest time.Duration
	for _, st := range r.pending {
		longest = max(longest, st.wait)
	}
	return longest
}
