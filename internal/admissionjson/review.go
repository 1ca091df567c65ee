package admissionjson

import (
	"encoding/json"
	"reflect"

	admissionv1 "k8s.io/api/admission/v1"
)

// fastReview is admissionv1.AdmissionReview with the request's object
// decoded into shootObject. Every other field has the type (and so the
// decoding errors) of its counterpart; TestFastReviewMirrorsAdmissionReview
// keeps them in step.
type fastReview struct {
	APIVersion string                         `json:"apiVersion,omitempty"`
	Kind       string                         `json:"kind,omitempty"`
	Request    *fastRequest                   `json:"request,omitempty"`
	Response   *admissionv1.AdmissionResponse `json:"response,omitempty"`

	req fastRequest
}

// fastRequest is admissionv1.AdmissionRequest with Object decoded into
// shootObject, UserInfo into userInfo (copied into the request after
// decoding) and OldObject and Options (runtime.RawExtension, which accepts
// any JSON value) skipped: its own members hide the embedded request's of
// the same name, which stay empty.
type fastRequest struct {
	admissionv1.AdmissionRequest
	UserInfo  userInfo     `json:"userInfo"`
	Object    *shootObject `json:"object,omitempty"`
	OldObject anyJSON      `json:"oldObject,omitempty"`
	Options   anyJSON      `json:"options,omitempty"`
}

// anyJSON accepts any JSON value and keeps nothing, as runtime.RawExtension
// accepts any.
type anyJSON struct{}

func (*anyJSON) UnmarshalJSON([]byte) error { return nil }

// decodeFastReview decodes a whole AdmissionReview into rv, request.object
// straight into a shootObject, the request's slices and maps at their
// final size (presize; as DecodeReview).
func decodeFastReview(body []byte, rv *fastReview) error {
	// Preset like webhook.Admission's: a later "request": null clears the
	// pointer, not the request decoded before it.
	rv.Request = &rv.req
	if !json.Valid(body) {
		return unmarshal(body, rv) // the decoder's own syntax error
	}
	if !presize(&walker{b: body}, reflect.ValueOf(rv).Elem()) {
		return errInexact
	}
	if err := unmarshal(body, rv); err != nil {
		return err
	}
	rv.req.UserInfo.into(&rv.req.AdmissionRequest.UserInfo)
	return nil
}
