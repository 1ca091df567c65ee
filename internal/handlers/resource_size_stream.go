package handlers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/admissionjson"
)

// StreamSizeReviews serves the resource-size webhook's reviews without
// holding their objects, for the reviews the request budget does not hold
// (server.GuardOrStream): admissionjson.StreamReview reads the body as it
// arrives, measuring request.object and request.oldObject as they pass, and
// next, the webhook's usual chain (RequireAdmissionReviewV1, controller-
// runtime's webhook.Admission, the ResourceSizeValidator), gets the review
// without them: the same request, decoded by the same code, with each object
// replaced by a reference to its measurement (carried in the context). So
// both ways give the same answer, with the request's uid, in the review's
// apiVersion, and a review too large to buffer is still answered with a
// verdict.
//
// A body StreamReview cannot read (not JSON, cut short, too large) gets
// controller-runtime's answer to a body that fails to read: an error review,
// code 400. A Content-Type other than application/json gets the answer it
// gets buffered. Neither comes from the API server.
func StreamSizeReviews(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if r.Header.Get("Content-Type") != "application/json" {
			// Refused for its type once read; no need to hold it for that.
			_, _ = io.Copy(io.Discard, r.Body)
			next.ServeHTTP(w, withBody(r.Context(), r, bytes.NewReader([]byte("{}"))))
			return
		}
		rv, err := admissionjson.StreamReview(r.Body)
		if err != nil {
			_, _ = io.Copy(io.Discard, r.Body)
			next.ServeHTTP(w, withBody(r.Context(), r, errBody{fmt.Errorf("seedwarden: reading the AdmissionReview as it arrives: %w", err)}))
			return
		}
		ctx := context.WithValue(r.Context(), streamedReviewKey{}, rv)
		next.ServeHTTP(w, withBody(ctx, r, bytes.NewReader(rv.Review)))
	})
}

// withBody is r with another body and context.
func withBody(ctx context.Context, r *http.Request, body io.Reader) *http.Request {
	r2 := r.WithContext(ctx)
	r2.Body = replayBody{Reader: body, Closer: r.Body}
	r2.ContentLength = -1
	if b, ok := body.(*bytes.Reader); ok {
		r2.ContentLength = b.Size()
	}
	return r2
}

type streamedReviewKey struct{}

// streamedReviewOf is the StreamedReview the request was decoded from, nil
// when it was read whole.
func streamedReviewOf(ctx context.Context) *admissionjson.StreamedReview {
	rv, _ := ctx.Value(streamedReviewKey{}).(*admissionjson.StreamedReview)
	return rv
}

// requestObjects are the request's object and old object, as measured.
type requestObjects struct {
	object, old admissionjson.MeasuredObject
}

// objectsOf are the request's objects: their measurements when the review
// was streamed, else their bytes.
func objectsOf(streamed *admissionjson.StreamedReview, req admission.Request) requestObjects {
	of := func(raw []byte) admissionjson.MeasuredObject {
		if streamed != nil {
			if m, ok := streamed.Object(raw); ok {
				return m
			}
		}
		return admissionjson.RawObject(raw)
	}
	return requestObjects{object: of(req.Object.Raw), old: of(req.OldObject.Raw)}
}
