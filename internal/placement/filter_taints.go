package placement

import (
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

// taintsTolerated is the taint check of step 10 and mirrors Gardener's
// TaintsAreTolerated, including its quirks: more taints than tolerations
// fails outright, and for a repeated toleration key the last value wins.
func taintsTolerated(taints []api.SeedTaint, tolerations []api.Toleration) bool {
	if len(taints) == 0 {
		return true
	}
	if len(taints) > len(tolerations) {
		return false
	}
	for _, t := range taints {
		found := false
		value := ""
		for _, tol := range tolerations {
			if tol.Key == t.Key {
				found = true
				value = ptr.Deref(tol.Value, "")
			}
		}
		if !found {
			return false
		}
		if t.Value != nil && *t.Value != value {
			return false
		}
	}
	return true
}
