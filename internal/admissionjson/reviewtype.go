package admissionjson

import (
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// AdmissionReviewV1 is the one AdmissionReview type the webhooks accept.
var AdmissionReviewV1 = admissionv1.SchemeGroupVersion.WithKind("AdmissionReview")

// reviewTypeDecoder finds a review's apiVersion and kind as controller-
// runtime's webhook.Admission does (the same universal deserializer): for
// JSON, encoding/json into a struct of the two, so with keys matched case-
// insensitively and the last of duplicates winning; YAML converted to JSON
// first; protobuf from its runtime.Unknown envelope. Decoding into a
// runtime.Unknown stops there: the rest of the review is not decoded.
var reviewTypeDecoder = serializer.NewCodecFactory(runtime.NewScheme()).UniversalDeserializer()

// ReviewType is the GroupVersionKind controller-runtime's webhook.Admission
// would decode body as, and false when it would fail to.
func ReviewType(body []byte) (schema.GroupVersionKind, bool) {
	// The full decoder scans the whole body (640 µs for a 100 KB ConfigMap
	// at the size webhook); walking the top-level keys settles the usual v1
	// review far cheaper.
	if isReviewV1(body) {
		return AdmissionReviewV1, true
	}
	return reviewType(body)
}

// reviewType is ReviewType by the full decoder.
func reviewType(body []byte) (schema.GroupVersionKind, bool) {
	_, gvk, err := reviewTypeDecoder.Decode(body, nil, &runtime.Unknown{})
	if err != nil || gvk == nil {
		return schema.GroupVersionKind{}, false
	}
	return *gvk, true
}

// isReviewV1 reports whether body is plainly a JSON admission.k8s.io/v1
// AdmissionReview: a top-level object whose keys are plain ASCII, with
// exactly one "apiVersion" and one "kind" (no key that is a case variant of
// either, which encoding/json would also match) holding unescaped strings
// with those values. false means "cannot tell cheaply", not "another type".
func isReviewV1(body []byte) bool {
	w := walker{b: body}
	var apiVersion, kind []byte
	seen := 0
	ok := w.object(func(key []byte, escaped bool) bool {
		if escaped || !isASCII(key) {
			return false
		}
		var into *[]byte
		switch {
		case string(key) == "apiVersion":
			into = &apiVersion
		case string(key) == "kind":
			into = &kind
		case asciiEqualFold(key, "apiVersion"), asciiEqualFold(key, "kind"):
			return false
		default:
			return w.skip()
		}
		if *into != nil || w.peek() != '"' {
			return false
		}
		v, escaped, ok := w.str()
		if !ok || escaped {
			return false
		}
		*into = v
		seen++
		return true
	})
	return ok && seen == 2 && string(apiVersion) == "admission.k8s.io/v1" && string(kind) == "AdmissionReview"
}
