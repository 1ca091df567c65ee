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
		// Into a reused buffer sized by the Content-Length: growing one from
		// nothing copies a large body several times. next reads it before
		// it returns (webhook.Admission copies it), so it can go back then.
		bp := bodyBuffers.Get().(*[]byte)
		body, err := readBody(io.LimitReader(r.Body, crMaxRequestSize), *bp, min(r.ContentLength, crMaxRequestSize))
		defer func() {
			if cap(body) <= maxPooledBody {
				*bp = body[:0]
				bodyBuffers.Put(bp)
			}
		}()
		var rest io.Reader
		switch {
		case err != nil:
			rest = errBody{err}
		case len(body) >= crMaxRequestSize:
			rest = r.Body
		default:
			// The full decoder scans the whole body (640 µs for a 100 KB
			// ConfigMap at the size webhook); walking the top-level keys
			// settles the usual v1 review far cheaper.
			if isReviewV1(body) {
				break
			}
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
	logRejected(log, err, "Refusing the request")
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
