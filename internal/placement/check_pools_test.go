package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

// RequiredPoolRefusal, the binding guard's question, refuses exactly the
// seeds Decide's StepPools removes for the Shoot's project, with the same
// pool; a seed the snapshot does not have, and no policies, refuse nothing.
func TestRequiredPoolRefusalAgreesWithDecide(t *testing.T) {
	pol := testPolicies(t,
		testPool{name: "acme", mode: PoolRequired, projects: []string{"acme"}, seedLabel: "pool=acme"},
		testPool{name: "prod", mode: PoolRequired, projectLabel: "tier=prod", seedLabel: "tier=prod"},
		testPool{name: "soft", mode: PoolPreferred, projects: []string{"other"}, seedLabel: "pool=acme"})
	seeds := []*api.Seed{readySeed("a"), readySeed("b", poolLabel("acme")), readySeed("c", withLabels(map[string]string{"tier": "prod"}))}
	for _, project := range []*Project{{Name: "acme"}, {Name: "other"}, {Name: "shop", Labels: map[string]string{"tier": "prod"}}, nil} {
		snap := snapshotOf(nil, seeds...)
		if project != nil {
			// nil: Projects not tracked, so the Shoot belongs to no pool.
			snap.Projects = map[string]*Project{"garden-proj": project}
		}
		shoot := basicShoot()
		for _, s := range snap.Seeds {
			// Decide on this seed alone: StepPools fails it or not.
			alone := *snap
			alone.Seeds = []*Seed{s}
			d := Decide(&alone, shoot, Options{Strategy: SameRegion, Policies: pol})
			named := shoot.DeepCopy()
			named.Spec.SeedName = ptr.To(s.Name)
			v, name, refused := RequiredPoolRefusal(snap, pol, named)
			assert.Equal(t, d.Step == StepPools, refused, "project %v, seed %s: %s", project, s.Name, d.Message)
			if refused {
				assert.Equal(t, d.Codes[s.Name], v.Code())
				assert.Equal(t, d.Reasons[s.Name], v.String())
			}
			if project != nil {
				assert.Equal(t, project.Name, name)
			}
			_, _, refused = RequiredPoolRefusal(snap, nil, named)
			assert.False(t, refused, "no policies")
		}
		named := shoot.DeepCopy()
		named.Spec.SeedName = ptr.To("no-such-seed")
		_, _, refused := RequiredPoolRefusal(snap, pol, named)
		assert.False(t, refused, "a seed the snapshot does not have is CheckSeedChange's to report")
	}
}
