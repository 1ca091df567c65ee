package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/admissionjson"
)

// echoWebhook is webhook.Admission with a handler that answers with the
// whole request it was given, as JSON in the message and a warning per
// group, so that two ways of decoding one review can be compared by their
// answers.
func echoWebhook() *admission.Webhook {
	return NewAdmissionWebhook(admission.HandlerFunc(func(_ context.Context, req admission.Request) admission.Response {
		raw, err := json.Marshal(req.AdmissionRequest)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		return admission.Allowed(string(raw)).WithWarnings(req.UserInfo.Groups...)
	}))
}

// serveBoth serves body through RequireAdmissionReviewV1 (which decodes a
// v1 review itself, DecodeReview) and through webhook.Admission alone, and
// returns both answers.
func serveBoth(t testing.TB, body []byte) (decoded, plain []byte) {
	t.Helper()
	serve := func(h http.Handler) []byte {
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Body.Bytes()
	}
	wh := echoWebhook()
	return serve(RequireAdmissionReviewV1(wh)), serve(wh)
}

// The validating webhooks' own decoding of a review answers every review
// as webhook.Admission does, byte for byte: real reviews, repeated groups,
// and the reviews it leaves to webhook.Admission.
func TestDecodedReviewAnswersAsWebhookAdmission(t *testing.T) {
	realistic, err := os.ReadFile("../admissionjson/testdata/review.json")
	require.NoError(t, err)
	const rv = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",`
	groups := `"userInfo":{"username":"u","groups":[` + strings.Repeat(`"a","b",`, 1000) + `"c"],"extra":{"k":["x","x"]}}`
	for name, body := range map[string]string{
		"realistic review": string(realistic),
		"repeated groups":  rv + `"request":{"uid":"1","operation":"CREATE",` + groups + `,"object":{"kind":"Shoot"},"oldObject":null,"dryRun":true}}`,
		"request twice":    rv + `"request":{"uid":"1",` + groups + `},"request":{"operation":"DELETE"}}`,
		"userInfo twice":   rv + `"request":{"uid":"1",` + groups + `,"userInfo":{"groups":["z"]}}}`,
		"escaped key":      rv + `"request":{"uid":"1","userInfo":{"gr\u006fups":["a"]}}}`,
		"object twice":     rv + `"request":{"uid":"1","object":{"a":1},"object":{"b":2}}}`,
		"request null":     rv + `"request":{"uid":"1"},"request":null}`,
		"wrong type":       rv + `"request":{"uid":1}}`,
		"not JSON":         rv + `"request":`,
	} {
		t.Run(name, func(t *testing.T) {
			decoded, plain := serveBoth(t, []byte(body))
			assert.Equal(t, string(plain), string(decoded))
			if name == "realistic review" || name == "repeated groups" {
				_, err := admissionjson.DecodeReview([]byte(body))
				assert.NoError(t, err, "decoded by the validating webhooks themselves")
			}
		})
	}
}

// FuzzDecodedReviewAnswersAsWebhookAdmission: on any v1 review, the answer
// of the validating webhooks' own decoding (DecodeReview) is
// webhook.Admission's.
func FuzzDecodedReviewAnswersAsWebhookAdmission(f *testing.F) {
	const rv = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",`
	for _, seed := range []string{
		rv + `"request":{"uid":"1","userInfo":{"groups":["a","a","b"],"extra":{"k":["x"]}},"object":{"kind":"Shoot"}}}`,
		rv + `"request":{"uid":"1","userInfo":{"groups":["a"]},"userInfo":{"groups":null}}}`,
		rv + `"request":{"uid":"1","requestKind":{"group":"g"},"options":{"kind":"UpdateOptions"},"dryRun":false}}`,
		rv + `"Request":{"uid":"2"},"request":{"uid":"1","userInfo":{"extra":{"k":[],"k":["y"]}}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if gvk, ok := admissionjson.ReviewType(body); !ok || gvk != admissionjson.AdmissionReviewV1 {
			return // refused or passed on before any decoding (TestRequireAdmissionReviewV1)
		}
		decoded, plain := serveBoth(t, body)
		assert.Equal(t, string(plain), string(decoded))
	})
}
