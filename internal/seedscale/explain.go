package seedscale

import (
	"fmt"
	"strings"

	"github.com/seedwarden/seedwarden/internal/placement"
)

// explain names the outcome in one word and says it in a sentence an
// operator can act on.
func (r *recommender) explain(rec *Recommendation, final *outcome) (string, string) {
	head := fmt.Sprintf("set %s: %d -> %d", rec.Set, rec.Current, rec.Desired)
	where := r.where()
	switch {
	case r.in.Set.Failing != "":
		return ReasonBackedOff, fmt.Sprintf("%s: backed off: the ManagedSeedSet's pending replica fails (%s), so its replicas on the way are no room and it is not asked for more%s",
			head, r.in.Set.Failing, r.waiting(final))
	case rec.NotReady.Late > 0:
		return ReasonReplicasNotReady, fmt.Sprintf("%s: %s%s", head, rec.NotReady.String(), r.waiting(final))
	case rec.Short && !r.sim.canGrow():
		return ReasonNoSeedModel, head + ": short, and no new replica can be modelled: " + r.in.Set.ModelSource
	case rec.Short:
		return ReasonAtMaxReplicas, fmt.Sprintf("%s (maxReplicas) and still short: %s", head, r.unmet(final))
	case rec.Desired > rec.Current:
		return ReasonScaleUp, fmt.Sprintf("%s, to keep %s%s%s", head, r.driver(rec.Desired), where, r.pendingNote(final))
	case rec.Desired < rec.Current:
		return ReasonScaleDown, fmt.Sprintf("%s: every target holds with fewer seeds, and only seeds without Shoots go", head)
	}
	if why := r.notHelping(); why != "" {
		return ReasonNewSeedsWouldNotHelp, head + ": " + why
	}
	if rec.Floor == rec.Desired && rec.Floor > r.in.Spec.MinReplicasOrDefault() {
		return ReasonSteady, fmt.Sprintf("%s: every target holds, and no fewer: %d seeds hold Shoots or are protected", head, rec.Floor)
	}
	return ReasonSteady, head + ": every target holds"
}

// where is the model's provider and region, the place new seeds add room.
func (r *recommender) where() string {
	if m := r.in.Set.Model; m != nil {
		return fmt.Sprintf(" (%s %s)", m.Spec.Provider.Type, m.Spec.Provider.Region)
	}
	return ""
}

// driver is what asks for desired replicas: the metric, minReplicas, or
// the seeds that cannot go.
func (r *recommender) driver(desired int32) string {
	for i, res := range r.results {
		if res.Met && res.Replicas == desired {
			return r.metrics[i].kind.driver()
		}
	}
	if desired == r.in.Spec.MinReplicasOrDefault() {
		return "minReplicas"
	}
	return fmt.Sprintf("the %d seeds that hold Shoots or are protected", r.sim.floor())
}

// pendingNote counts the pending Shoots the new replicas would take.
func (r *recommender) pendingNote(final *outcome) string {
	n := newSeedShoots(final, r.in.Snapshot)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d pending %s would go to the new seeds", n, shootsWord(int64(n)))
}

// newSeedShoots counts the pending Shoots an outcome places on seeds it
// adds to snap.
func newSeedShoots(o *outcome, snap *placement.Snapshot) int {
	added := map[string]bool{}
	for _, name := range o.seeds {
		added[name] = true
	}
	for _, s := range snap.Seeds {
		delete(added, s.Name)
	}
	n := 0
	for _, p := range o.report.Placed {
		if added[p.To] {
			n++
		}
	}
	return n
}

// waiting counts the pending Shoots a new replica would take that find no
// seed at this outcome.
func (r *recommender) waiting(final *outcome) string {
	if n := r.stuckCount(final); n > 0 {
		return fmt.Sprintf("; %d pending %s that new seeds would take find no seed", n, shootsWord(int64(n)))
	}
	return ""
}

// unmet says what is short at the maximum: the pending Shoots a new seed
// would take that still find none, then the metrics not met, with their
// values now.
func (r *recommender) unmet(final *outcome) string {
	var parts []string
	if n := r.stuckCount(final); n > 0 {
		parts = append(parts, fmt.Sprintf("%d pending %s that new seeds would take find no seed", n, shootsWord(int64(n))))
	}
	for _, res := range r.results {
		if !res.Met && res.WouldNotHelp == "" {
			parts = append(parts, fmt.Sprintf("%s (now %s)", res.Target, res.Current))
		}
	}
	return strings.Join(parts, "; ")
}

// notHelping says which Headroom metrics new seeds of the set would not
// serve, and why.
func (r *recommender) notHelping() string {
	var parts []string
	for _, res := range r.results {
		if res.WouldNotHelp != "" && !res.Met {
			parts = append(parts, fmt.Sprintf("new seeds of the set would not take Shoots like %s: %s", res.Name, res.WouldNotHelp))
		}
	}
	return strings.Join(parts, "; ")
}
