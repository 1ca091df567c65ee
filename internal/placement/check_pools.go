package placement

import (
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

// RequiredPoolRefusal is Policies.RequiredRefusal for the seed the Shoot
// names (spec.seedName) and the Shoot's project: the binding guard's
// question about a seed set or changed. project is the project's name, ""
// when the snapshot knows none for the Shoot's namespace. ok is false when
// no Required pool refuses, and when the seed is not in the snapshot
// (CheckSeedChange reports that).
func RequiredPoolRefusal(snap *Snapshot, p *Policies, shoot *api.Shoot) (v RequiredViolation, project string, ok bool) {
	seed := snap.seedNamed(ptr.Deref(shoot.Spec.SeedName, ""))
	if seed == nil {
		return RequiredViolation{}, "", false
	}
	var pr *Project
	if snap.Projects != nil {
		pr = snap.Projects[shoot.Namespace]
	}
	if pr != nil {
		project = pr.Name
	}
	v, ok = p.RequiredRefusal(seed, pr)
	return v, project, ok
}
