package pending

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// The attempts the backoff schedules step it; each runs when the last one's
// wait has passed.
func TestBackoff(t *testing.T) {
	f := newFixture(t, BindThroughSubresource, fullShoot("s1", nil))
	var got []time.Duration
	for range 12 {
		wait := f.reconcile(t, "s1").RequeueAfter
		got = append(got, wait)
		f.advance(wait)
	}
	s, m := time.Second, time.Minute
	assert.Equal(t, []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, 64 * s, 128 * s, 256 * s, 5 * m, 5 * m, 5 * m}, got)

	// Success resets it.
	f.store.decide = func(*api.Shoot) placement.Decision { return scheduled }
	assert.Zero(t, f.reconcile(t, "s1").RequeueAfter)
	f.store.decide = func(*api.Shoot) placement.Decision { return unschedulable }
	assert.Equal(t, s, f.reconcile(t, "s1").RequeueAfter)

	// Configurable base and cap; per Shoot.
	f = newFixture(t, BindThroughSubresource, fullShoot("s1", nil), fullShoot("s2", nil))
	f.r.Config.BackoffBase, f.r.Config.BackoffMax = 100*time.Millisecond, 350*time.Millisecond
	got = nil
	for range 4 {
		wait := f.reconcile(t, "s1").RequeueAfter
		got = append(got, wait)
		f.advance(wait)
	}
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 350 * time.Millisecond, 350 * time.Millisecond}, got)
	assert.Equal(t, 100*time.Millisecond, f.reconcile(t, "s2").RequeueAfter, "other Shoots have their own backoff")
}

// Attempts that events trigger before the backoff's own attempt is due are
// no failures: 20 of them leave a Shoot at its first step, and keep the
// attempt the backoff scheduled where it was. Then the backoff's attempt
// steps it.
func TestEventTriggeredAttemptsDoNotStepTheBackoff(t *testing.T) {
	f := newFixture(t, BindThroughSubresource, fullShoot("s1", nil))
	f.r.Config.BackoffBase = 30 * time.Second
	assert.Equal(t, 30*time.Second, f.reconcile(t, "s1").RequeueAfter, "the first attempt fails")
	for i := range 20 {
		f.advance(time.Second)
		assert.Equal(t, time.Duration(29-i)*time.Second, f.reconcile(t, "s1").RequeueAfter,
			"event %d: the backoff's attempt stays due where it was", i+1)
	}
	wait, tracked := f.r.Backoff(keyOf("s1"))
	require.True(t, tracked)
	assert.Equal(t, 30*time.Second, wait, "still at the first step")
	assert.Equal(t, 30.0, gathered(f.reg, metrics.PendingLongestBackoffName, ""))
	assert.Equal(t, 21.0, f.retries(metrics.ResultUnschedulable), "every attempt is counted as one")

	f.advance(10 * time.Second)
	assert.Equal(t, time.Minute, f.reconcile(t, "s1").RequeueAfter, "the backoff's own attempt is a failure")
	assert.Equal(t, 60.0, gathered(f.reg, metrics.PendingLongestBackoffName, ""))

	// A failed bind is a failure even before the attempt is due.
	f.store.decide = func(*api.Shoot) placement.Decision { return scheduled }
	f.writes.fail = func(write) error { return errors.New("connection refused") }
	f.advance(time.Second)
	assert.Equal(t, 2*time.Minute, f.reconcile(t, "s1").RequeueAfter)

	// Bound: forgotten, and the gauge with it.
	f.writes.fail = nil
	assert.Zero(t, f.reconcile(t, "s1"))
	assert.Zero(t, gathered(f.reg, metrics.PendingLongestBackoffName, ""))
}

// An attempt that a seed's wake queued and that binds the Shoot elsewhere,
// or finds it no longer pending, leaves that seed's room to another pending
// Shoot: the seed is woken again.
func TestBoundElsewhereWakesTheSeedAgain(t *testing.T) {
	f := newFixture(t, BindThroughSubresource, fullShoot("s1", nil), fullShoot("s2", nil))
	f.store.decide = func(*api.Shoot) placement.Decision { return scheduled } // aws-eu1
	for _, name := range []string{"s1", "s2"} {
		f.r.track(keyOf(name))
	}
	require.True(t, f.r.markWoken(keyOf("s1"), "aws-eu2"))
	require.True(t, f.r.markWoken(keyOf("s2"), "aws-eu1"))
	assert.Zero(t, f.reconcile(t, "s1"))
	assert.Zero(t, f.reconcile(t, "s2"))
	require.Len(t, f.r.rewakes, 1, "only the Shoot bound elsewhere passes its wake on")
	assert.Equal(t, "aws-eu2", (<-f.r.rewakes).Object.GetName())

	// A wake that came while an attempt was binding the Shoot: that attempt
	// took no room of the seed woken, the next finds the Shoot bound.
	f.r.track(keyOf("s3"))
	require.True(t, f.r.markWoken(keyOf("s3"), "aws-eu3"))
	withSeed := fullShoot("s3", nil)
	require.NoError(t, unstructured.SetNestedField(withSeed.Object, "aws-eu1", "spec", "seedName"))
	f.reader.objs[keyOf("s3")] = withSeed
	assert.Zero(t, f.reconcile(t, "s3"))
	require.Len(t, f.r.rewakes, 1)
	assert.Equal(t, "aws-eu3", (<-f.r.rewakes).Object.GetName())
}

// A wake's mark lasts as long as the attempt: through a conflict's quick
// retry (other wakes leave the Shoot to it), until it ends without a place,
// which passes nothing on.
func TestWakeMarkLastsTheAttempt(t *testing.T) {
	f := newFixture(t, BindThroughSubresource, fullShoot("s1", nil))
	f.r.track(keyOf("s1"))
	require.True(t, f.r.markWoken(keyOf("s1"), "aws-eu2"))
	f.store.decide = func(*api.Shoot) placement.Decision { return scheduled }
	f.writes.fail = func(write) error {
		return apierrors.NewConflict(schema.GroupResource{Group: api.GroupName, Resource: "shoots"}, "s1", errors.New("the object has been modified"))
	}
	assert.Equal(t, 50*time.Millisecond, f.reconcile(t, "s1").RequeueAfter)
	assert.Equal(t, "aws-eu2", f.r.wokenFor(keyOf("s1")), "still under way")
	assert.False(t, f.r.markWoken(keyOf("s1"), "aws-eu3"), "another wake leaves it to this one")

	f.store.decide = func(*api.Shoot) placement.Decision { return unschedulable }
	assert.Equal(t, time.Second, f.reconcile(t, "s1").RequeueAfter)
	assert.Empty(t, f.r.wokenFor(keyOf("s1")), "ended without a place")
	assert.Empty(t, f.r.rewakes, "and passed nothing on")
	assert.True(t, f.r.markWoken(keyOf("s1"), "aws-eu3"), "free for the next wake")
}
