package seedscale

import (
	"time"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/operationsapi"
)

// NoMoveWindow is how long after a drain moved a Shoot no scale-in chooses
// a replica holding it: a new seed, or a set that shrinks again, never
// makes the fleet move a Shoot back and forth (docs/autoscaling.md).
const NoMoveWindow = 24 * time.Hour

// DrainHold is ScaleIn.Hold as drains see Shoots at now: a Shoot opted out
// of drains (operationsapi.AnnotationNoDrain) and one a drain moved within
// window (operationsapi.AnnotationLastDrainMove) are held.
func DrainHold(now time.Time, window time.Duration) func(*api.Shoot) string {
	return func(sh *api.Shoot) string {
		switch {
		case operationsapi.OptedOut(sh.Annotations):
			return "opted out of drains (" + operationsapi.AnnotationNoDrain + ")"
		case operationsapi.MovedWithin(sh.Annotations, now, window):
			return "a drain moved it less than " + window.String() + " ago (" + operationsapi.AnnotationLastDrainMove + ")"
		}
		return ""
	}
}
