package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// fakeReviewAPI answers TokenReviews and SubjectAccessReviews as
// kube-apiserver does: "reader-token" is user reader, who may GET /metrics;
// "nobody-token" is user nobody, who may not; any other token is refused
// with the status error kube-apiserver gives.
func fakeReviewAPI(t *testing.T) *rest.Config {
	t.Helper()
	users := map[string]string{"reader-token": "reader", "nobody-token": "nobody"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/apis/authentication.k8s.io/v1/tokenreviews":
			var tr authenticationv1.TokenReview
			if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if name, ok := users[tr.Spec.Token]; ok {
				tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: name}}
			} else {
				tr.Status = authenticationv1.TokenReviewStatus{Error: "[invalid bearer token, token lookup failed]"}
			}
			_ = json.NewEncoder(w).Encode(&tr)
		case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
			var sar authorizationv1.SubjectAccessReview
			if err := json.NewDecoder(r.Body).Decode(&sar); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			nr := sar.Spec.NonResourceAttributes
			sar.Status.Allowed = sar.Spec.User == "reader" && nr != nil && nr.Path == "/metrics" && nr.Verb == "get"
			_ = json.NewEncoder(w).Encode(&sar)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	// JSON, so the fake can read it (client-go's typed clients may speak
	// protobuf to the real API server).
	return &rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json", AcceptContentTypes: "application/json"}}
}

// scrapeThrough sends GET /metrics with the Authorization header auth
// through the filter of provider and returns the status code.
func scrapeThrough(t *testing.T, provider func(*rest.Config, *http.Client) (metricsserver.Filter, error), cfg *rest.Config, auth string) int {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	filter, err := provider(cfg, hc)
	require.NoError(t, err)
	h, err := filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("seedwarden_up 1\n")) }))
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// TestMetricsAuthFilter: no token or one the API server refuses is 401, an
// authenticated user without get on /metrics 403, one with it 200.
func TestMetricsAuthFilter(t *testing.T) {
	cfg := fakeReviewAPI(t)
	for _, tc := range []struct {
		name, auth string
		want       int
	}{
		{"no header", "", http.StatusUnauthorized},
		{"not a bearer token", "Basic cmVhZGVyOnB3", http.StatusUnauthorized},
		{"empty bearer token", "Bearer ", http.StatusUnauthorized},
		{"scheme in another case", "bearer reader-token", http.StatusOK},
		{"token the API server refuses", "Bearer not-a-token", http.StatusUnauthorized},
		{"authenticated, not authorized", "Bearer nobody-token", http.StatusForbidden},
		{"authorized", "Bearer reader-token", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, scrapeThrough(t, MetricsAuthFilter, cfg, tc.auth))
		})
	}
}

// controller-runtime's filter answers a token the API server refuses with
// 500 (k8s.io/apiserver's bearer-token authenticator returns an error for
// it): one of the reasons MetricsAuthFilter is seedwarden's own (the other:
// its caches, metrics_review_test.go).
func TestControllerRuntimeMetricsFilterAnswers500ForBadToken(t *testing.T) {
	cfg := fakeReviewAPI(t)
	assert.Equal(t, http.StatusInternalServerError, scrapeThrough(t, filters.WithAuthenticationAndAuthorization, cfg, "Bearer not-a-token"))
	assert.Equal(t, http.StatusOK, scrapeThrough(t, filters.WithAuthenticationAndAuthorization, cfg, "Bearer reader-token"))
}
