package placement_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/seedwarden/seedwarden/internal/placement"
)

// Every seed Decide chooses (or ties for) passes CheckSeedForShoot, the
// checks of a manually chosen seed: the binding webhook re-runs them on the
// webhook's own placements (a token no longer skips them), so they must
// never refuse what placement chose. Over the whole conformance corpus.
func TestCheckSeedForShootAcceptsDecide(t *testing.T) {
	checked := 0
	for _, ls := range loadScenarios(t) {
		sc := ls.scenario
		snap := ls.store.Snapshot()
		d := placement.Decide(snap, &sc.Shoot, placement.Options{Strategy: sc.Strategy, NetworkMode: sc.NetworkOverlap})
		if !d.Schedulable() {
			continue
		}
		for _, name := range append([]string{d.Seed}, d.Tied...) {
			var seed *placement.Seed
			for _, s := range snap.Seeds {
				if s.Name == name {
					seed = s
				}
			}
			mode := sc.NetworkOverlap
			if mode == "" {
				mode = placement.Disjoint
			}
			assert.Empty(t, placement.CheckSeedForShoot(snap, seed, &sc.Shoot, mode), "%s: chosen seed %s", sc.Name, name)
			checked++
		}
	}
	assert.Greater(t, checked, 500)
}
