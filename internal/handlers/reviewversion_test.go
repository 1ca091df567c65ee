package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"
)

// recordingNext is a next handler that records what it was given.
type recordingNext struct {
	called  bool
	body    []byte
	readErr error
	r       *http.Request
}

func (n *recordingNext) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.called, n.r = true, r
	if r.Body != nil {
		n.body, n.readErr = io.ReadAll(r.Body)
	}
	_, _ = io.WriteString(w, "next")
}

// allowAll is webhook.Admission with a handler that allows everything.
func allowAll() *admission.Webhook {
	return &admission.Webhook{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		return admission.Allowed("")
	})}
}

// protobufReview is a review as the protobuf serializer frames it, which
// webhook.Admission decodes too (whatever the Content-Type says).
func protobufReview(t *testing.T, apiVersion, kind string) string {
	t.Helper()
	raw, err := (&admissionv1.AdmissionReview{Request: &admissionv1.AdmissionRequest{UID: testUID}}).Marshal()
	require.NoError(t, err)
	env, err := (&runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: apiVersion, Kind: kind}, Raw: raw}).Marshal()
	require.NoError(t, err)
	return "k8s\x00" + string(env)
}

func unsupportedMessage(apiVersion, kind string) string {
	return fmt.Sprintf(`seedwarden: unsupported AdmissionReview apiVersion %q, kind %q: this webhook accepts admission.k8s.io/v1 AdmissionReview only (admissionReviewVersions: [v1])`, apiVersion, kind)
}

func TestRequireAdmissionReviewV1(t *testing.T) {
	v1 := review{}.body()
	request := `"request": ` + strings.SplitN(v1, `"request": `, 2)[1]
	toYAML := func(s string) string {
		y, err := yaml.JSONToYAML([]byte(s))
		require.NoError(t, err)
		return string(y)
	}
	v1beta1 := review{apiVersion: "admission.k8s.io/v1beta1"}.body()
	big := review{apiVersion: "admission.k8s.io/v1beta1", object: strings.Replace(shootJSON("", ""), `"labels": {`, `"labels": {"big": "`+strings.Repeat("x", crMaxRequestSize)+`", `, 1)}.body()

	type refusal struct{ apiVersion, kind string }
	tests := []struct {
		name        string
		body        string
		noBody      bool   // http.NoBody instead of body
		contentType string // default application/json; "-" for none
		refused     *refusal
	}{
		// admission.k8s.io/v1 AdmissionReview, in every form
		// webhook.Admission reads
		{name: "v1", body: v1},
		{name: "v1, leading whitespace", body: "\n\t " + v1},
		{name: "v1, keys in another case", body: `{"APIVERSION": "admission.k8s.io/v1", "KIND": "AdmissionReview", ` + request},
		{name: "v1 last of a case variant", body: `{"APIVERSION": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", ` + request},
		{name: "v1 in YAML", body: toYAML(v1)},
		{name: "v1 in protobuf", body: protobufReview(t, "admission.k8s.io/v1", "AdmissionReview")},

		// Anything else
		{name: "v1beta1", body: v1beta1, refused: &refusal{"admission.k8s.io/v1beta1", "AdmissionReview"}},
		{name: "v2", body: review{apiVersion: "admission.k8s.io/v2"}.body(), refused: &refusal{"admission.k8s.io/v2", "AdmissionReview"}},
		{name: "kind Foo", body: strings.Replace(v1, `"AdmissionReview"`, `"Foo"`, 1), refused: &refusal{"admission.k8s.io/v1", "Foo"}},
		{name: "other group", body: strings.Replace(v1, `"admission.k8s.io/v1"`, `"foo.example/v1"`, 1), refused: &refusal{"foo.example/v1", "AdmissionReview"}},
		{name: "core v1", body: strings.Replace(v1, `"admission.k8s.io/v1"`, `"v1"`, 1), refused: &refusal{"v1", "AdmissionReview"}},
		{name: "no apiVersion and kind", body: `{` + request, refused: &refusal{"", ""}},
		{name: "only a kind", body: `{"kind": "AdmissionReview", ` + request, refused: &refusal{"", "AdmissionReview"}},
		{name: "empty object", body: `{}`, refused: &refusal{"", ""}},
		{name: "apiVersion null", body: `{"apiVersion": null, "kind": "AdmissionReview", ` + request, refused: &refusal{"", "AdmissionReview"}},
		{name: "case variant after the exact key", body: `{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "APIVERSION": "admission.k8s.io/v1beta1", ` + request, refused: &refusal{"admission.k8s.io/v1beta1", "AdmissionReview"}},
		{name: "case variant only", body: `{"ApiVersion": "admission.k8s.io/v1beta1", "Kind": "AdmissionReview", ` + request, refused: &refusal{"admission.k8s.io/v1beta1", "AdmissionReview"}},
		{name: "kind with the Kelvin sign", body: "{\"apiVersion\": \"admission.k8s.io/v1\", \"kind\": \"AdmissionReview\", \"\u212aind\": \"Foo\", " + request, refused: &refusal{"admission.k8s.io/v1", "Foo"}},
		{name: "escaped key", body: `{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "k\u0069nd": "Foo", ` + request, refused: &refusal{"admission.k8s.io/v1", "Foo"}},
		{name: "v1beta1 whose request does not decode", body: strings.Replace(v1beta1, `"userInfo": {`, `"userInfo": {"extra": [1], `, 1), refused: &refusal{"admission.k8s.io/v1beta1", "AdmissionReview"}},
		{name: "v1beta1 in YAML", body: toYAML(v1beta1), refused: &refusal{"admission.k8s.io/v1beta1", "AdmissionReview"}},
		{name: "v2 Foo in protobuf", body: protobufReview(t, "admission.k8s.io/v2", "Foo"), refused: &refusal{"admission.k8s.io/v2", "Foo"}},
		// webhook.Admission reads an empty body (not http.NoBody) as a
		// review without apiVersion and kind, and hands its empty request
		// to the handler.
		{name: "empty body", body: "", refused: &refusal{"", ""}},
		{name: "blank body", body: " \n", refused: &refusal{"", ""}},
		{name: "null", body: "null", refused: &refusal{"", ""}},

		// What webhook.Admission refuses with an error of its own
		{name: "no body", noBody: true},
		{name: "malformed JSON", body: `{"apiVersion": "admission.k8s.io/v1beta1", "kind": `},
		{name: "trailing garbage", body: v1beta1 + "x"},
		{name: "top-level array", body: `[` + v1beta1 + `]`},
		{name: "string", body: `"admission.k8s.io/v1beta1"`},
		{name: "kind of wrong type", body: `{"apiVersion": "admission.k8s.io/v1beta1", "kind": 5}`},
		{name: "kind of wrong type in another case", body: `{"apiVersion": "admission.k8s.io/v1beta1", "KIND": ["AdmissionReview"]}`},
		{name: "unparsable apiVersion", body: `{"apiVersion": "a/b/c", "kind": "AdmissionReview"}`},
		{name: "no-break space before", body: "\u00a0" + v1beta1},
		{name: "other content type", body: v1beta1, contentType: "application/yaml"},
		{name: "no content type", body: v1beta1, contentType: "-"},
		{name: "over controller-runtime's 7 MiB", body: big},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			newReq := func() *http.Request {
				req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/validate", strings.NewReader(tc.body))
				if tc.noBody {
					req.Body = http.NoBody
				}
				switch tc.contentType {
				case "":
					req.Header.Set("Content-Type", "application/json")
				case "-":
				default:
					req.Header.Set("Content-Type", tc.contentType)
				}
				return req
			}
			next := &recordingNext{}
			rec := httptest.NewRecorder()
			req := newReq()
			RequireAdmissionReviewV1(next).ServeHTTP(rec, req)

			// Through to controller-runtime, compared with it alone.
			got, alone := httptest.NewRecorder(), httptest.NewRecorder()
			RequireAdmissionReviewV1(allowAll()).ServeHTTP(got, newReq())
			allowAll().ServeHTTP(alone, newReq())

			if tc.refused == nil {
				require.True(t, next.called, "passed to next")
				assert.Equal(t, "next", rec.Body.String())
				assert.NoError(t, next.readErr)
				if tc.noBody {
					assert.Equal(t, http.NoBody, next.r.Body)
				} else {
					assert.True(t, tc.body == string(next.body), "next reads the body unchanged")
				}
				assert.Equal(t, req.Header, next.r.Header)
				assert.Equal(t, req.URL, next.r.URL)
				assert.Equal(t, req.Context(), next.r.Context())

				assert.Equal(t, alone.Code, got.Code)
				assert.Equal(t, alone.Header(), got.Header())
				assert.Equal(t, alone.Body.String(), got.Body.String())
				assert.NotContains(t, got.Body.String(), "seedwarden: unsupported")
				return
			}

			assert.False(t, next.called, "passed to next")
			assert.Equal(t, got.Body.String(), rec.Body.String())
			assert.Equal(t, http.StatusOK, rec.Code)
			var ar admissionv1.AdmissionReview
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &ar), rec.Body.String())
			assert.Equal(t, "admission.k8s.io/v1", ar.APIVersion)
			assert.Equal(t, "AdmissionReview", ar.Kind)
			require.NotNil(t, ar.Response)
			require.NotNil(t, ar.Response.Result)
			assert.Empty(t, ar.Response.UID)
			assert.False(t, ar.Response.Allowed)
			assert.Equal(t, int32(http.StatusBadRequest), ar.Response.Result.Code)
			assert.Equal(t, unsupportedMessage(tc.refused.apiVersion, tc.refused.kind), ar.Response.Result.Message)
			// Headers as webhook.Admission's own answers.
			assert.Equal(t, alone.Header(), rec.Header())

			// What was refused is what webhook.Admission alone reads:
			// it answers in the review's apiVersion and kind (v1 for
			// none), unless the rest of the review fails to decode.
			var crAnswer admissionv1.AdmissionReview
			require.NoError(t, json.Unmarshal(alone.Body.Bytes(), &crAnswer), alone.Body.String())
			if crAnswer.APIVersion != "" {
				wantAPIVersion, wantKind := tc.refused.apiVersion, tc.refused.kind
				if wantAPIVersion == "" && wantKind == "" {
					wantAPIVersion, wantKind = "admission.k8s.io/v1", "AdmissionReview"
				}
				assert.Equal(t, wantAPIVersion, crAnswer.APIVersion)
				assert.Equal(t, wantKind, crAnswer.Kind)
			}
		})
	}
}

// The exact answer, byte for byte.
func TestRequireAdmissionReviewV1Answer(t *testing.T) {
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/validate", strings.NewReader(review{apiVersion: "admission.k8s.io/v1beta1"}.body()))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	RequireAdmissionReviewV1(allowAll()).ServeHTTP(rec, req)
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"","allowed":false,"status":{"metadata":{},"message":"seedwarden: unsupported AdmissionReview apiVersion \"admission.k8s.io/v1beta1\", kind \"AdmissionReview\": this webhook accepts admission.k8s.io/v1 AdmissionReview only (admissionReviewVersions: [v1])","code":400}}}`+"\n", rec.Body.String())
}

// failAfter returns data, then err.
type failAfter struct {
	data string
	err  error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.data == "" {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestRequireAdmissionReviewV1ReadError(t *testing.T) {
	errReset := errors.New("connection reset")
	const partial = `{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1beta1", "request": {"uid": `
	tests := []struct {
		name string
		next func(*recordingNext) http.Handler
		// wantBody is the answer; for the recording next, "next".
		wantBody string
	}{
		{name: "next sees the bytes read, then the error", next: func(n *recordingNext) http.Handler { return n }, wantBody: "next"},
		{name: "controller-runtime answers with the error", next: func(*recordingNext) http.Handler { return allowAll() },
			wantBody: `{"response":{"uid":"","allowed":false,"status":{"metadata":{},"message":"connection reset","code":400}}}` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/validate", &failAfter{data: partial, err: errReset})
			req.Header.Set("Content-Type", "application/json")
			next := &recordingNext{}
			rec := httptest.NewRecorder()
			RequireAdmissionReviewV1(tc.next(next)).ServeHTTP(rec, req)
			assert.Equal(t, http.StatusOK, rec.Code)
			assert.Equal(t, tc.wantBody, rec.Body.String())
			if next.called {
				assert.Equal(t, partial, string(next.body))
				assert.Same(t, errReset, next.readErr)
			}
		})
	}

	// http.MaxBytesReader's error, as the caller bounds the body.
	t.Run("body over the caller's limit", func(t *testing.T) {
		body := review{apiVersion: "admission.k8s.io/v1beta1"}.body()
		rec := httptest.NewRecorder()
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/validate", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Body = http.MaxBytesReader(rec, req.Body, 100)
		next := &recordingNext{}
		RequireAdmissionReviewV1(next).ServeHTTP(rec, req)
		require.True(t, next.called)
		assert.Equal(t, body[:100], string(next.body))
		var mbe *http.MaxBytesError
		assert.ErrorAs(t, next.readErr, &mbe)
	})
}

// closeRecorder records Close.
type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

// next closing the body it is given closes the request's; the request
// itself is not changed.
func TestRequireAdmissionReviewV1Close(t *testing.T) {
	for name, body := range map[string]string{
		"read":               review{}.body(),
		"over 7 MiB, unread": strings.Repeat(" ", crMaxRequestSize+10),
	} {
		t.Run(name, func(t *testing.T) {
			orig := &closeRecorder{Reader: strings.NewReader(body)}
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/validate", nil)
			req.Header.Set("Content-Type", "application/json")
			req.Body = orig
			var closeErr error
			RequireAdmissionReviewV1(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				b, err := io.ReadAll(r.Body)
				assert.NoError(t, err)
				assert.True(t, body == string(b), "the whole body")
				closeErr = r.Body.Close()
			})).ServeHTTP(httptest.NewRecorder(), req)
			assert.NoError(t, closeErr)
			assert.True(t, orig.closed)
			assert.Same(t, orig, req.Body, "the request's body")
		})
	}
}
