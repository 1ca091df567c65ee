package handlers

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// admissionReviewV1 is the one AdmissionReview type the webhooks accept.
var admissionReviewV1 = admissionv1.SchemeGroupVersion.WithKind("AdmissionReview")

// reviewTypeDecoder finds a review's apiVersion and kind as controller-
// runtime's webhook.Admission does (the same universal deserializer): for
// JSON, encoding/json into a struct of the two, so with keys matched case-
// insensitively and the last of duplicates winning; YAML converted to JSON
// first; protobuf from its runtime.Unknown envelope. Decoding into a
// runtime.Unknown stops there: the rest of the review is not decoded.
var reviewTypeDecoder = serializer.NewCodecFactory(runtime.NewScheme()).UniversalDeserializer()

// RequireAdmissionReviewV1 refuses every request that controller-runtime's
// webhook.Admission would decode as a review other than admission.k8s.io/v1
// AdmissionReview (admission.k8s.io/v1beta1, another version or kind, or
// neither: webhook.Admission decodes those anyway and answers in the
// request's apiVersion and kind, or v1 when there is none). The webhooks are
// registered with admissionReviewVersions: [v1], so such a review comes from
// a misconfigured client: better refused, with an error saying why, than
// answered in a format it did not ask for. The refusal is an HTTP 200 v1
// AdmissionReview whose response is admission.Errored(400, ...), without a
// UID, written as webhook.Admission writes its own errors.
//
// Everything else goes to next, with the body it would have read: no body,
// a body that fails to read (next sees the bytes read, then the same error),
// one of controller-runtime's 7 MiB or more (which it refuses unread, and
// this reads no further), a Content-Type other than application/json, and
// a body whose apiVersion and kind do not decode (malformed JSON, not an
// object, an unparsable apiVersion): webhook.Admission answers those with an
// error of its own.
//
// The caller bounds the body (http.MaxBytesReader).
func RequireAdmissionReviewV1(next http.Handler) http.Handler {
	log := sync.OnceValue(func() logr.Logger { return logf.Log.WithName("admission") })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Checked in webhook.Admission's order: body, size, content type.
		if r.Body == nil || r.Body == http.NoBody || r.Header.Get("Content-Type") != "application/json" {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, crMaxRequestSize))
		var rest io.Reader
		switch {
		case err != nil:
			rest = errBody{err}
		case len(body) >= crMaxRequestSize:
			rest = r.Body
		default:
			if gvk, ok := reviewType(body); ok && gvk != admissionReviewV1 {
				writeUnsupportedReview(w, gvk, log())
				return
			}
		}
		// A shallow copy: a handler may read r's body, not replace it.
		r2 := new(http.Request)
		*r2 = *r
		var rd io.Reader = bytes.NewReader(body)
		if rest != nil {
			rd = io.MultiReader(rd, rest)
		}
		r2.Body = replayBody{Reader: rd, Closer: r.Body}
		next.ServeHTTP(w, r2)
	})
}

// reviewType is the GroupVersionKind webhook.Admission would decode body
// as, and false when it would fail to.
func reviewType(body []byte) (schema.GroupVersionKind, bool) {
	_, gvk, err := reviewTypeDecoder.Decode(body, nil, &runtime.Unknown{})
	if err != nil || gvk == nil {
		return schema.GroupVersionKind{}, false
	}
	return *gvk, true
}

// unsupportedReviewError is the reason a review of type gvk is refused.
func unsupportedReviewError(gvk schema.GroupVersionKind) error {
	return fmt.Errorf("seedwarden: unsupported AdmissionReview apiVersion %q, kind %q: this webhook accepts admission.k8s.io/v1 AdmissionReview only (admissionReviewVersions: [v1])",
		gvk.GroupVersion().String(), gvk.Kind)
}

// writeUnsupportedReview refuses a review of type gvk (not
// admissionReviewV1): a v1 AdmissionReview with an error response, no UID,
// and, as webhook.Admission's own error answers, no headers set.
func writeUnsupportedReview(w io.Writer, gvk schema.GroupVersionKind, log logr.Logger) {
	err := unsupportedReviewError(gvk)
	log.Error(err, "refusing the request")
	writeReview(w, admission.Errored(http.StatusBadRequest, err), &admissionReviewV1, log)
}

// replayBody reads the body read already, and closes the request's.
type replayBody struct {
	io.Reader
	io.Closer
}

// errBody fails every read with err.
type errBody struct{ err error }

func (b errBody) Read([]byte) (int, error) { return 0, b.err }
