package admissionjson

import (
	"errors"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seedwarden/seedwarden/internal/api"
)

// ShootRequest is an admission request for a Shoot as the mutating webhook
// reads it: the request, and for a CREATE the Shoot and its patch shape, for
// an UPDATE the changes to seedwarden's own annotations.
//
// The object is read for a CREATE, the one operation the webhook places, and
// an UPDATE's objects for their annotations only: every other is answered
// from the request alone, so decoding its object would be work thrown away. A review decoded from its body
// (DecodeShootReview) holds the object already decoded, in the one pass
// over the review (skipping it would cost a CREATE a second pass); a
// request controller-runtime decoded (DecodeShootRequest) holds it raw, and
// it is decoded only for a CREATE. Both then make the same Shoot, shape and
// error of it (view), so the webhook decides alike on either path.
type ShootRequest struct {
	// Request is the request without its objects.
	Request *admissionv1.AdmissionRequest
	// Shoot is the object as placement reads it, with the request's
	// namespace when the object has none.
	Shoot *api.Shoot
	// Shape is the object as a JSON patch sees it.
	Shape PatchShape
	// ObjectErr says why the object of a CREATE cannot be judged: absent,
	// undecodable, or not a Shoot. Shoot is nil then; for an UPDATE, why
	// its objects cannot be compared.
	ObjectErr error
	// OwnChanges are the seedwarden.io/ annotations an UPDATE adds or
	// changes (DecodeShootRequest only).
	OwnChanges []AnnotationChange
}

// ShootReview is an AdmissionReview of a Shoot decoded from its body.
type ShootReview struct {
	// Type is the review's apiVersion and kind.
	Type schema.GroupVersionKind
	ShootRequest
}

// errInexact: the review could decode differently with controller-runtime.
var errInexact = errors.New("seedwarden: the review may read differently with controller-runtime's decoding")

// errNeedsOldObject: an UPDATE, judged by comparing its objects.
var errNeedsOldObject = errors.New("seedwarden: an UPDATE is decoded with its old object by controller-runtime")

// DecodeShootReview decodes an AdmissionReview body in one pass, the
// object straight into the few Shoot fields the webhook reads. It fails
// wherever controller-runtime's webhook.Admission could read the body
// differently or not as JSON: then that is for webhook.Admission to answer.
// That is a body not starting with "{" (YAML and others are the universal
// deserializer's business), a decoding error (the object's too), an
// unparsable apiVersion, and what inspectReview reports: a key only
// controller-runtime's case-insensitive apiVersion/kind lookup would see,
// or a duplicate request or object.
func DecodeShootReview(body []byte) (*ShootReview, error) {
	if !startsJSONObject(body) {
		return nil, errInexact
	}
	// One allocation for the decoding and its result.
	d := &struct {
		out ShootReview
		rv  fastReview
	}{}
	rv, out := &d.rv, &d.out
	if err := decodeFastReview(body, rv); err != nil {
		return nil, err
	}
	found, ok := inspectReview(body)
	if !ok {
		return nil, errInexact
	}
	// With the keys exact and not duplicated in another case
	// (inspectReview), this is the type the deserializer's
	// SimpleMetaFactory.Interpret reads.
	gv, err := schema.ParseGroupVersion(rv.APIVersion)
	if err != nil {
		return nil, err
	}
	q := &rv.req
	if q.Operation == admissionv1.Update {
		// The one pass skips the old object: webhook.Admission's request
		// carries both (rare: only UPDATEs that write seedwarden's own
		// annotations are sent).
		return nil, errNeedsOldObject
	}
	out.Type, out.Request = gv.WithKind(rv.Kind), &q.AdmissionRequest
	if q.Operation == admissionv1.Create {
		out.view(q.Object, found.object, found.ambiguous)
	}
	return out, nil
}

// DecodeShootRequest reads a request controller-runtime decoded: its object
// for a CREATE, the own annotations of both objects for an UPDATE.
func DecodeShootRequest(req admissionv1.AdmissionRequest) *ShootRequest {
	raw, oldRaw := req.Object.Raw, req.OldObject.Raw
	req.Object, req.OldObject, req.Options = runtime.RawExtension{}, runtime.RawExtension{}, runtime.RawExtension{}
	// One allocation for the request and its reading.
	d := &struct {
		out ShootRequest
		req admissionv1.AdmissionRequest
	}{req: req}
	r := &d.out
	r.Request = &d.req
	if req.Operation == admissionv1.Update {
		r.OwnChanges, r.ObjectErr = ownAnnotationChanges(raw, oldRaw)
		return r
	}
	if req.Operation != admissionv1.Create {
		return r
	}
	obj, err := decodeShootObject(raw, false)
	if err != nil {
		r.ObjectErr = err
		return r
	}
	r.view(obj, raw, inspectObject(raw))
	return r
}

// view sets the Shoot and its shape from the decoded object (nil when
// absent or null) and its JSON raw, ambiguous as inspectObject says.
func (r *ShootRequest) view(obj *shootObject, raw []byte, ambiguous bool) {
	if err := obj.check(); err != nil {
		r.ObjectErr = err
		return
	}
	shape := obj.shape()
	if ambiguous {
		var err error
		if shape, err = lastWinsShape(raw); err != nil {
			// Unreachable: the object decoded from the same bytes.
			r.ObjectErr = err
			return
		}
	}
	shoot := obj.toShoot()
	// The API server fills in the namespace from the URL before admission;
	// this only guards placement (project, NamespacedCloudProfile lookups)
	// against an object that omits it.
	if shoot.Namespace == "" {
		shoot.Namespace = r.Request.Namespace
	}
	r.Shoot, r.Shape = shoot, shape
}
