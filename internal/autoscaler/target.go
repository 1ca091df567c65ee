package autoscaler

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
	"github.com/seedwarden/seedwarden/internal/seedscale"
)

// Reasons of the errors a sync reports in the conditions and events.
const (
	ReasonFailedGetScale        = "FailedGetScale"
	ReasonFailedUpdateScale     = "FailedUpdateScale"
	ReasonInvalidSelector       = "InvalidSelector"
	ReasonFailedListReplicas    = "FailedListReplicas"
	ReasonFailedComputeReplicas = "FailedComputeReplicas"
)

// The replicas' own objects, read for the protect-from-deletion annotation.
var (
	managedSeedKind = seedmanagement.SchemeGroupVersion.WithKind("ManagedSeedList")
	shootKind       = api.SchemeGroupVersion.WithKind("ShootList")
)

// syncError is a sync that could not decide: its reason and a message
// naming the field and value at fault. transient errors (the API server
// unreachable, a conflict) are retried with backoff, the others at the
// next sync period.
type syncError struct {
	reason, message string
	transient       bool
}

func (e *syncError) Error() string { return e.reason + ": " + e.message }

func apiError(reason string, err error, format string, args ...any) *syncError {
	return &syncError{reason: reason, message: fmt.Sprintf(format, args...) + ": " + err.Error(), transient: !apierrors.IsNotFound(err)}
}

// target is the scaled ManagedSeedSet and its scale subresource.
type target struct {
	set   *seedmanagement.ManagedSeedSet
	scale *autoscalingv1.Scale
}

// readTarget reads the ManagedSeedSet spec.scaleTargetRef names, and its
// scale subresource.
func (r *Reconciler) readTarget(ctx context.Context, sa *autoscalingapi.SeedAutoscaler) (*target, *syncError) {
	ref := sa.Spec.ScaleTargetRef
	if ref.Kind != seedmanagement.KindManagedSeedSet || ref.APIVersion != seedmanagement.SchemeGroupVersion.String() {
		return nil, &syncError{reason: ReasonFailedGetScale, message: fmt.Sprintf("spec.scaleTargetRef: %s %s is not supported (want %s %s)",
			ref.APIVersion, ref.Kind, seedmanagement.SchemeGroupVersion, seedmanagement.KindManagedSeedSet)}
	}
	set := &seedmanagement.ManagedSeedSet{}
	key := client.ObjectKey{Namespace: sa.Namespace, Name: ref.Name}
	if err := r.APIReader.Get(ctx, key, set); err != nil {
		return nil, apiError(ReasonFailedGetScale, err, "spec.scaleTargetRef.name: ManagedSeedSet %q in namespace %q", ref.Name, sa.Namespace)
	}
	scale := &autoscalingv1.Scale{}
	if err := r.Client.SubResource("scale").Get(ctx, set, scale); err != nil {
		return nil, apiError(ReasonFailedGetScale, err, "spec.scaleTargetRef.name: the scale subresource of ManagedSeedSet %s", key)
	}
	return &target{set: set, scale: scale}, nil
}

// writeReplicas sets the scale subresource's spec.replicas.
func (r *Reconciler) writeReplicas(ctx context.Context, t *target, replicas int32) *syncError {
	scale := t.scale.DeepCopy()
	scale.Spec.Replicas = replicas
	if err := r.Client.SubResource("scale").Update(ctx, t.set, client.WithSubResourceBody(scale)); err != nil {
		return apiError(ReasonFailedUpdateScale, err, "writing spec.replicas %d to the scale subresource of ManagedSeedSet %s/%s", replicas, t.set.Namespace, t.set.Name)
	}
	return nil
}

// buildSet is the ManagedSeedSet as seedscale sees it (seedscale.NewSet,
// as `webhook plan --autoscale` builds it), with the scale subresource's
// replicas and the protection the replicas' Shoots and ManagedSeeds carry.
func (r *Reconciler) buildSet(ctx context.Context, t *target, snap *placement.Snapshot) (seedscale.Set, *syncError) {
	mss := t.set
	sel, err := mss.Selector()
	if err != nil {
		return seedscale.Set{}, &syncError{reason: ReasonInvalidSelector, message: err.Error()}
	}
	protected, err := r.protected(ctx, mss.Namespace, sel)
	if err != nil {
		return seedscale.Set{}, apiError(ReasonFailedListReplicas, err, "listing the Shoots and ManagedSeeds of ManagedSeedSet %s/%s (spec.selector %q)", mss.Namespace, mss.Name, sel.String())
	}
	set, err := seedscale.NewSet(mss, snap, protected)
	if err != nil {
		return seedscale.Set{}, &syncError{reason: ReasonFailedComputeReplicas, message: err.Error()}
	}
	set.Replicas = t.scale.Spec.Replicas
	return set, nil
}

// protected are the replicas whose Shoot or ManagedSeed carries the
// protect-from-deletion annotation. A cluster that serves no ManagedSeeds
// (a test landscape) protects through Shoots only.
func (r *Reconciler) protected(ctx context.Context, namespace string, sel labels.Selector) (map[string]bool, error) {
	out := map[string]bool{}
	for _, kind := range []schema.GroupVersionKind{managedSeedKind, shootKind} {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(kind)
		err := r.APIReader.List(ctx, list, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel})
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, o := range list.Items {
			if o.Annotations[seedmanagement.AnnotationProtectFromDeletion] == "true" {
				out[o.Name] = true
			}
		}
	}
	return out, nil
}
