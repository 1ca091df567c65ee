package pending

// A failed attempt: the event, the Shoot's pending lastOperation (with its
// reasons annotation, reasons.go) and the next attempt's backoff.

import (
	"context"
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// unschedulable reports a failed attempt and schedules the next one.
func (r *Reconciler) unschedulable(ctx context.Context, shoot *api.Shoot, d *placement.Decision) reconcile.Result {
	key := types.NamespacedName{Namespace: shoot.Namespace, Name: shoot.Name}
	log := ctrl.LoggerFrom(ctx).WithValues("shoot", key.String())
	r.Metrics.ObserveRetry(metrics.ResultUnschedulable)
	r.clearWoken(key)
	wait := r.afterUnschedulable(key)
	msg := truncate(d.Summary())
	log.Info("No seed fits pending Shoot", "step", d.Step, "retryAfter", wait)
	r.Recorder.Eventf(shoot, nil, corev1.EventTypeWarning, ReasonSchedulingFailed, ActionSchedule, "%s", msg)

	rv, reasons, ok := r.writeReasons(ctx, log, shoot, d)
	if !ok {
		return reconcile.Result{RequeueAfter: wait}
	}
	// The resourceVersion makes the patch conditional: a Shoot bound in
	// the meantime must not be marked pending.
	meta := map[string]any{"resourceVersion": rv}
	body := map[string]any{"metadata": meta}
	if reasons != nil {
		meta["annotations"] = reasons
	}
	if op := shoot.Status.LastOperation; op == nil || op.Type != lastOperationTypeCreate ||
		op.State != lastOperationStatePending || op.Description != msg {
		body["status"] = map[string]any{"lastOperation": map[string]any{
			"type":           lastOperationTypeCreate,
			"state":          lastOperationStatePending,
			"description":    msg,
			"lastUpdateTime": r.Now().UTC().Format(time.RFC3339),
			"progress":       0,
		}}
	} else if reasons == nil {
		return reconcile.Result{RequeueAfter: wait}
	}
	patch, err := json.Marshal(body)
	if err == nil {
		err = r.Client.Status().Patch(ctx, shootRef(key), client.RawPatch(types.MergePatchType, patch))
	}
	switch {
	case err == nil:
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		log.V(1).Info("Shoot changed; lastOperation not written", "reason", err.Error())
	default:
		log.Error(err, "Writing status.lastOperation failed")
	}
	return reconcile.Result{RequeueAfter: wait}
}
