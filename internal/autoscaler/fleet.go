package autoscaler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedscale"
)

// One decision across all sets: with more than one SeedAutoscaler in the
// garden, the first sync of a period reads every SeedAutoscaler's set and
// decides them together (seedscale.DecideFleet); each SeedAutoscaler's
// sync in that period takes its part of that decision, applies its own
// behavior and writes its own replicas and status. A garden of one
// SeedAutoscaler is decided as before, alone, with its reuse.

// fleetKey is what a SeedAutoscaler's part of a fleet decision was
// decided from, of its own: a change makes its sync decide the fleet
// anew. The landscape is not in it: the decision holds for a sync period.
type fleetKey struct {
	generation int64
	replicas   int32
	late       int32
	failing    string
}

// fleetDecision is the last decision across all sets.
type fleetDecision struct {
	at      time.Time
	keys    map[types.NamespacedName]fleetKey
	entries map[types.NamespacedName]seedscale.FleetEntry
}

func keyOf(sa *autoscalingapi.SeedAutoscaler, in *seedscale.Input) fleetKey {
	return fleetKey{generation: sa.Generation, replicas: in.Set.Replicas, late: seedscale.Late(in), failing: in.Set.Failing}
}

// fleetRecommend is the recommendation for sa: its part of the decision
// across all sets when the garden has more SeedAutoscalers, else r.recommend.
// The second result says it was reused.
func (r *Reconciler) fleetRecommend(ctx context.Context, sa *autoscalingapi.SeedAutoscaler, e *entry, in seedscale.Input, fp inputs, stop func() error, fair bool) (seedscale.Recommendation, *syncError, bool) {
	var list autoscalingapi.SeedAutoscalerList
	if err := r.Client.List(ctx, &list); err != nil {
		return seedscale.Recommendation{}, apiError(ReasonFailedComputeReplicas, err, "listing the SeedAutoscalers of the garden"), false
	}
	others := make([]*autoscalingapi.SeedAutoscaler, 0, len(list.Items))
	for i := range list.Items {
		o := &list.Items[i]
		if o.UID != sa.UID && o.DeletionTimestamp == nil {
			others = append(others, o)
		}
	}
	if len(others) == 0 {
		return r.recommend(e, sa, in, fp, stop, fair)
	}
	key := types.NamespacedName{Namespace: sa.Namespace, Name: sa.Name}
	r.mu.Lock()
	last := r.fleet
	r.mu.Unlock()
	if last != nil && r.now().Sub(last.at) < r.SyncPeriod && last.keys[key] == keyOf(sa, &in) {
		if fe, ok := last.entries[key]; ok {
			rec, serr := fleetResult(sa, fe, r.SyncBudget)
			return rec, serr, true
		}
	}
	d := r.decideFleet(ctx, sa, in, others)
	r.mu.Lock()
	r.fleet = d
	r.mu.Unlock()
	rec, serr := fleetResult(sa, d.entries[key], r.SyncBudget)
	return rec, serr, false
}

// decideFleet reads every other SeedAutoscaler's set and decides all
// together. A SeedAutoscaler whose set cannot be read, or that an older
// one shares its set with, is left out: its own sync reports why.
func (r *Reconciler) decideFleet(ctx context.Context, sa *autoscalingapi.SeedAutoscaler, in seedscale.Input, others []*autoscalingapi.SeedAutoscaler) *fleetDecision {
	now := r.now()
	// One SyncBudget per set, within half the sync's timeout.
	span := min(r.SyncBudget*time.Duration(len(others)+1), syncTimeout/2)
	deadline := now.Add(span)
	budget, cancel := context.WithTimeout(ctx, span)
	defer cancel()
	stop := r.stopAt(budget, deadline)
	d := &fleetDecision{at: now, keys: map[types.NamespacedName]fleetKey{}, entries: map[types.NamespacedName]seedscale.FleetEntry{}}
	in.Stop = stop
	sets := []seedscale.FleetSet{{Autoscaler: sa.Namespace + "/" + sa.Name, Priority: sa.Spec.Priority, DryRun: r.DryRun || sa.Spec.DryRun, Input: in}}
	keys := []types.NamespacedName{{Namespace: sa.Namespace, Name: sa.Name}}
	d.keys[keys[0]] = keyOf(sa, &in)
	for _, o := range others {
		oin, ok := r.fleetInput(budget, o, in.Snapshot, in.Pending)
		if !ok {
			continue
		}
		oin.Stop = stop
		k := types.NamespacedName{Namespace: o.Namespace, Name: o.Name}
		sets = append(sets, seedscale.FleetSet{Autoscaler: k.String(), Priority: o.Spec.Priority, DryRun: r.DryRun || o.Spec.DryRun, Input: oin})
		keys = append(keys, k)
		d.keys[k] = keyOf(o, &oin)
	}
	for i, fe := range seedscale.DecideFleet(sets) {
		d.entries[keys[i]] = fe
	}
	return d
}

// fleetInput is another SeedAutoscaler's input, read as its own sync
// would; false when it would not act.
func (r *Reconciler) fleetInput(ctx context.Context, o *autoscalingapi.SeedAutoscaler, snap *placement.Snapshot, pending []*api.Shoot) (seedscale.Input, bool) {
	if r.firstForItsSet(ctx, o) != nil {
		return seedscale.Input{}, false
	}
	t, serr := r.readTarget(ctx, o)
	if serr != nil {
		return seedscale.Input{}, false
	}
	set, serr := r.buildSet(ctx, t, snap)
	if serr != nil {
		return seedscale.Input{}, false
	}
	set.AskedAt = askedAt(o, r.entry(types.NamespacedName{Namespace: o.Namespace, Name: o.Name}, o.UID))
	return r.seedscaleInput(o, set, snap, pending), true
}

// fleetResult is a SeedAutoscaler's part of a fleet decision as the sync
// reports it; a set missing from the decision was stopped before it.
func fleetResult(sa *autoscalingapi.SeedAutoscaler, fe seedscale.FleetEntry, budget time.Duration) (seedscale.Recommendation, *syncError) {
	var stopped *seedscale.StoppedError
	switch {
	case fe.Autoscaler == "":
		return seedscale.Recommendation{}, &syncError{reason: ReasonFailedComputeReplicas, message: "the decision across all sets left this SeedAutoscaler out"}
	case errors.As(fe.Err, &stopped):
		return seedscale.Recommendation{}, &syncError{reason: ReasonSyncBudgetExceeded, message: fmt.Sprintf(
			"the decision across all sets, for ManagedSeedSet %s/%s, %s (autoscaler.syncBudget %s per SeedAutoscaler): spec.replicas is left as it is",
			sa.Namespace, sa.Spec.ScaleTargetRef.Name, stopped.Error(), budget)}
	case fe.Err != nil:
		return seedscale.Recommendation{}, &syncError{reason: ReasonFailedComputeReplicas, message: fe.Err.Error()}
	}
	return fe.Recommendation, nil
}
