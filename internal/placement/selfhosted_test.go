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
	for _, v := range Variants {
		d := v.Run(snap, shoot, opts)
		assert.False(t, d.Schedulable(), v.Name)
		assert.Equal(t, StepSelfHosted, d.Step, v.Name)
		assert.Empty(t, d.Reasons, v.Name)
	}
	d := Decide(snap, shoot, opts)
	assert.Equal(t, msg, d.Message)
	assert.Equal(t, msg, d.Summary())
	assert.False(t, Admits(snap, shoot, opts, "a"))

	assert.Equal(t, "a", Decide(snap, basicShoot(), opts).Seed, "without controlPlane the Shoot is placed")
}
