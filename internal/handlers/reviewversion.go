package handlers

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/admissionjson"
)

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
// A v1 review for a next that is a *webhook.Admission is decoded here and
// answered through its Handle (serveDecoded): webhook.Admission would copy
// the body again and grow the request's slices one element at a time.
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
			gvk, ok := admissionjson.ReviewType(body)
			if ok && gvk != admissionjson.AdmissionReviewV1 {
				writeUnsupportedReview(w, gvk, log())
				return
			}
			if wh, isWebhook := next.(*admission.Webhook); ok && isWebhook && serveDecoded(w, r, wh, body, log()) {
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

// serveDecoded answers a v1 review as wh's ServeHTTP would, from the body
// decoded by admissionjson.DecodeReview (which sizes what it decodes, where
// webhook.Admission would grow the request's slices and copy the body
// once more), and reports whether it could: a body DecodeReview cannot read
// exactly as webhook.Admission would is left to wh.
func serveDecoded(w http.ResponseWriter, r *http.Request, wh *admission.Webhook, body []byte, log logr.Logger) bool {
	req, err := admissionjson.DecodeReview(body)
	if err != nil {
		return false
	}
	writeReview(w, wh.Handle(r.Context(), admission.Request{AdmissionRequest: *req}), &admissionjson.AdmissionReviewV1, log)
	return true
}

// unsupportedReviewError is the reason a review of type gvk is refused.
func unsupportedReviewError(gvk schema.GroupVersionKind) error {
	return fmt.Errorf("seedwarden: unsupported AdmissionReview apiVersion %q, kind %q: this webhook accepts admission.k8s.io/v1 AdmissionReview only (admissionReviewVersions: [v1])",
		gvk.GroupVersion().String(), gvk.Kind)
}

// writeUnsupportedReview refuses a review of type gvk (not
// admissionjson.AdmissionReviewV1): a v1 AdmissionReview with an error
// response, no UID, and, as webhook.Admission's own error answers, no
// headers set.
func writeUnsupportedReview(w io.Writer, gvk schema.GroupVersionKind, log logr.Logger) {
	err := unsupportedReviewError(gvk)
	logRejected(log, err, "Refusing the request")
	writeReview(w, admission.Errored(http.StatusBadRequest, err), &admissionjson.AdmissionReviewV1, log)
}

// replayBody reads the body read already, and closes the request's.
type replayBody struct {
	io.Reader
	io.Closer
}

// errBody fails every read with err.
type errBody struct{ err error }

func (b errBody) Read([]byte) (int, error) { return 0, b.err }
