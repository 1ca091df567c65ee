package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// Checks are served like a manager serves them: all at the path, each at
// path/<name>.
func TestMountChecks(t *testing.T) {
	mux := http.NewServeMux()
	mountChecks(mux, "/readyz", map[string]healthz.Checker{
		"ok":   healthz.Ping,
		"fail": func(*http.Request) error { return errors.New("no") },
	})
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/readyz", http.StatusInternalServerError},
		{"/readyz/", http.StatusInternalServerError},
		{"/readyz/ok", http.StatusOK},
		{"/readyz/fail", http.StatusInternalServerError},
		{"/readyz/nope", http.StatusNotFound},
		{"/healthz", http.StatusNotFound},
	} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		assert.Equal(t, tc.want, rec.Code, tc.path)
	}
}

// An empty address serves nothing; a bad one fails naming the server.
func TestServeHTTPAddress(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, serveHTTP(ctx, "metrics", "", http.NotFoundHandler(), logr.Discard()))
	err := serveHTTP(ctx, "metrics", "256.0.0.1:1", http.NotFoundHandler(), logr.Discard())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "metrics server: ")
}
