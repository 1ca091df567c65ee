package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/admissionjson"
	"github.com/seedwarden/seedwarden/internal/authz"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
)

// ScalePermission is what a user needs to make a SeedAutoscaler scale a
// ManagedSeedSet: update on its scale subresource, what the controller
// itself then does with seedwarden's own rights.
var ScalePermission = authz.Permission{Verb: "update", Group: seedmanagement.GroupName, Resource: "managedseedsets", Subresource: "scale"}

// SeedAutoscalerLister lists the SeedAutoscalers of a namespace as the API
// server holds them now (not a cache that may lag behind).
type SeedAutoscalerLister func(ctx context.Context, namespace string) ([]autoscalingapi.SeedAutoscaler, error)

// SeedAutoscalerValidator keeps the SeedAutoscaler controller from being a
// confused deputy: whoever makes a SeedAutoscaler scale a ManagedSeedSet
// must be allowed ScalePermission on it (Authorizer), and a set is scaled
// by one SeedAutoscaler only (Autoscalers), since two would fight. It also
// holds the spec to autoscalingapi's bounds, the part a CRD schema cannot
// check (an inline Shoot's size). It fails closed: an unanswered question is
// a denial.
type SeedAutoscalerValidator struct {
	// Authorizer answers ScalePermission (authz.SARAuthorizer).
	Authorizer  Authorizer
	Autoscalers SeedAutoscalerLister
	Log         logr.Logger
}

var seedAutoscalerTarget = admissionTarget{autoscalingapi.GroupName, autoscalingapi.SchemeGroupVersion.Version,
	autoscalingapi.KindSeedAutoscaler, autoscalingapi.ResourceSeedAutoscaler, ""}

// Handle implements admission.Handler.
func (v *SeedAutoscalerValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	log := v.Log.WithValues("uid", req.UID, "namespace", req.Namespace, "name", req.Name, "operation", req.Operation, "user", req.UserInfo.Username)
	if err := seedAutoscalerTarget.check(req.Kind, req.Resource, req.SubResource, req.Operation); err != nil {
		logRejected(log, err, "Rejecting admission request")
		return invalidRequest(err)
	}
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("seedwarden: nothing to check for operation " + string(req.Operation))
	}
	sa, old, err := decodeSeedAutoscalers(req)
	if err != nil {
		logRejected(log, err, "Rejecting admission request")
		return invalidRequest(err)
	}
	// An UPDATE that leaves the target, range and metrics alone changes
	// nothing this webhook judges (the bounds are the metrics'): a
	// finalizer or label must not be refused on an object stored before
	// the bounds.
	if old != nil && !scalesDifferently(old, sa) {
		return admission.Allowed("seedwarden: what the SeedAutoscaler scales, and how far, is unchanged")
	}
	if err := sa.Spec.CheckBounds(); err != nil {
		return denied("seedwarden: SeedAutoscaler %s/%s: %s", sa.Namespace, sa.Name, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	if resp, ok := v.authorize(ctx, req, sa, log); !ok {
		return resp
	}
	if old == nil || old.Spec.ScaleTargetRef.Name != sa.Spec.ScaleTargetRef.Name {
		if resp, ok := v.onlyOne(ctx, sa, old != nil, log); !ok {
			return resp
		}
	}
	return admission.Allowed(fmt.Sprintf("seedwarden: user %q may scale ManagedSeedSet %q", req.UserInfo.Username, sa.Spec.ScaleTargetRef.Name))
}

// decodeSeedAutoscalers reads the object and, on UPDATE, the old object
// (which the API server always sends; a missing one is an error, so it
// never hides a change of the target).
func decodeSeedAutoscalers(req admission.Request) (sa, old *autoscalingapi.SeedAutoscaler, err error) {
	sa, err = admissionjson.DecodeSeedAutoscaler(req.Object.Raw)
	if err != nil {
		return nil, nil, err
	}
	if sa.Namespace == "" {
		sa.Namespace = req.Namespace
	}
	sa.Name = objectName(sa.Name, req.Name)
	if req.Operation == admissionv1.Update {
		if old, err = admissionjson.DecodeSeedAutoscaler(req.OldObject.Raw); err != nil {
			return nil, nil, fmt.Errorf("old object: %w", err)
		}
	}
	return sa, old, nil
}

// scalesDifferently says whether an UPDATE changes what the SeedAutoscaler
// may do to its set: the target, the range of replicas, the metrics that
// pick within it, or dry-run turned off (from then on it writes). Behavior
// only paces changes within the range someone allowed to scale chose, and
// metadata changes nothing.
func scalesDifferently(old, sa *autoscalingapi.SeedAutoscaler) bool {
	o, n := &old.Spec, &sa.Spec
	return o.ScaleTargetRef != n.ScaleTargetRef ||
		o.MinReplicasOrDefault() != n.MinReplicasOrDefault() || o.MaxReplicas != n.MaxReplicas ||
		!equality.Semantic.DeepEqual(o.Metrics, n.Metrics) ||
		o.DryRun && !n.DryRun
}

// authorize asks whether the requester holds ScalePermission on the target.
func (v *SeedAutoscalerValidator) authorize(ctx context.Context, req admission.Request, sa *autoscalingapi.SeedAutoscaler, log logr.Logger) (admission.Response, bool) {
	set := sa.Spec.ScaleTargetRef.Name
	if v.Authorizer == nil {
		err := errors.New("no authorizer configured")
		log.Error(err, "Cannot verify scale permission")
		return denied("seedwarden: cannot verify permission to scale ManagedSeedSet %q: %v", set, err), false
	}
	allowed, reason, err := v.Authorizer.Allowed(ctx, req.UserInfo, sa.Namespace, set)
	if err != nil {
		log.Error(err, "Cannot verify scale permission", "set", set)
		return denied("seedwarden: cannot verify permission to scale ManagedSeedSet %q: %v", set, err), false
	}
	if allowed {
		return admission.Response{}, true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "seedwarden: user %q may not make SeedAutoscaler %s/%s scale ManagedSeedSet %q: that needs permission to %s %s/%s (%s) in namespace %q",
		req.UserInfo.Username, sa.Namespace, sa.Name, set, ScalePermission.Verb, ScalePermission.Resource, ScalePermission.Subresource, ScalePermission.Group, sa.Namespace)
	if reason != "" {
		fmt.Fprintf(&b, " (%s)", reason)
	}
	log.Info("Denied SeedAutoscaler without scale permission", "set", set, "reason", reason)
	return admission.Denied(b.String()), false
}

// onlyOne refuses a SeedAutoscaler for a set another one already targets.
// On UPDATE the object itself is left out. Two CREATEs at once may both
// pass (each lists before the other is stored); the controller then acts
// on the older one only (internal/autoscaler).
func (v *SeedAutoscalerValidator) onlyOne(ctx context.Context, sa *autoscalingapi.SeedAutoscaler, update bool, log logr.Logger) (admission.Response, bool) {
	set := sa.Spec.ScaleTargetRef.Name
	if v.Autoscalers == nil {
		return denied("seedwarden: cannot check for another SeedAutoscaler of ManagedSeedSet %q: no lister configured", set), false
	}
	others, err := v.Autoscalers(ctx, sa.Namespace)
	if err != nil {
		log.Error(err, "Cannot list SeedAutoscalers", "set", set)
		return denied("seedwarden: cannot check for another SeedAutoscaler of ManagedSeedSet %q: %v", set, err), false
	}
	for _, o := range others {
		if update && o.Name == sa.Name || o.DeletionTimestamp != nil || o.Spec.ScaleTargetRef.Name != set {
			continue
		}
		log.Info("Denied a second SeedAutoscaler for a set", "set", set, "first", o.Name)
		return denied("seedwarden: ManagedSeedSet %s/%s is already scaled by SeedAutoscaler %s/%s; a set takes one SeedAutoscaler (two would fight over its replicas): edit or delete that one",
			sa.Namespace, set, o.Namespace, o.Name), false
	}
	return admission.Response{}, true
}
