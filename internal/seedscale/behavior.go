package seedscale

import (
	"time"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
)

// Sample is a number of replicas at a time.
type Sample struct {
	At       time.Time
	Replicas int32
}

// History is what behavior needs to remember of one SeedAutoscaler:
// recent recommendations (for the stabilization windows) and recent
// changes of the replicas (for the policies' periods). The controller
// keeps it in memory.
type History struct {
	Recommendations []Sample
	// Scales are the replicas before and after each change the controller
	// made, at the time it made it.
	Scales []Scale
}

// Scale is one change of the replicas.
type Scale struct {
	At       time.Time
	From, To int32
}

// Decision is the replicas to set after behavior, with what bounded them.
type Decision struct {
	Replicas int32
	// Limited says what held the replicas back from the recommendation
	// ("", or e.g. "scale-down stabilization window of 30m0s").
	Limited string
}

// Behave applies b (nil: the defaults) to a recommendation: it records
// it in h, then bounds the change from current by the stabilization
// window and the policies of its direction.
func Behave(b *autoscalingapi.Behavior, h *History, current, recommended int32, now time.Time) Decision {
	return Decision{Replicas: current, Limited: "not implemented"}
}
