package handlers

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// selfHostedShootJSON is shootJSON whose worker pool runs the control plane.
func selfHostedShootJSON(meta, spec string) string {
	return strings.Replace(shootJSON(meta, spec), `"name": "worker-k3x9q",`,
		`"name": "worker-k3x9q", "controlPlane": {"backup": {"provider": "aws"}},`, 1)
}

// A self-hosted Shoot is admitted unplaced and unclaimed, with a warning
// saying why, by Handle and the fast path alike; only a foreign placement
// token is still removed.
func TestShootMutatorSelfHosted(t *testing.T) {
	const warn = `seedwarden: self-hosted Shoot (worker pool "worker-k3x9q" has controlPlane): not scheduled to a seed`
	tests := []struct {
		name, scheduler, object string
		wantPatch               string // JSON patch, "" for none
	}{
		{"default scheduler", "default-scheduler", selfHostedShootJSON("", ""), ""},
		{"own scheduler name: not claimed", "seedwarden", selfHostedShootJSON("", ""), ""},
		{"names the default scheduler: not claimed", "seedwarden", selfHostedShootJSON("", `"schedulerName": "default-scheduler",`), ""},
		{"foreign token removed", "seedwarden", selfHostedShootJSON(`"annotations": {"`+placementtoken.Annotation+`": "copied"},`, ""),
			`[{"op":"remove","path":"/metadata/annotations/seedwarden.io~1placement"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{"controller-runtime", "fast"} {
				placer := &fakePlacer{decision: scheduled}
				m := newMutator(t, placer, prometheus.NewRegistry())
				m.SchedulerName = tt.scheduler
				var ar admissionv1.AdmissionReview
				if path == "fast" {
					req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/mutate-shoots", strings.NewReader(review{object: tt.object}.body()))
					req.Header.Set("Content-Type", "application/json")
					rec := httptest.NewRecorder()
					NewMutatingHTTPHandler(m, 0).ServeHTTP(rec, req)
					require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &ar), rec.Body.String())
				} else {
					_, ar = serve(t, m, t.Context(), review{object: tt.object}.body())
				}
				resp := ar.Response
				require.NotNil(t, resp, path)
				assert.True(t, resp.Allowed, path)
				assert.Equal(t, []string{warn}, resp.Warnings, path)
				assert.Empty(t, placer.Calls(), path)
				if tt.wantPatch == "" {
					assert.Empty(t, resp.Patch, path)
				} else {
					assert.JSONEq(t, tt.wantPatch, string(resp.Patch), path)
				}
			}
		})
	}
}
