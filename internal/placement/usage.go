package placement

import (
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

// ChargedSeeds returns the seeds a Shoot counts against: spec.seedName, and
// status.seedName too when it differs (a migrating Shoot occupies both).
// Either result may be empty. The cache keeps usage from this one rule.
func ChargedSeeds(shoot *api.Shoot) (spec, status string) {
	spec = ptr.Deref(shoot.Spec.SeedName, "")
	status = ptr.Deref(shoot.Status.SeedName, "")
	if status == spec {
		status = ""
	}
	return spec, status
}
