package autoscaler

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"time"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedscale"
)

// ReasonSyncBudgetExceeded is a sync stopped at its budget
// (autoscaler.syncBudget) before it decided anything.
const ReasonSyncBudgetExceeded = "SyncBudgetExceeded"

// inputs are what a recommendation reads, compared between syncs: equal
// inputs give an equal recommendation, so it is not computed again. The
// Shoots' per-project counts (the ProjectSpread scorer's) are left out:
// they change with a seed's usage except when Shoots of two projects trade
// places on one seed within a sync period, and the next change of usage
// recomputes.
type inputs struct {
	// generation is the SeedAutoscaler's spec (the entry is per UID).
	generation int64
	// set is the ManagedSeedSet as read (its resourceVersion: spec and
	// status), replicas its scale subresource's spec.replicas.
	set      string
	replicas int32
	// protected are the replicas protected from deletion, sorted.
	protected string
	// snapshot is the landscape the Store published (a new one on every
	// change of a Seed, CloudProfile, Project or region config).
	snapshot *placement.Snapshot
	// usage and pending hash every seed's usage (Shoots and reservations)
	// and the pending Shoots (UID and resourceVersion, in order).
	usage, pending uint64
	// late counts the replicas past the provisioning time: time alone
	// changes it.
	late int32
}

func inputsOf(sa *autoscalingapi.SeedAutoscaler, t *target, set seedscale.Set, snap *placement.Snapshot, pending []*api.Shoot) inputs {
	in := inputs{generation: sa.Generation, set: t.set.ResourceVersion, replicas: t.scale.Spec.Replicas, snapshot: snap}
	protected := make([]string, 0, len(set.Protected))
	for name, ok := range set.Protected {
		if ok {
			protected = append(protected, name)
		}
	}
	slices.Sort(protected)
	in.protected = fmt.Sprint(protected)
	h := fnv.New64a()
	for _, s := range snap.Seeds {
		var u int64
		if snap.Usage != nil {
			u = snap.Usage(s)
		}
		h.Write([]byte(s.Name))
		h.Write([]byte{0})
		h.Write(strconv.AppendInt(nil, u, 10))
		h.Write([]byte{0})
	}
	in.usage = h.Sum64()
	h.Reset()
	for _, s := range pending {
		h.Write([]byte(s.UID))
		h.Write([]byte{0})
		h.Write([]byte(s.ResourceVersion))
		h.Write([]byte{0})
	}
	in.pending = h.Sum64()
	return in
}

// computed is the last recommendation and the inputs it was computed
// from; err is set when it failed (a budget spent included), so that a
// spec that cannot be computed is not tried again until something changes.
type computed struct {
	inputs inputs
	rec    seedscale.Recommendation
	err    *syncError
}

// recommend is the recommendation for in, computed afresh only when the
// inputs differ from the last sync's; the second result says it was
// reused. Behavior is applied to it afterwards, every sync, so a window
// that ends takes effect with no recomputation. A recommendation stopped
// at the budget is remembered for its inputs only when it had most of the
// budget (fair: at least half): one that slow reads left little time is
// tried again at the next sync.
func (r *Reconciler) recommend(e *entry, sa *autoscalingapi.SeedAutoscaler, in seedscale.Input, fp inputs, stop func() error, fair bool) (seedscale.Recommendation, *syncError, bool) {
	if c := e.computed; c != nil && c.inputs == fp {
		return c.rec, c.err, true
	}
	in.Stop = stop
	rec, err := seedscale.Recommend(in)
	c := &computed{inputs: fp, rec: rec}
	var stopped *seedscale.StoppedError
	switch {
	case errors.As(err, &stopped):
		c.err = &syncError{reason: ReasonSyncBudgetExceeded, message: fmt.Sprintf(
			"the recommendation for ManagedSeedSet %s/%s %s (autoscaler.syncBudget %s): spec.replicas is left as it is; "+
				"fewer spec.metrics, fewer inline Shoots or a lower minShoots make a sync cheaper",
			sa.Namespace, sa.Spec.ScaleTargetRef.Name, stopped.Error(), r.SyncBudget)}
		if !fair {
			e.computed = nil
			return c.rec, c.err, false
		}
	case err != nil:
		c.err = &syncError{reason: ReasonFailedComputeReplicas, message: err.Error()}
	}
	e.computed = c
	return c.rec, c.err, false
}

// errBudgetSpent is what stopAt answers once the budget is spent.
var errBudgetSpent = errors.New("its budget is spent")

// stopAt stops a recommendation once ctx ends or r's clock passes
// deadline: r.Now, so that a test steps it.
func (r *Reconciler) stopAt(ctx context.Context, deadline time.Time) func() error {
	return func() error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w: %w", errBudgetSpent, err)
		}
		if r.now().After(deadline) {
			return errBudgetSpent
		}
		return nil
	}
}

// seedscaleInput is what seedscale reads for one SeedAutoscaler.
func (r *Reconciler) seedscaleInput(sa *autoscalingapi.SeedAutoscaler, set seedscale.Set, snap *placement.Snapshot, pending []*api.Shoot) seedscale.Input {
	return seedscale.Input{Snapshot: snap, Options: r.Options, Set: set, Spec: &sa.Spec, Profiles: r.Profiles,
		DecodeShoot: landscape.DecodeShoot, Pending: pending, Now: r.now()}
}

// askedAt is when the replicas above the registered ones were asked for:
// this term's last scale-up, else the status's lastScaleTime (a scale of
// an earlier leader); zero when neither is known, and then they count as
// room however long they take.
func askedAt(sa *autoscalingapi.SeedAutoscaler, e *entry) time.Time {
	for i := len(e.history.Scales) - 1; i >= 0; i-- {
		if sc := e.history.Scales[i]; sc.To > sc.From {
			return sc.At
		}
	}
	if t := sa.Status.LastScaleTime; t != nil {
		return t.Time
	}
	return time.Time{}
}
