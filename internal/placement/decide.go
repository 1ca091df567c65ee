package placement

import "github.com/seedwarden/seedwarden/internal/api"

// Decide places a Shoot: it runs the steps of Gardener's scheduler in order
// and returns the least-used remaining seed (ties broken by name), or an
// unschedulable Decision naming the step that left no seed.
func Decide(snap *Snapshot, shoot *api.Shoot, opts Options) Decision {
	return Decision{Step: StepUsable, Message: "not implemented yet", Total: len(snap.Seeds)}
}
