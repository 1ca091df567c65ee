package placement_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/seedwarden/seedwarden/internal/placement"
)

// Admits keeps an announced seed exactly when Decide could have chosen it:
// every seed Decide ties for admits the Shoot, and no seed admits a Shoot
// Decide finds unschedulable. Over the whole conformance corpus.
func TestAdmitsAgreesWithDecide(t *testing.T) {
	for _, ls := range loadScenarios(t) {
		sc := ls.scenario
		opts := placement.Options{Strategy: sc.Strategy, NetworkMode: sc.NetworkOverlap}
		snap := ls.store.Snapshot()
		d := placement.Decide(snap, &sc.Shoot, opts)
		if !d.Schedulable() {
			for _, s := range snap.Seeds {
				assert.False(t, placement.Admits(snap, &sc.Shoot, opts, s.Name), "%s: %s admits an unschedulable Shoot", sc.Name, s.Name)
			}
			continue
		}
		for _, s := range append([]string{d.Seed}, d.Tied...) {
			assert.True(t, placement.Admits(snap, &sc.Shoot, opts, s), "%s: chosen seed %s does not admit", sc.Name, s)
		}
		assert.False(t, placement.Admits(snap, &sc.Shoot, opts, "no-such-seed"), sc.Name)
	}
}
