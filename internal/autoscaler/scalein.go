package autoscaler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/operationsapi"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedscale"
)

// Scale-in by drain (docs/autoscaling.md#scale-in-by-drain): when every
// replica holds Shoots and the targets would hold with one fewer,
// seedscale.ChooseScaleIn names the replica cheapest to empty. Its
// recommendation (one replica fewer) goes through behavior like any other,
// so the scale-down window and policies pace scale-ins; once behavior lets
// it through, the controller drains the replica with a SeedDrain of its
// own and holds spec.replicas until the replica is empty. Then the
// ordinary recommendation lowers the replicas (an empty replica is one
// Gardener may delete), and the SeedDrain keeps the seed cordoned until
// Gardener has deleted it.

// LabelScaleInOwner on a SeedDrain is the UID of the SeedAutoscaler that
// created it for a scale-in. A SeedDrain is cluster-scoped and cannot
// name a namespaced owner in an ownerReference (the garbage collector
// refuses one), so the controller finds, keeps and deletes its own by
// this label; AnnotationScaleInOwner names the SeedAutoscaler for people.
const (
	LabelScaleInOwner      = "autoscaling.seedwarden.io/scale-in-owner-uid"
	AnnotationScaleInOwner = "autoscaling.seedwarden.io/scale-in-owner"
)

// The budget of a scale-in's drain: one migration at a time, at most
// scaleInPerHour an hour, and no replica of more than scaleInMaxShoots
// Shoots (four hours of the hourly budget) is chosen. A scale-in is not
// urgent: it trades a migration's control-plane downtime for a seed's
// cost, so it goes slowly. The deadline stops new migrations after
// scaleInDeadline.
const (
	scaleInPerHour   int32 = 6
	scaleInMaxShoots       = 24
	scaleInDeadline        = 12 * time.Hour
)

// Reasons and event reasons of scale-in phases.
const (
	ReasonDrainingForScaleIn = "DrainingForScaleIn"
	ReasonScaleInWaiting     = "ScaleInWaiting"
	ReasonScaleInRemoving    = "ScaleInRemoving"
	ReasonDryRunScaleIn      = dryRunPrefix + "ScaleIn"
	ReasonScaleInCancelled   = "ScaleInCancelled"
	ReasonFailedScaleInDrain = "FailedScaleInDrain"
	ReasonScaleInDrainStuck  = "ScaleInDrainStuck"
)

// scaleIn is one sync's scale-in: the choice, the SeedDrains the
// SeedAutoscaler owns, and the status it ends in.
type scaleIn struct {
	choice seedscale.ScaleInChoice
	drains []operationsapi.SeedDrain
	// unavailable says why scale-in by drain cannot run (no SeedDrain
	// API), or "".
	unavailable string
	status      *autoscalingapi.ScaleInStatus
}

// planScaleIn lists the SeedAutoscaler's SeedDrains and, when the
// recommendation leaves room for one, chooses the replica to empty.
func (r *Reconciler) planScaleIn(ctx context.Context, sa *autoscalingapi.SeedAutoscaler, e *entry, in seedscale.Input, rec seedscale.Recommendation) (*scaleIn, *syncError) {
	si := &scaleIn{}
	list := &operationsapi.SeedDrainList{}
	err := r.APIReader.List(ctx, list, client.MatchingLabels{LabelScaleInOwner: string(sa.UID)})
	switch {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		si.unavailable = "the SeedDrain API (operations.seedwarden.io) is not installed"
		return si, nil
	case err != nil:
		return nil, apiError(ReasonFailedScaleInDrain, err, "listing the SeedDrains of SeedAutoscaler %s/%s (label %s)", sa.Namespace, sa.Name, LabelScaleInOwner)
	}
	si.drains = list.Items
	avoid := r.avoidStuck(sa, e, si.drains)
	if why := seedscale.ScaleInBlocked(in, rec); why != "" {
		si.choice.Why = why
		return si, nil
	}
	shoots := &api.ShootList{}
	if err := r.APIReader.List(ctx, shoots); err != nil {
		return nil, apiError(ReasonFailedScaleInDrain, err, "listing the Shoots a scale-in of ManagedSeedSet %s would move", in.Set.Name)
	}
	draining := ""
	for _, d := range si.drains {
		if slices.Contains(in.Set.Seeds, d.Spec.SeedName) {
			draining = d.Spec.SeedName
		}
	}
	si.choice, err = seedscale.ChooseScaleIn(in, rec, seedscale.ScaleIn{
		Shoots: ptrs(shoots.Items), Hold: seedscale.DrainHold(r.now(), seedscale.NoMoveWindow),
		MaxShoots: scaleInMaxShoots, Draining: draining, Avoid: avoid,
	})
	if err != nil {
		return nil, &syncError{reason: ReasonFailedComputeReplicas, message: "scale-in: " + err.Error()}
	}
	return si, nil
}

// avoidStuck remembers the replicas whose scale-in drain got stuck
// (Blocked: a Shoot cannot move or its migration failed; or past its
// deadline), warns once for each, and returns those still to be avoided:
// for NoMoveWindow, so that the scale-in does not drain the same replica
// over and over. The stuck SeedDrain is deleted as one no scale-in needs.
func (r *Reconciler) avoidStuck(sa *autoscalingapi.SeedAutoscaler, e *entry, drains []operationsapi.SeedDrain) map[string]string {
	now := r.now()
	if e.stuck == nil {
		e.stuck = map[string]time.Time{}
	}
	for _, d := range drains {
		switch d.Status.Phase {
		case operationsapi.PhaseBlocked, operationsapi.PhaseDeadlineExceeded:
		default:
			continue
		}
		if _, seen := e.stuck[d.Spec.SeedName]; !seen {
			e.stuck[d.Spec.SeedName] = now
			r.Recorder.Eventf(sa, nil, corev1.EventTypeWarning, ReasonScaleInDrainStuck, actionScale,
				"SeedDrain %s of seed %s is %s (%s): the scale-in is called off, and the seed is not chosen again for %s",
				d.Name, d.Spec.SeedName, d.Status.Phase, d.Status.Message, seedscale.NoMoveWindow)
		}
	}
	avoid := map[string]string{}
	for seed, at := range e.stuck {
		if now.Sub(at) >= seedscale.NoMoveWindow {
			delete(e.stuck, seed)
			continue
		}
		avoid[seed] = fmt.Sprintf("its scale-in drain got stuck %s ago", now.Sub(at).Round(time.Second))
	}
	return avoid
}

// recommended is what behavior is asked for: the chosen scale-in's
// replicas, else the recommendation.
func (si *scaleIn) recommended(rec seedscale.Recommendation) int32 {
	if si.choice.Plan != nil {
		return si.choice.Plan.Replicas
	}
	return rec.Desired
}

// carryOut acts on the decision: a scale-in behavior let through drains
// its replica (no SeedDrain in dry-run) and holds spec.replicas; SeedDrains
// no scale-in needs any more are deleted.
func (r *Reconciler) carryOut(ctx context.Context, sa *autoscalingapi.SeedAutoscaler, si *scaleIn, out *outcome, snap *placement.Snapshot, registered int32) *syncError {
	p := si.choice.Plan
	if p != nil {
		si.status = planStatus(p)
		switch {
		case out.decision.Replicas >= out.current:
			si.status.Phase = autoscalingapi.ScaleInWaiting
			si.status.Message = fmt.Sprintf("would drain %s, then %d -> %d replicas; waiting: %s", p.Replica, out.current, p.Replicas,
				cmpOr(out.decision.Limited, "behavior holds the replicas"))
		case out.dryRun:
			si.status.Phase = autoscalingapi.ScaleInDryRun
			si.status.Message = fmt.Sprintf("dry run: would drain %s (%d to move), then %d -> %d replicas; no SeedDrain is created", p.Replica, p.Shoots, out.current, p.Replicas)
		default:
			name, err := r.ensureDrain(ctx, sa, p.Replica)
			if err != nil {
				return apiError(ReasonFailedScaleInDrain, err, "creating SeedDrain %s for the scale-in of seed %s", name, p.Replica)
			}
			si.status.Phase, si.status.SeedDrain = autoscalingapi.ScaleInDraining, name
			si.status.Message = fmt.Sprintf("draining %s with SeedDrain %s (%d to move); spec.replicas stays %d until it is empty, then %d", p.Replica, name, p.Shoots, out.current, p.Replicas)
		}
		if out.decision.Replicas < out.current {
			// The replica still holds Shoots: Gardener could delete no
			// replica for the lower count.
			out.decision = seedscale.Decision{Replicas: out.current, Limited: "scale-in: seed " + p.Replica + " is being emptied first"}
		}
	}
	return r.pruneDrains(ctx, sa, si, out, snap, registered)
}

// pruneDrains deletes the SeedAutoscaler's SeedDrains no scale-in needs:
// kept are the one draining the chosen replica and one whose seed is
// empty while the replicas go down past it (lowered now, or lowered and
// the seed not yet deleted), so that no Shoot lands on it meanwhile.
func (r *Reconciler) pruneDrains(ctx context.Context, sa *autoscalingapi.SeedAutoscaler, si *scaleIn, out *outcome, snap *placement.Snapshot, registered int32) *syncError {
	p := si.choice.Plan
	for i := range si.drains {
		d := &si.drains[i]
		seed := findSeed(snap, d.Spec.SeedName)
		var used int64
		if seed != nil && snap.Usage != nil {
			used = snap.Usage(seed)
		}
		removing := seed != nil && used == 0 && (out.rec.Desired < out.current || out.decision.Replicas < out.current || registered > out.current)
		switch {
		case p != nil && d.Spec.SeedName == p.Replica && !out.dryRun:
			continue
		case removing || seed != nil && seed.Object.DeletionTimestamp != nil:
			si.status = &autoscalingapi.ScaleInStatus{Phase: autoscalingapi.ScaleInRemoving, Replica: d.Spec.SeedName, Replicas: min(out.decision.Replicas, out.current), SeedDrain: d.Name,
				Message: fmt.Sprintf("seed %s is empty; SeedDrain %s keeps it cordoned until Gardener has deleted it", d.Spec.SeedName, d.Name)}
			continue
		}
		if err := r.Client.Delete(ctx, d); err != nil && !apierrors.IsNotFound(err) {
			return apiError(ReasonFailedScaleInDrain, err, "deleting SeedDrain %s", d.Name)
		}
		if seed != nil {
			r.Recorder.Eventf(sa, nil, corev1.EventTypeNormal, ReasonScaleInCancelled, actionScale,
				"SeedDrain %s of seed %s deleted: %s", d.Name, d.Spec.SeedName, cmpOr(si.choice.Why, "another replica is chosen"))
		}
	}
	return nil
}

// ensureDrain creates the SeedDrain of seed unless it exists, and returns
// its name.
func (r *Reconciler) ensureDrain(ctx context.Context, sa *autoscalingapi.SeedAutoscaler, seed string) (string, error) {
	name := drainName(seed)
	d := &operationsapi.SeedDrain{
		TypeMeta: metav1.TypeMeta{APIVersion: operationsapi.SchemeGroupVersion.String(), Kind: operationsapi.KindSeedDrain},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      map[string]string{LabelScaleInOwner: string(sa.UID)},
			Annotations: map[string]string{AnnotationScaleInOwner: sa.Namespace + "/" + sa.Name},
		},
		Spec: operationsapi.SeedDrainSpec{
			SeedName: seed,
			Budget:   operationsapi.Budget{MaxInFlight: ptr.To[int32](1), MaxPerHour: ptr.To(scaleInPerHour)},
			Deadline: &metav1.Time{Time: r.now().Add(scaleInDeadline).UTC().Truncate(time.Second)},
		},
	}
	err := r.Client.Create(ctx, d)
	switch {
	case err == nil:
		r.Recorder.Eventf(sa, nil, corev1.EventTypeNormal, ReasonDrainingForScaleIn, actionScale,
			"SeedDrain %s created: seed %s is emptied for a scale-in", name, seed)
		return name, nil
	case apierrors.IsAlreadyExists(err):
		existing := &operationsapi.SeedDrain{}
		if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, existing); err != nil {
			return name, err
		}
		if existing.Labels[LabelScaleInOwner] != string(sa.UID) {
			return name, fmt.Errorf("SeedDrain %s exists and is not this SeedAutoscaler's (label %s)", name, LabelScaleInOwner)
		}
		return name, nil
	}
	return name, err
}

// noScaleInListed is how many refused replicas the status names (plan
// --autoscale lists them all).
const noScaleInListed = 5

// whyNoScaleIn says, when replicas were tried for a scale-in and none
// can be emptied, why each was refused (an operator otherwise sees only
// that every seed holds Shoots); "" when a replica was chosen or none was
// tried (the set is not one to scale in).
func whyNoScaleIn(c seedscale.ScaleInChoice) string {
	if c.Plan != nil || len(c.Candidates) == 0 {
		return ""
	}
	why := make([]string, 0, min(len(c.Candidates), noScaleInListed)+1)
	for _, cand := range c.Candidates[:min(len(c.Candidates), noScaleInListed)] {
		why = append(why, cand.Replica+": "+cand.Blocked)
	}
	if more := len(c.Candidates) - noScaleInListed; more > 0 {
		why = append(why, fmt.Sprintf("and %d more replicas", more))
	}
	return "no scale-in by drain: " + strings.Join(why, "; ")
}

// drainName is the SeedDrain of a scale-in of seed: one per seed, so two
// syncs never drain one seed twice.
func drainName(seed string) string { return "scale-in-" + seed }

func findSeed(snap *placement.Snapshot, name string) *placement.Seed {
	for _, s := range snap.Seeds {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// planStatus is the status of a chosen scale-in, its moves listed up to
// MaxScaleInMoves.
func planStatus(p *seedscale.ScaleInPlan) *autoscalingapi.ScaleInStatus {
	st := &autoscalingapi.ScaleInStatus{Replica: p.Replica, Replicas: p.Replicas, Shoots: int32(p.Shoots)}
	for _, m := range p.Moves[:min(len(p.Moves), autoscalingapi.MaxScaleInMoves)] {
		st.Moves = append(st.Moves, autoscalingapi.ScaleInMove{Shoot: m.Shoot, To: m.To})
	}
	return st
}

// scaleInReason is the status reason of a scale-in phase.
func scaleInReason(phase autoscalingapi.ScaleInPhase) string {
	switch phase {
	case autoscalingapi.ScaleInDraining:
		return ReasonDrainingForScaleIn
	case autoscalingapi.ScaleInWaiting:
		return ReasonScaleInWaiting
	case autoscalingapi.ScaleInRemoving:
		return ReasonScaleInRemoving
	}
	return ReasonDryRunScaleIn
}

func ptrs(items []api.Shoot) []*api.Shoot {
	out := make([]*api.Shoot, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

func cmpOr(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
