package pending

// A pending Shoot's reason codes (placement.CodeSummary), where programs
// read them: the annotation api.AnnotationUnschedulableReasons on the Shoot
// and seedwarden_pending_shoots_unschedulable.

import (
	"context"
	"encoding/json"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// reasonsAnnotation is the annotation's value for an unschedulable decision:
// the summary's JSON, the same bytes for the same summary.
func reasonsAnnotation(d *placement.Decision) string {
	b, err := json.Marshal(d.CodeSummary())
	if err != nil {
		return "" // a struct of strings and ints: cannot happen
	}
	return string(b)
}

// writeReasons sets the Shoot's reasons annotation when its summary
// changed, conditional on the version decided from, and returns the
// resourceVersion the status write is to be conditional on; false when the
// Shoot changed meanwhile (nothing more is written this attempt). The
// summary has counts, not texts (which name usages), so it changes far
// less often than the lastOperation description.
func (r *Reconciler) writeReasons(ctx context.Context, log logr.Logger, shoot *api.Shoot, d *placement.Decision) (string, bool) {
	value := reasonsAnnotation(d)
	if value == "" || shoot.Annotations[api.AnnotationUnschedulableReasons] == value {
		return shoot.ResourceVersion, true
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": shoot.ResourceVersion,
		"annotations":     map[string]string{api.AnnotationUnschedulableReasons: value},
	}})
	if err != nil {
		return shoot.ResourceVersion, true
	}
	ref := shootRef(types.NamespacedName{Namespace: shoot.Namespace, Name: shoot.Name})
	switch err := r.Client.Patch(ctx, ref, client.RawPatch(types.MergePatchType, patch)); {
	case err == nil:
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		log.V(1).Info("Shoot changed; reasons not written", "reason", err.Error())
		return "", false
	default:
		// The status write may still succeed: the reasons wait for the
		// next attempt.
		log.Error(err, "Writing the unschedulable-reasons annotation failed")
		return shoot.ResourceVersion, true
	}
	if ref.ResourceVersion != "" {
		return ref.ResourceVersion, true
	}
	return shoot.ResourceVersion, true
}

// reasonsRemoval is the annotation change a bind makes: the reasons go
// with the wait (nil: the Shoot has none).
func reasonsRemoval(shoot *api.Shoot) map[string]any {
	if _, ok := shoot.Annotations[api.AnnotationUnschedulableReasons]; !ok {
		return nil
	}
	return map[string]any{api.AnnotationUnschedulableReasons: nil}
}

// recordCodes keeps the codes of a pending Shoot's last attempt for the
// metric (nil: it found a seed).
func (r *Reconciler) recordCodes(shoot *api.Shoot, d *placement.Decision) {
	var codes []placement.ReasonCode
	if !d.Schedulable() {
		codes = d.CodeSummary().All()
	}
	key := types.NamespacedName{Namespace: shoot.Namespace, Name: shoot.Name}
	r.withState(key, func(st *shootState) {
		st.codes, st.provider, st.region = codes, shoot.Spec.Provider.Type, shoot.Spec.Region
	})
}

// reasonCounts is seedwarden_pending_shoots_unschedulable at a scrape: the
// pending Shoots per code and (provider, region), a linear scan under the
// lock like oldestPendingAge.
func (r *Reconciler) reasonCounts() map[metrics.PendingReasonKey]int {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[metrics.PendingReasonKey]int{}
	for _, st := range r.pending {
		for _, c := range st.codes {
			out[metrics.PendingReasonKey{Reason: string(c), Provider: st.provider, Region: st.region}]++
		}
	}
	return out
}
