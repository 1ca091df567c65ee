package handlers

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/admissionjson"
	"github.com/seedwarden/seedwarden/internal/metrics"
)

// Operation modes of the resource-size webhook in Gardener's words: block is
// enforcement deny, log is warn.
const (
	OperationModeBlock = "block"
	OperationModeLog   = "log"
)

// ResourceRule selects resources like a webhook rule: each list holds names,
// or "*" for all; "" in APIGroups is the core group.
type ResourceRule struct {
	APIGroups, APIVersions, Resources []string
}

// Matches reports whether the rule selects the resource.
func (r ResourceRule) Matches(gvr metav1.GroupVersionResource) bool {
	return listMatches(r.APIGroups, gvr.Group) && listMatches(r.APIVersions, gvr.Version) && listMatches(r.Resources, gvr.Resource)
}

func listMatches(list []string, v string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, v)
}

// SizeLimit bounds the size of the selected resources' objects.
type SizeLimit struct {
	ResourceRule
	// Size is the limit as configured (for messages), Bytes its value.
	Size  string
	Bytes int64
	// ManagedFieldsSize and ManagedFieldsBytes bound metadata.managedFields
	// alike (ManagedFieldsBytes 0: not limited).
	ManagedFieldsSize  string
	ManagedFieldsBytes int64
	// None: the rule matches but limits nothing. A Gardener limit entry
	// with a count but no size still ends the search for a size limit.
	None bool
	// Enforcement of this limit (EnforceDeny, EnforceWarn, EnforceDryRun);
	// "": the validator's.
	Enforcement string
}

// CountLimit bounds how many objects of the selected resources may exist.
type CountLimit struct {
	ResourceRule
	Count int64
	// None: as for SizeLimit (an entry with a size but no count).
	None bool
	// Enforcement: as for SizeLimit.
	Enforcement string
}

func (l SizeLimit) limitsNothing() bool  { return l.None }
func (l CountLimit) limitsNothing() bool { return l.None }

// ObjectCounter counts the objects of a resource from the cache
// (cache.Store.Count); ok is false for resources it does not know.
type ObjectCounter interface {
	Count(resource string) (n int, ok bool)
}

// ResourceSizeValidator limits object sizes and, for cluster-scoped
// resources the cache holds, object counts.
//
// On CREATE and UPDATE of a main resource (subresources are admitted), the
// first SizeLimit matching the request's group, version and resource applies:
// the object's JSON without status and metadata.managedFields must not be
// larger (objsize.MeasureSizes; the object is scanned, not decoded into
// maps), and metadata.managedFields have a limit of their own
// (checkManagedFields). On
// CREATE, the first matching CountLimit applies: the request is refused when
// Counter already holds Count objects of the resource.
//
// Enforce answers a request over a limit: deny, warn (admitted with an
// admission warning, a log line and an event) or dryrun (admitted with a log
// line); a limit with an enforcement of its own overrides it, and of the
// limits a request breaks the strictest decides (deny, then warn, then
// dryrun). seedwarden_rejected_resources_total counts every violation,
// whatever became of it. UnrestrictedSubjects are never limited
// (Subjects.MatchAsGardener). Limits match the resource and version the
// client requested (RequestResource), as Gardener's do.
type ResourceSizeValidator struct {
	// Enforce is the guard's enforcement (nil: deny).
	Enforce              *Enforcer
	Limits               []SizeLimit
	Counts               []CountLimit
	UnrestrictedSubjects Subjects
	Counter              ObjectCounter
	// Metrics may be nil.
	Metrics *metrics.Recorder
	Log     logr.Logger
}

var _ admission.Handler = (*ResourceSizeValidator)(nil)

// violation is one limit a request breaks.
type violation struct {
	reason, message string
	// enforcement is the limit's own ("": the validator's).
	enforcement string
}

// Handle implements admission.Handler.
func (v *ResourceSizeValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	streamed := streamedReviewOf(ctx)
	if streamed != nil && streamed.Truncated {
		err := fmt.Errorf("seedwarden: the review's fields other than its objects exceed %d bytes", admissionjson.MaxStreamedFields)
		logRejected(v.logger(req), err, "Rejecting admission request")
		return invalidRequest(err)
	}
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("seedwarden: sizes are checked on create and update only")
	}
	if req.SubResource != "" {
		return admission.Allowed("seedwarden: subresources are not limited")
	}
	limit, count := v.limitsFor(req)
	if limit == nil && count == nil {
		return admission.Allowed("seedwarden: no limit applies")
	}
	if v.UnrestrictedSubjects.MatchAsGardener(req.UserInfo) {
		return admission.Allowed("seedwarden: unrestricted subject")
	}

	objs := objectsOf(streamed, req)
	found, err := v.violations(req, objs, limit, count)
	if err != nil {
		logRejected(v.logger(req), err, "Rejecting admission request")
		return invalidRequest(err)
	}
	if len(found) == 0 {
		return admission.Allowed("seedwarden: within limits")
	}

	messages := make([]string, len(found))
	action := ""
	for i, f := range found {
		messages[i] = f.message
		v.Metrics.ObserveRejectedResource(string(req.Operation), req.Kind.Kind, req.Namespace, f.reason)
		action = stricter(action, cmp.Or(f.enforcement, v.Enforce.Action()))
	}
	v.logger(req).Info("Limit exceeded", "problems", messages, "enforcement", action)
	return v.Enforce.refuseAs(action, req, requestObject(req, req.Namespace, describedName(req, objs.object), ""),
		"seedwarden: "+strings.Join(messages, "; "))
}

// stricter is the stricter of two enforcement actions ("" is none yet).
func stricter(a, b string) string {
	rank := func(e string) int {
		switch e {
		case EnforceDeny:
			return 3
		case EnforceWarn:
			return 2
		case EnforceDryRun:
			return 1
		default:
			return 0
		}
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// limitsFor returns the size limit and, on CREATE, the count limit that
// apply to the request (nil: none).
func (v *ResourceSizeValidator) limitsFor(req admission.Request) (*SizeLimit, *CountLimit) {
	// The version the client asked for, as Gardener matches it: the API
	// server may convert the object to another version (Resource) for a
	// webhook registered with matchPolicy Equivalent.
	gvr := req.Resource
	if req.RequestResource != nil {
		gvr = *req.RequestResource
	}
	var count *CountLimit
	if req.Operation == admissionv1.Create {
		count = limitFor(v.Counts, gvr)
	}
	return limitFor(v.Limits, gvr), count
}

// violations lists the limits the request breaks; an error means the object
// could not be measured.
func (v *ResourceSizeValidator) violations(req admission.Request, objs requestObjects, limit *SizeLimit, count *CountLimit) ([]violation, error) {
	var found []violation
	if limit != nil && !withinSize(objs.object, limit.unmeasuredBytes()) {
		sizes, err := objs.object.Sizes()
		if err != nil {
			return nil, fmt.Errorf("seedwarden: cannot measure the object: %w", err)
		}
		if sizes.Object > limit.Bytes {
			found = append(found, violation{metrics.RejectReasonSize, fmt.Sprintf("resource size %d bytes exceeds the limit of %s (%d bytes) for %s",
				sizes.Object, limit.Size, limit.Bytes, describeObject(req, objs.object)), limit.Enforcement})
		}
		if vi, ok := v.checkManagedFields(req, objs, limit, sizes.ManagedFields); ok {
			vi.enforcement = limit.Enforcement
			found = append(found, vi)
		}
	}
	if count != nil {
		if vi, ok := v.checkCount(req, objs.object, count); ok {
			vi.enforcement = count.Enforcement
			found = append(found, vi)
		}
	}
	return found, nil
}

// logger is the request's logger, built only where something is logged
// (with zap, WithValues encodes its values at once).
func (v *ResourceSizeValidator) logger(req admission.Request) logr.Logger {
	return v.Log.WithValues("uid", req.UID, "operation", req.Operation, "resource", req.Resource.Resource, "namespace", req.Namespace, "name", req.Name, "user", req.UserInfo.Username)
}

// withinSize reports, without scanning it, that the object cannot measure
// over limit: objsize.Measure never counts more than the bytes it is given.
// The object comes from a decoded AdmissionReview and so is valid JSON; the
// check that it is an object (which Measure insists on) is then its first
// and last byte. Anything else is left to Measure.
func withinSize(obj admissionjson.MeasuredObject, limit int64) bool {
	return obj.Len() <= limit && obj.IsObject()
}

// limitFor returns the first of limits that selects gvr, or nil when none
// does or the first that does limits nothing.
func limitFor[L interface {
	Matches(metav1.GroupVersionResource) bool
	limitsNothing() bool
}](limits []L, gvr metav1.GroupVersionResource) *L {
	for i := range limits {
		if limits[i].Matches(gvr) {
			if limits[i].limitsNothing() {
				return nil
			}
			return &limits[i]
		}
	}
	return nil
}

// checkCount reports a violation when the resource already has count.Count
// objects. A resource the counter does not know is admitted (configuration
// validation only lets countable resources through).
func (v *ResourceSizeValidator) checkCount(req admission.Request, obj admissionjson.MeasuredObject, count *CountLimit) (violation, bool) {
	if v.Counter == nil {
		v.logger(req).Info("Count limit configured but no counter; admitting")
		return violation{}, false
	}
	n, ok := v.Counter.Count(req.Resource.Resource)
	if !ok {
		v.logger(req).Info("Count limit for a resource the cache does not count; admitting")
		return violation{}, false
	}
	if int64(n) < count.Count {
		return violation{}, false
	}
	return violation{reason: metrics.RejectReasonCount, message: fmt.Sprintf("%d %s exist, the limit is %d; %s cannot be created",
		n, qualifiedResource(req.Resource), count.Count, describeObject(req, obj))}, true
}

// qualifiedResource is resource.group ("secrets" for the core group).
func qualifiedResource(gvr metav1.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Resource
	}
	return gvr.Resource + "." + gvr.Group
}

// describeObject names the object of a request: shoots.core.gardener.cloud/v1beta1 "garden-dev/crazy-botany".
func describeObject(req admission.Request, obj admissionjson.MeasuredObject) string {
	name := describedName(req, obj)
	if req.Namespace != "" {
		name = req.Namespace + "/" + name
	}
	return fmt.Sprintf("%s/%s %q", qualifiedResource(req.Resource), req.Resource.Version, name)
}

// describedName is the request's name, else the object's.
func describedName(req admission.Request, obj admissionjson.MeasuredObject) string {
	if req.Name != "" {
		return req.Name
	}
	return objectNameOf(obj)
}

// objectNameOf reads metadata.name, else metadata.generateName, of an
// object (only for messages; a request's name is empty on CREATE when the
// client left naming to the server).
func objectNameOf(obj admissionjson.MeasuredObject) string {
	name, generateName, err := obj.Name()
	if err != nil {
		return ""
	}
	if name != "" {
		return name
	}
	return generateName
}
