package autoscaler

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
)

// ReasonAnotherAutoscaler is a SeedAutoscaler left idle because an older
// one scales the same ManagedSeedSet.
const ReasonAnotherAutoscaler = "AnotherAutoscalerScalesTheSet"

// firstForItsSet refuses to act for a SeedAutoscaler whose ManagedSeedSet
// an older SeedAutoscaler (creation time, then name) also targets: two
// would fight over the replicas. The webhook refuses a second one, but two
// CREATEs at once can both pass it, and one stored while the webhook was
// not registered never met it; the older keeps the set, the younger says
// why it does nothing.
func (r *Reconciler) firstForItsSet(ctx context.Context, sa *autoscalingapi.SeedAutoscaler) *syncError {
	var list autoscalingapi.SeedAutoscalerList
	if err := r.Client.List(ctx, &list, client.InNamespace(sa.Namespace)); err != nil {
		return apiError(ReasonAnotherAutoscaler, err, "listing the SeedAutoscalers of namespace %q", sa.Namespace)
	}
	for i := range list.Items {
		o := &list.Items[i]
		if o.UID == sa.UID || o.DeletionTimestamp != nil || o.Spec.ScaleTargetRef.Name != sa.Spec.ScaleTargetRef.Name || !older(o, sa) {
			continue
		}
		return &syncError{reason: ReasonAnotherAutoscaler, message: fmt.Sprintf(
			"spec.scaleTargetRef.name: ManagedSeedSet %s/%s is scaled by SeedAutoscaler %s/%s, which is older; this one does nothing while that one targets the set",
			sa.Namespace, sa.Spec.ScaleTargetRef.Name, o.Namespace, o.Name)}
	}
	return nil
}

// older orders SeedAutoscalers by creation, then by name.
func older(a, b *autoscalingapi.SeedAutoscaler) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}
