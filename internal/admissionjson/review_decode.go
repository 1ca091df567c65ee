package admissionjson

import (
	"encoding/json"
	"reflect"

	admissionv1 "k8s.io/api/admission/v1"
)

// DecodeReview decodes an AdmissionReview body into its request as
// controller-runtime's webhook.Admission does (the same types, the same
// case-sensitive decoder, the request preset, its objects kept raw), but
// with every slice and map of the request at its final size (presize): a
// review can spend its bytes on request.userInfo.groups, each 3-byte `"",`
// a 16-byte string that a slice grown one element at a time allocates
// about five times over. It fails (errInexact) wherever webhook.Admission
// could read the body differently, as DecodeShootReview does, and for a
// duplicate or escaped key of a field presize cannot size: that is for
// webhook.Admission to answer. The caller has checked the review's type
// (ReviewType).
func DecodeReview(body []byte) (*admissionv1.AdmissionRequest, error) {
	if !startsJSONObject(body) || !json.Valid(body) {
		return nil, errInexact
	}
	if _, ok := inspectReview(body); !ok {
		return nil, errInexact
	}
	// One allocation for the review and its request.
	d := &struct {
		rv  plainReview
		req plainRequest
	}{}
	d.rv.Request = &d.req
	if !presize(&walker{b: body}, reflect.ValueOf(&d.rv).Elem()) {
		return nil, errInexact
	}
	if err := unmarshal(body, &d.rv); err != nil {
		return nil, err
	}
	d.req.UserInfo.into(&d.req.AdmissionRequest.UserInfo)
	return &d.req.AdmissionRequest, nil
}

// plainReview is admissionv1.AdmissionReview with the request's userInfo
// decoded into userInfo (TestFastReviewMirrorsAdmissionReview).
type plainReview struct {
	APIVersion string                         `json:"apiVersion,omitempty"`
	Kind       string                         `json:"kind,omitempty"`
	Request    *plainRequest                  `json:"request,omitempty"`
	Response   *admissionv1.AdmissionResponse `json:"response,omitempty"`
}

type plainRequest struct {
	admissionv1.AdmissionRequest
	UserInfo userInfo `json:"userInfo"`
}
