package pending

// Binding a Shoot to the seed chosen for it, and what follows.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/metrics"
)

// bindSeed binds the Shoot to seed (kept: the announced seed) and reports
// the outcome, with the decision's score breakdown (scores, "" without a
// profile); a failed binding gives the reservation back and is retried:
// after a conflict or a refusal of the cluster-wide reservations on the
// short conflict backoff, otherwise on the backoff.
func (r *Reconciler) bindSeed(ctx context.Context, log logr.Logger, key types.NamespacedName, shoot *api.Shoot, seed, scores string, kept bool) reconcile.Result {
	// Read before binding: the bound Shoot's watch event forgets the backoff.
	attempts := r.backoff.NumRequeues(key) + 1
	err := r.reserveAcrossReplicas(ctx, shoot, seed)
	written := err == nil
	if written {
		err = r.bind(ctx, shoot, seed)
	}
	if err == nil {
		r.Metrics.ObserveRetry(metrics.ResultScheduled)
		r.forget(key)
		r.Recorder.Eventf(shoot, nil, corev1.EventTypeNormal, ReasonSchedulingSuccessful, ActionSchedule, "%s", scheduledMessage(seed, scores))
		log.Info("Scheduled pending Shoot", "seed", seed, "announced", kept, "attempts", attempts, "mode", r.Config.Mode)
		if r.Config.Mode == BindThroughUpdate {
			r.clearPendingOperation(ctx, shoot)
		}
		return reconcile.Result{}
	}
	r.Store.Release(ReservationKey(key.Namespace, key.Name))
	if written {
		// The next attempt reads the Shoot as the API server has it; the
		// watch's copy stays, for the SeedAutoscaler still counts it pending.
		r.markOutdated(key, shoot.ResourceVersion)
	}
	switch {
	case apierrors.IsConflict(err):
		// Someone wrote the Shoot since it was read; read again soon.
		r.Metrics.ObserveRetry(metrics.ResultConflict)
		wait := r.conflicts.When(key)
		log.V(1).Info("Binding conflict; retrying", "seed", seed, "after", wait)
		return reconcile.Result{RequeueAfter: wait}
	case !written && refusedForCapacity(err) && r.conflicts.NumRequeues(key) < maxQuickRefusals:
		return r.refused(shoot, log, seed, err, kept)
	default:
		return r.bindFailed(shoot, log, seed, err, kept)
	}
}

// maxQuickRefusals is how many refusals (and conflicts) in a row are retried
// on the conflict backoff: 50ms doubling to conflictBackoffMax, about 11s at
// its default (5s), past the reservation TTL of a place another replica
// took at admission. Beyond it a refusal is a failed attempt, so that a
// seed this replica keeps seeing room on, where the cluster-wide
// reservations do not, costs each pending Shoot one request per backoff
// step rather than one every few seconds.
const maxQuickRefusals = 8

// refused answers a bind the cluster-wide reservations refused: this
// replica saw room, another replica's reservation holds it. That place
// frees when its Shoot is counted on the seed or is deleted, any moment,
// so the Shoot is retried on the short conflict backoff, not sent to the
// backoff's next step.
func (r *Reconciler) refused(shoot *api.Shoot, log logr.Logger, seed string, err error, kept bool) reconcile.Result {
	key := types.NamespacedName{Namespace: shoot.Namespace, Name: shoot.Name}
	if kept {
		// The next attempt is free to choose another seed.
		r.distrustAnnounced(key)
	}
	r.Metrics.ObserveRetry(metrics.ResultRefused)
	first := r.conflicts.NumRequeues(key) == 0
	wait := r.conflicts.When(key)
	if first {
		// One event per run of refusals: the retries are seconds apart.
		r.Recorder.Eventf(shoot, nil, corev1.EventTypeWarning, ReasonSchedulingFailed, actionBind, "%s",
			truncate(fmt.Sprintf("binding to seed %q refused, retrying shortly: %v", seed, err)))
	}
	log.Info("Binding pending Shoot refused by the cluster-wide reservations; retrying shortly", "seed", seed, "retryAfter", wait, "reason", err.Error())
	return reconcile.Result{RequeueAfter: wait}
}

// bindFailed answers a bind that failed otherwise: a failed attempt.
func (r *Reconciler) bindFailed(shoot *api.Shoot, log logr.Logger, seed string, err error, kept bool) reconcile.Result {
	key := types.NamespacedName{Namespace: shoot.Namespace, Name: shoot.Name}
	if kept {
		// Refused (e.g. by admission): the next attempt is free to choose
		// another seed.
		r.distrustAnnounced(key)
	}
	r.Metrics.ObserveRetry(metrics.ResultError)
	r.clearWoken(key)
	wait := r.afterBindError(key)
	hint := ""
	if apierrors.IsNotFound(err) && r.Config.Mode == BindThroughSubresource {
		// A Shoot deleted meanwhile is forgotten on the next attempt;
		// a 404 for a Shoot that exists means no binding subresource.
		hint = " (if the Shoot exists, the API server serves no shoots/binding subresource: Shoots from a CRD need mode update)"
	}
	msg := truncate(fmt.Sprintf("binding to seed %q failed: %v%s", seed, err, hint))
	r.Recorder.Eventf(shoot, nil, corev1.EventTypeWarning, ReasonSchedulingFailed, actionBind, "%s", msg)
	if apierrors.IsForbidden(err) || refusedForCapacity(err) {
		// Refused by admission: expected in a burst, retried.
		log.Info("Binding pending Shoot refused", "seed", seed, "retryAfter", wait, "reason", err.Error())
	} else {
		log.Error(err, "Binding pending Shoot failed", "seed", seed, "retryAfter", wait)
	}
	return reconcile.Result{RequeueAfter: wait}
}

// bind writes spec.seedName as the configured mode says (Bind).
// The reasons annotation goes in the same write.
func (r *Reconciler) bind(ctx context.Context, shoot *api.Shoot, seed string) error {
	return bind(ctx, r.Client, r.Config.Mode, shoot, seed, reasonsRemoval(shoot))
}

// Bind writes a Shoot's spec.seedName as mode says, conditional on the
// resourceVersion the decision was made from: a merge patch of the binding
// subresource (its strategy keeps the status and takes the rest from the
// patched Shoot, as a PUT of the whole Shoot would) or, for Shoots from a
// CRD, of the Shoot. annotations, when any, are set in the same write (a
// SeedDrain records its move so). The retry controller and the SeedDrain
// controller bind through it.
func Bind(ctx context.Context, c client.Client, mode Mode, shoot *api.Shoot, seed string, annotations map[string]string) error {
	set := make(map[string]any, len(annotations))
	for k, v := range annotations {
		set[k] = v
	}
	return bind(ctx, c, mode, shoot, seed, set)
}

// bind is Bind with annotations as a merge patch has them (nil removes one).
func bind(ctx context.Context, c client.Client, mode Mode, shoot *api.Shoot, seed string, annotations map[string]any) error {
	meta := map[string]any{"resourceVersion": shoot.ResourceVersion}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": meta,
		"spec":     map[string]any{"seedName": seed},
	})
	if err != nil {
		return err
	}
	ref := shootRef(types.NamespacedName{Namespace: shoot.Namespace, Name: shoot.Name})
	if mode == BindThroughUpdate {
		return c.Patch(ctx, ref, client.RawPatch(types.MergePatchType, patch))
	}
	return c.SubResource(api.SubresourceBinding).Patch(ctx, ref, client.RawPatch(types.MergePatchType, patch))
}

// clearPendingOperation removes the Create/Pending lastOperation this
// controller wrote, as Gardener's binding strategy does on binding. The test
// operations make it a no-op if anything else has written lastOperation since.
func (r *Reconciler) clearPendingOperation(ctx context.Context, shoot *api.Shoot) {
	op := shoot.Status.LastOperation
	if op == nil || op.Type != lastOperationTypeCreate || op.State != lastOperationStatePending {
		return
	}
	patch := []byte(`[{"op":"test","path":"/status/lastOperation/type","value":"Create"},` +
		`{"op":"test","path":"/status/lastOperation/state","value":"Pending"},` +
		`{"op":"remove","path":"/status/lastOperation"}]`)
	key := types.NamespacedName{Namespace: shoot.Namespace, Name: shoot.Name}
	if err := r.Client.Status().Patch(ctx, shootRef(key), client.RawPatch(types.JSONPatchType, patch)); err != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("Pending lastOperation not cleared", "shoot", key.String(), "reason", err.Error())
	}
}
