package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	admissionmetrics "sigs.k8s.io/controller-runtime/pkg/webhook/admission/metrics"

	"github.com/seedwarden/seedwarden/internal/admissionjson"
)

// crMaxRequestSize is controller-runtime's own limit on AdmissionReview
// bodies (admission.maxRequestSize, unexported): it answers a body of this
// size or more with an error review (413 inside an HTTP 200).
const crMaxRequestSize = 7 << 20

// Body buffers larger than this are not kept for reuse.
const maxPooledBody = 1 << 20

var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// NewMutatingHTTPHandler serves m at /mutate-shoots without controller-
// runtime's AdmissionReview decoding, which parses the body twice and keeps
// the object raw for m to parse again. It reads the body into a reused
// buffer, decodes the review once (admissionjson.DecodeShootReview: the
// object straight into the few Shoot fields m reads) and answers with exactly the bytes controller-runtime's
// webhook.Admission{Handler: m} would write (same apiVersion and kind as the
// request, UID, patch, warnings, status and headers), except that reviews
// other than admission.k8s.io/v1 AdmissionReview are refused: it answers as
// RequireAdmissionReviewV1(&webhook.Admission{Handler: m}). Both call the
// same decision (ShootMutator.admit), the same refusal and the same response
// encoding, and every request the fast decoding cannot answer the same way —
// a decoding error, another content type, an empty or non-JSON body, a key
// only controller-runtime's case-insensitive apiVersion/kind lookup would
// see, a duplicate object key — goes to
// RequireAdmissionReviewV1(NewAdmissionWebhook(m)) itself (webhook.Admission,
// logging the client's errors as rejections), with the body already read.
//
// Bodies over maxBytes (server.maxRequestBytes; <= 0 means controller-
// runtime's 7 MiB) get HTTP 413 without being read when the Content-Length
// says so, else after at most maxBytes+1 bytes (http.MaxBytesReader).
//
// Register it with webhook.Server.Register like any webhook: the server wraps
// every registered http.Handler with controller-runtime's instrumentation
// (controller_runtime_webhook_requests_total, _latency_seconds,
// _requests_in_flight). Panics in m are recovered as webhook.Admission does
// (an error review, controller_runtime_webhook_panics_total).
func NewMutatingHTTPHandler(m *ShootMutator, maxBytes int64) http.Handler {
	if maxBytes <= 0 {
		maxBytes = crMaxRequestSize
	}
	return &mutatingHTTPHandler{m: m, maxBytes: maxBytes, slow: RequireAdmissionReviewV1(NewAdmissionWebhook(m))}
}

type mutatingHTTPHandler struct {
	m        *ShootMutator
	maxBytes int64
	// slow is controller-runtime's handling of the same requests, behind
	// RequireAdmissionReviewV1.
	slow http.Handler

	logOnce sync.Once
	log     logr.Logger
	// slowServed counts the requests left to slow (for tests).
	slowServed atomic.Uint64
}

// crLog is the logger controller-runtime's webhook.Admission logs with.
func (h *mutatingHTTPHandler) crLog() logr.Logger {
	h.logOnce.Do(func() { h.log = logf.Log.WithName("admission") })
	return h.log
}

func (h *mutatingHTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > h.maxBytes {
		http.Error(w, fmt.Sprintf("request body of %d bytes exceeds the limit of %d bytes (server.maxRequestBytes)", r.ContentLength, h.maxBytes), http.StatusRequestEntityTooLarge)
		return
	}
	if r.Body == nil || r.Body == http.NoBody {
		h.slowServed.Add(1)
		h.slow.ServeHTTP(w, r)
		return
	}
	// The server closes the body too; a close error changes nothing here.
	defer func() { _ = r.Body.Close() }()

	bp := bodyBuffers.Get().(*[]byte)
	body, err := readBody(http.MaxBytesReader(w, r.Body, h.maxBytes), *bp, r.ContentLength)
	defer func() {
		if cap(body) <= maxPooledBody {
			*bp = body[:0]
			bodyBuffers.Put(bp)
		}
	}()
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		http.Error(w, fmt.Sprintf("request body exceeds the limit of %d bytes (server.maxRequestBytes)", h.maxBytes), http.StatusRequestEntityTooLarge)
		return
	}
	if err != nil {
		// As webhook.Admission answers; logged as NewAdmissionWebhook's
		// would log it (the client's failure).
		logRejected(h.crLog(), err, "unable to read the body from the incoming request")
		writeReview(w, admission.Errored(http.StatusBadRequest, err), nil, h.crLog())
		return
	}
	if !h.serveFast(w, r, body) {
		h.slowServed.Add(1)
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.slow.ServeHTTP(w, r)
	}
}

// readBody reads r to its end into buf, sized by contentLength when known.
func readBody(r io.Reader, buf []byte, contentLength int64) ([]byte, error) {
	buf = buf[:0]
	if contentLength >= 0 && int64(cap(buf)) <= contentLength {
		// One byte more, so the read that finds the end needs no growth.
		buf = make([]byte, 0, contentLength+1)
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// serveFast answers the request if it can answer exactly as
// RequireAdmissionReviewV1(webhook.Admission) would, and reports whether it
// did.
func (h *mutatingHTTPHandler) serveFast(w http.ResponseWriter, r *http.Request, body []byte) bool {
	// webhook.Admission checks the size, then the content type, then
	// decodes (DecodeShootReview leaves it what it could read otherwise).
	if len(body) >= crMaxRequestSize || r.Header.Get("Content-Type") != "application/json" {
		return false
	}
	rv, err := admissionjson.DecodeShootReview(body)
	if err != nil {
		return false
	}
	// Any but v1 AdmissionReview is refused as RequireAdmissionReviewV1
	// refuses it (webhook.Admission would answer in the request's
	// apiVersion and kind).
	if rv.Type != admissionjson.AdmissionReviewV1 {
		writeUnsupportedReview(w, rv.Type, h.crLog())
		return true
	}
	writeReview(w, h.handle(r.Context(), &rv.ShootRequest), &rv.Type, h.crLog())
	return true
}

// handle is webhook.Admission's Handle for the fast path: the decision,
// Response.Complete, and the same answer to a panic.
func (h *mutatingHTTPHandler) handle(ctx context.Context, sr *admissionjson.ShootRequest) (resp admission.Response) {
	defer func() {
		if v := recover(); v != nil {
			admissionmetrics.WebhookPanics.WithLabelValues().Inc()
			req := admission.Request{AdmissionRequest: *sr.Request}
			ctx = logf.IntoContext(ctx, admission.DefaultLogConstructor(logf.Log.WithName("admission"), &req))
			for _, fn := range utilruntime.PanicHandlers {
				fn(ctx, v)
			}
			resp = admission.Errored(http.StatusInternalServerError, fmt.Errorf("panic: %v [recovered]", v))
			resp.UID = sr.Request.UID
		}
	}()
	resp = h.m.admit(ctx, sr)
	if err := resp.Complete(admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: sr.Request.UID}}); err != nil {
		h.crLog().Error(err, "unable to encode response")
		resp = admission.Errored(http.StatusInternalServerError, errors.New("unable to encode response"))
		resp.UID = sr.Request.UID
	}
	return resp
}

// writeReview writes resp as webhook.Admission does (WriteReview), logging
// a failed write (the client went away) as NewAdmissionWebhook's would; no
// headers set.
func writeReview(w io.Writer, resp admission.Response, gvk *schema.GroupVersionKind, log logr.Logger) {
	if err := admissionjson.WriteReview(w, &resp.AdmissionResponse, gvk); err != nil {
		logRejected(log, err, "unable to encode and write the response")
	}
}
