package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/seedwarden/seedwarden/internal/api"
)

// TestSelfHostedShootNotScheduled: a Shoot with a control-plane worker pool
// is never placed, however many seeds would take it, and the explanation says
// why without blaming any seed.
func TestSelfHostedShootNotScheduled(t *testing.T) {
	snap := snapshotOf(nil, readySeed("a"), readySeed("b"))
	shoot := basicShoot(func(s *api.Shoot) {
		s.Spec.Provider.Workers = append(s.Spec.Provider.Workers, api.Worker{Name: "cp", ControlPlane: &api.WorkerControlPlane{}})
	})
	opts := Options{Strategy: SameRegion}
	const msg = `shoot is self-hosted (worker pool "cp" has controlPlane): its control plane runs in its own cluster, it is not scheduled to a seed`
	for _, p := range []pass{passOrdered, passExplain, passFast, passScan, passIndexed} {
		d := run(snap, shoot, opts, p)
		assert.False(t, d.Schedulable(), "pass %d", p)
		assert.Equal(t, StepSelfHosted, d.Step, "pass %d", p)
		assert.Empty(t, d.Reasons, "pass %d", p)
	}
	d := Decide(snap, shoot, opts)
	assert.Equal(t, msg, d.Message)
	assert.Equal(t, msg, d.Summary())
	assert.False(t, Admits(snap, shoot, opts, "a"))

	assert.Equal(t, "a", Decide(snap, basicShoot(), opts).Seed, "without controlPlane the Shoot is placed")
}
