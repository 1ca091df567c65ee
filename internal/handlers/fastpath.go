package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	admissionmetrics "sigs.k8s.io/controller-runtime/pkg/webhook/admission/metrics"
)

// crMaxRequestSize is controller-runtime's own limit on AdmissionReview
// bodies (admission.maxRequestSize, unexported): it answers a body of this
// size or more with an error review (413 inside an HTTP 200).
const crMaxRequestSize = 7 << 20

// Body buffers larger than this are not kept for reuse.
const maxPooledBody = 1 << 20

var (
	bodyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}
	outBuffers  = sync.Pool{New: func() any { return new(bytes.Buffer) }}
)

// NewMutatingHTTPHandler serves m at /mutate-shoots without controller-
// runtime's AdmissionReview decoding, which parses the body twice and keeps
// the object raw for m to parse again. It reads the body into a reused
// buffer, decodes the review once (the object straight into the few Shoot
// fields m reads) and answers with exactly the bytes controller-runtime's
// webhook.Admission{Handler: m} would write (same apiVersion and kind as the
// request, UID, patch, warnings, status and headers), except that reviews
// other than admission.k8s.io/v1 AdmissionReview are refused: it answers as
// RequireAdmissionReviewV1(&webhook.Admission{Handler: m}). Both call the
// same decision (ShootMutator.admit), the same refusal and the same response
// encoding, and every request the fast decoding cannot answer the same way —
// a decoding error, another content type, an empty or non-JSON body, a key
// only controller-runtime's case-insensitive apiVersion/kind lookup would
// see, a duplicate object key — goes to
// RequireAdmissionReviewV1(&webhook.Admission{Handler: m}) itself, with the
// body already read.
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
	return &mutatingHTTPHandler{m: m, maxBytes: maxBytes, slow: RequireAdmissionReviewV1(&admission.Webhook{Handler: m})}
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
		// As webhook.Admission answers.
		h.crLog().Error(err, "unable to read the body from the incoming request")
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
	// decodes with the universal deserializer, which takes a body starting
	// with "{" for JSON (YAML and others are its business).
	if len(body) >= crMaxRequestSize || r.Header.Get("Content-Type") != "application/json" || !startsJSONObject(body) {
		return false
	}
	rv, err := decodeFastReview(body)
	if err != nil {
		return false
	}
	shape, ok := inspectReview(body)
	if !ok {
		return false
	}
	// The review's apiVersion and kind as the deserializer's
	// SimpleMetaFactory.Interpret reads them: with the keys exact and not
	// duplicated in another case (inspectReview), that is what was decoded
	// here. Any but v1 AdmissionReview is refused as
	// RequireAdmissionReviewV1 refuses it (webhook.Admission would answer in
	// the request's apiVersion and kind).
	gv, err := schema.ParseGroupVersion(rv.APIVersion)
	if err != nil {
		return false
	}
	gvk := gv.WithKind(rv.Kind)
	if gvk != admissionReviewV1 {
		writeUnsupportedReview(w, gvk, h.crLog())
		return true
	}

	q := &rv.req
	sr := &shootRequest{
		UID: q.UID, Kind: q.Kind, Resource: q.Resource, SubResource: q.SubResource,
		Name: q.Name, Namespace: q.Namespace, Operation: q.Operation, DryRun: q.DryRun,
		raw: shape.object, decoded: true, object: q.Object, ambiguous: shape.ambiguous,
	}
	writeReview(w, h.handle(r.Context(), sr, q), &gvk, h.crLog())
	return true
}

// handle is webhook.Admission's Handle for the fast path: the decision,
// Response.Complete, and the same answer to a panic.
func (h *mutatingHTTPHandler) handle(ctx context.Context, sr *shootRequest, q *fastRequest) (resp admission.Response) {
	defer func() {
		if v := recover(); v != nil {
			admissionmetrics.WebhookPanics.WithLabelValues().Inc()
			req := q.admissionRequest()
			ctx = logf.IntoContext(ctx, admission.DefaultLogConstructor(logf.Log.WithName("admission"), &req))
			for _, fn := range utilruntime.PanicHandlers {
				fn(ctx, v)
			}
			resp = admission.Errored(http.StatusInternalServerError, fmt.Errorf("panic: %v [recovered]", v))
			resp.UID = sr.UID
		}
	}()
	resp = h.m.admit(ctx, sr)
	if err := resp.Complete(admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: sr.UID}}); err != nil {
		h.crLog().Error(err, "unable to encode response")
		resp = admission.Errored(http.StatusInternalServerError, errors.New("unable to encode response"))
		resp.UID = sr.UID
	}
	return resp
}

// writeReview writes resp as webhook.Admission does (its writeResponseTyped,
// or writeResponse when gvk is nil): the same encoding/json Encoder output in
// one Write, no headers set.
func writeReview(w io.Writer, resp admission.Response, gvk *schema.GroupVersionKind, log logr.Logger) {
	ar := admissionv1.AdmissionReview{Response: &resp.AdmissionResponse}
	if gvk != nil {
		if *gvk == (schema.GroupVersionKind{}) {
			ar.SetGroupVersionKind(admissionv1.SchemeGroupVersion.WithKind("AdmissionReview"))
		} else {
			ar.SetGroupVersionKind(*gvk)
		}
	}
	buf := outBuffers.Get().(*bytes.Buffer)
	defer outBuffers.Put(buf)
	buf.Reset()
	if err := json.NewEncoder(buf).Encode(ar); err != nil {
		// Unreachable: an AdmissionReview always encodes.
		log.Error(err, "unable to encode and write the response")
		return
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		log.Error(err, "unable to encode and write the response")
	}
}

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
// shootObject and OldObject and Options (runtime.RawExtension, which accepts
// any JSON value) skipped.
type fastRequest struct {
	UID                types.UID                    `json:"uid"`
	Kind               metav1.GroupVersionKind      `json:"kind"`
	Resource           metav1.GroupVersionResource  `json:"resource"`
	SubResource        string                       `json:"subResource,omitempty"`
	RequestKind        *metav1.GroupVersionKind     `json:"requestKind,omitempty"`
	RequestResource    *metav1.GroupVersionResource `json:"requestResource,omitempty"`
	RequestSubResource string                       `json:"requestSubResource,omitempty"`
	Name               string                       `json:"name,omitempty"`
	Namespace          string                       `json:"namespace,omitempty"`
	Operation          admissionv1.Operation        `json:"operation"`
	UserInfo           authenticationv1.UserInfo    `json:"userInfo"`
	Object             *shootObject                 `json:"object,omitempty"`
	OldObject          anyJSON                      `json:"oldObject,omitempty"`
	DryRun             *bool                        `json:"dryRun,omitempty"`
	Options            anyJSON                      `json:"options,omitempty"`
}

// admissionRequest is q for logging (without the objects).
func (q *fastRequest) admissionRequest() admission.Request {
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: q.UID, Kind: q.Kind, Resource: q.Resource, SubResource: q.SubResource,
		RequestKind: q.RequestKind, RequestResource: q.RequestResource, RequestSubResource: q.RequestSubResource,
		Name: q.Name, Namespace: q.Namespace, Operation: q.Operation, UserInfo: q.UserInfo, DryRun: q.DryRun,
	}}
}

// anyJSON accepts any JSON value and keeps nothing, as runtime.RawExtension
// accepts any.
type anyJSON struct{}

func (*anyJSON) UnmarshalJSON([]byte) error { return nil }
