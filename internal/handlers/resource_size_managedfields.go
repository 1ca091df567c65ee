package handlers

import (
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/metrics"
)

// bookkeepers write Gardener's and Kubernetes' own bookkeeping into the
// objects of every project: the API servers' loopback clients and cluster
// admins, gardenlets, and the controllers of kube-system (garbage collector,
// namespace controller; a gardener-operator virtual garden's Gardener
// components) and of namespace garden (a standalone Gardener's). No tenant
// can be one of them. Their requests grow managedFields only by the fields
// they change, so the managedFields limit, which Gardener does not have,
// never refuses them: an object already over it stays maintainable.
var bookkeepers = Subjects{
	{Kind: SubjectGroup, Name: "system:masters"},
	{Kind: SubjectGroup, Name: "gardener.cloud:system:seeds"},
	{Kind: SubjectServiceAccount, Namespace: "kube-system", Name: "*"},
	{Kind: SubjectServiceAccount, Namespace: "garden", Name: "*"},
}

// unmeasuredBytes is the length up to which an object cannot break the
// limit, so that withinSize may skip measuring it.
func (l *SizeLimit) unmeasuredBytes() int64 {
	if l.ManagedFieldsBytes > 0 {
		return min(l.Bytes, l.ManagedFieldsBytes)
	}
	return l.Bytes
}

// checkManagedFields reports a violation when the request would store
// metadata.managedFields of size bytes over the limit. The API server has
// already merged the request's own entry into them (its field manager runs
// before admission), so size is what would be stored. An UPDATE that does
// not grow managedFields is admitted even over the limit: Gardener never
// limited them, and objects stored before the limit must stay writable.
func (v *ResourceSizeValidator) checkManagedFields(req admission.Request, objs requestObjects, limit *SizeLimit, size int64) (violation, bool) {
	if limit.ManagedFieldsBytes <= 0 || size <= limit.ManagedFieldsBytes || bookkeepers.Match(req.UserInfo) {
		return violation{}, false
	}
	msg := fmt.Sprintf("metadata.managedFields of %d bytes exceed the limit of %s (%d bytes) for %s",
		size, limit.ManagedFieldsSize, limit.ManagedFieldsBytes, describeObject(req, objs.object))
	if req.Operation == admissionv1.Update {
		// A missing or unreadable old object counts as having none: the API
		// server always sends it, so only a forged review lacks it.
		old, _ := objs.old.Sizes()
		if size <= old.ManagedFields {
			return violation{}, false
		}
		msg += fmt.Sprintf(" (stored: %d bytes; an update may keep managedFields over the limit, not grow them)", old.ManagedFields)
	}
	return violation{reason: metrics.RejectReasonManagedFields, message: msg}, true
}
