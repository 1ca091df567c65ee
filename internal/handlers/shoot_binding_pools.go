package handlers

import (
	"fmt"

	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// requiredPoolProblem says how the seed a request chooses breaks a Required
// seed pool (docs/policies.md), naming the field, the seed, the pool and the
// project; "" when it breaks none. Decide applies the same rule
// (placement.StepPools), so the webhook's own placement passes unless the
// pools, a Seed's labels or the Project's changed since it was placed.
func requiredPoolProblem(snap *placement.Snapshot, pools *placement.Policies, shoot *api.Shoot) string {
	v, project, ok := placement.RequiredPoolRefusal(snap, pools, shoot)
	if !ok {
		return ""
	}
	seed := ptr.Deref(shoot.Spec.SeedName, "")
	who := fmt.Sprintf("project %q", project)
	if project == "" {
		who = fmt.Sprintf("namespace %q (no project)", shoot.Namespace)
	}
	if v.SeedInPool {
		return fmt.Sprintf("spec.seedName: seed %q is in seed pool %q (mode %s), which takes only the Shoots of its projects, and %s is not one of them",
			seed, v.Pool, placement.PoolRequired, who)
	}
	return fmt.Sprintf("spec.seedName: %s is in seed pool %q (mode %s), whose Shoots go only to its seeds, and seed %q is not one of them",
		who, v.Pool, placement.PoolRequired, seed)
}
