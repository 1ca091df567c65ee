package seedscale

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/api"
)

var now = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func createdAgo(d time.Duration) func(*api.Seed) {
	return func(s *api.Seed) { s.CreationTimestamp = metav1.NewTime(now.Add(-d)) }
}

// A registered replica that is not ready counts as room for the
// provisioning time (default 30m), then stops counting: the reason says
// so with the set's counts, and the set is not asked for more.
func TestRecommendLateRegisteredReplica(t *testing.T) {
	tests := []struct {
		name       string
		age        time.Duration
		wantReason string
		wantPlaced int
	}{
		{"within the provisioning time: room", 10 * time.Minute, ReasonSteady, 8},
		{"past it: no room", 40 * time.Minute, ReasonReplicasNotReady, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := full(3, 10, 10)
			w.seeds = append(w.seeds, seed("set-new", "eu-west-1", -1, true, notReady, createdAgo(tc.age)))
			w.pending = shoots("new", "eu-west-1", "", 8)
			in := w.input(spec(1, 10, utilization(100)))
			in.Now = now
			rec, err := Recommend(in)
			require.NoError(t, err)
			assert.Equal(t, tc.wantReason, rec.Reason, rec.Message)
			assert.Equal(t, int32(4), rec.Desired, "a set whose replica does not come is not asked for more")
			assert.Equal(t, tc.wantPlaced, rec.PendingPlaced)
			assert.Equal(t, NotReady{Asked: 4, Registered: 4, Ready: 3, Late: int32(min(1, int(tc.age/(30*time.Minute)))), Timeout: metav1.Duration{Duration: 30 * time.Minute}}, rec.NotReady)
		})
	}
}

func TestRecommendLateAskedReplicaMessage(t *testing.T) {
	w := full(3, 10, 10)
	w.replicas = 4
	w.pending = shoots("new", "eu-west-1", "", 6)
	in := w.input(spec(1, 10, utilization(100)))
	in.Now, in.Set.AskedAt = now, now.Add(-31*time.Minute)
	rec, err := Recommend(in)
	require.NoError(t, err)
	assert.Equal(t, ReasonReplicasNotReady, rec.Reason)
	assert.Equal(t, "set garden/set: 4 -> 4: 1 replica not ready after the provisioning time 30m0s (spec.provisioningTimeout; 4 asked, 3 registered, 3 ready): "+
		"they no longer count as room; 6 pending Shoots that new seeds would take find no seed", rec.Message)
	assert.Equal(t, 6, rec.PendingUnplaced)
	assert.Equal(t, int32(1), Late(&in))

	in.Set.AskedAt = now.Add(-29 * time.Minute)
	rec, err = Recommend(in)
	require.NoError(t, err)
	assert.Equal(t, ReasonSteady, rec.Reason, "the asked-for replica still counts")
	assert.Equal(t, int32(0), Late(&in))

	in.Spec.ProvisioningTimeout = &metav1.Duration{Duration: 20 * time.Minute}
	rec, err = Recommend(in)
	require.NoError(t, err)
	assert.Equal(t, ReasonReplicasNotReady, rec.Reason, "spec.provisioningTimeout")

	in.Now = time.Time{}
	rec, err = Recommend(in)
	require.NoError(t, err)
	assert.Equal(t, ReasonSteady, rec.Reason, "no clock: never late")
}

// ForPending is the replicas the pending Shoots need, however many more
// seeds that is: the controller scales to it in one step.
func TestRecommendForPending(t *testing.T) {
	tests := []struct {
		name           string
		pending        int
		metric         int32
		wantForPending int32
		wantDesired    int32
	}{
		{"5 seeds of 10 for 45 pending", 45, 100, 6, 6},
		{"the metric wants more than the pending Shoots", 5, 50, 2, 3},
		{"nothing pending", 0, 100, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := full(1, 10, 10)
			w.pending = shoots("new", "eu-west-1", "", tc.pending)
			rec, err := Recommend(w.input(spec(1, 20, utilization(tc.metric))))
			require.NoError(t, err)
			assert.Equal(t, tc.wantDesired, rec.Desired)
			assert.Equal(t, tc.wantForPending, rec.ForPending)
		})
	}
}

// minReplicas 0 works with every metric type, both ways: a set of no seed
// stays at 0 without demand and goes to 1 with it; an empty seed without
// demand goes.
func TestRecommendMinReplicasZero(t *testing.T) {
	profiles := map[string]*api.Shoot{"small": shoot("small", "eu-west-1", "")}
	for _, m := range []struct {
		name string
		in   func(w *world) Input
	}{
		{"utilization", func(w *world) Input { return w.input(spec(0, 5, utilization(80))) }},
		{"average value", func(w *world) Input { return w.input(spec(0, 5, averageValue(5))) }},
		{"headroom", func(w *world) Input {
			in := w.input(spec(0, 5, headroom("small", 3)))
			in.Profiles = profiles
			return in
		}},
	} {
		t.Run(m.name, func(t *testing.T) {
			// Room outside the set: the Headroom target holds without it.
			room := func() *world {
				return &world{model: seed("model", "eu-west-1", 10, true), seeds: []*api.Seed{seed("other", "eu-west-1", 5, false)}}
			}
			w := room()
			rec, err := Recommend(m.in(w))
			require.NoError(t, err)
			assert.Equal(t, int32(0), rec.Desired, "no seed, no demand: %s", rec.Message)

			w = room()
			w.seeds[0] = seed("other", "eu-west-1", 0, false)
			w.pending = shoots("new", "eu-west-1", "", 4)
			rec, err = Recommend(m.in(w))
			require.NoError(t, err)
			assert.Equal(t, int32(1), rec.Desired, "demand: %s", rec.Message)
			assert.Equal(t, int32(1), rec.ForPending)

			w = room()
			w.seeds = append(w.seeds, seed("set-a", "eu-west-1", 10, true))
			rec, err = Recommend(m.in(w))
			require.NoError(t, err)
			assert.Equal(t, int32(0), rec.Desired, "an empty seed and no demand: back to 0: %s", rec.Message)
		})
	}
}
