package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	admissionmetrics "sigs.k8s.io/controller-runtime/pkg/webhook/admission/metrics"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// The fast path must answer every request exactly as controller-runtime's
// webhook.Admission{Handler: m} behind RequireAdmissionReviewV1 does (the
// oracle): same status, headers and body bytes, same placements, same
// metrics.

// oracle is what NewMutatingHTTPHandler(m, ...) must answer as.
func oracle(m *ShootMutator) http.Handler {
	return RequireAdmissionReviewV1(&webhook.Admission{Handler: m})
}

// refusal is in the answer to a review other than admission.k8s.io/v1
// AdmissionReview.
const refusal = `seedwarden: unsupported AdmissionReview apiVersion`

type handlerRun struct {
	rec    *httptest.ResponseRecorder
	placer *fakePlacer
	reg    *prometheus.Registry
}

// runMutator sends body to the handler made by mk for a fresh mutator,
// configured further by setup unless it is nil.
func runMutator(t *testing.T, d placement.Decision, signed bool, setup func(*ShootMutator), body, contentType string, mk func(*ShootMutator) http.Handler) handlerRun {
	t.Helper()
	run := handlerRun{placer: &fakePlacer{decision: d}, reg: prometheus.NewRegistry()}
	m := newMutator(t, run.placer, run.reg)
	if signed {
		m.Signer = vSigner(t, newVClock())
	}
	if setup != nil {
		setup(m)
	}
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/mutate-shoots", strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	run.rec = httptest.NewRecorder()
	mk(m).ServeHTTP(run.rec, req)
	return run
}

func decisionCounts(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != metrics.DecisionsTotalName {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" {
					out[l.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

// Mutator settings the equality test varies.
var (
	announce         = func(m *ShootMutator) { m.Announce = true }
	claim            = func(m *ShootMutator) { m.SchedulerName = "seedwarden" }
	claimAndAnnounce = func(m *ShootMutator) { announce(m); claim(m) }
)

func TestMutatingHTTPHandlerMatchesAdmission(t *testing.T) {
	const rv = `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1",`
	userToken := map[string]string{placementtoken.Annotation: "copied", "keep": "me"}
	yamlBody, err := yaml.JSONToYAML([]byte(review{}.body()))
	require.NoError(t, err)
	yamlV1beta1, err := yaml.JSONToYAML([]byte(review{apiVersion: "admission.k8s.io/v1beta1"}.body()))
	require.NoError(t, err)
	// An object whose metadata comes twice: decoding merges them, a JSON
	// patch sees the last.
	dupMeta := `{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot", "metadata": {"annotations": {"a": "b"}}, "metadata": {"name": "n"}, "spec": {}}`
	big := strings.Replace(shootJSON("", ""), `"labels": {`, `"labels": {"big": "`+strings.Repeat("x", crMaxRequestSize)+`", `, 1)

	tests := []struct {
		name        string
		body        string
		contentType string // default application/json; "-" for none
		decision    *placement.Decision
		signed      bool
		setup       func(*ShootMutator)
		wantFast    bool
		refused     bool // as not admission.k8s.io/v1 AdmissionReview
	}{
		// Decisions
		{name: "scheduled", body: review{}.body(), wantFast: true},
		{name: "scheduled and signed, annotations present", body: review{object: shootJSON(`"annotations": {"a": "b"},`, "")}.body(), signed: true, wantFast: true},
		{name: "scheduled, no spec and no metadata", body: review{object: `{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot"}`}.body(), wantFast: true},
		{name: "dry-run", body: review{dryRun: true}.body(), signed: true, wantFast: true},
		{name: "unschedulable", body: review{}.body(), decision: &unschedulable, wantFast: true},
		{name: "unschedulable, foreign token removed", body: review{object: vShoot("", userToken)}.body(), decision: &unschedulable, signed: true, wantFast: true},
		{name: "placed without signer, foreign token removed", body: review{object: vShoot("", userToken)}.body(), wantFast: true},
		{name: "seed already set", body: review{object: shootJSON("", `"seedName": "gcp-eu1",`)}.body(), wantFast: true},
		{name: "foreign scheduler", body: review{object: shootJSON("", `"schedulerName": "custom",`)}.body(), wantFast: true},
		{name: "self-hosted", body: review{object: selfHostedShootJSON("", "")}.body(), wantFast: true},
		{name: "self-hosted, foreign token removed", body: review{object: selfHostedShootJSON(`"annotations": {"seedwarden.io/placement": "copied"},`, "")}.body(), signed: true, wantFast: true},
		{name: "self-hosted with a seed", body: review{object: selfHostedShootJSON("", `"seedName": "gcp-eu1",`)}.body(), wantFast: true},
		{name: "update: compared with its old object by controller-runtime", body: review{operation: "UPDATE"}.body()},
		{name: "delete without object", body: review{operation: "DELETE", object: "null"}.body(), wantFast: true},
		{name: "object with duplicate metadata", body: review{object: dupMeta}.body(), signed: true, wantFast: true},
		{name: "object keys are case-sensitive", body: review{object: `{"kind": "Shoot", "Spec": {"seedName": "x"}, "metadata": {"Annotations": {}}}`}.body(), wantFast: true},
		{name: "escaped object keys", body: review{object: `{"kind": "Shoot", "sp\u0065c": {"region": "eu"}, "metadata": {"annot\u0061tions": {"seedwarden.io\/placement": "x"}}}`}.body(), wantFast: true},
		{name: "leading whitespace", body: "\n\t " + review{}.body(), wantFast: true},
		{name: "announced", body: review{}.body(), signed: true, setup: announce, wantFast: true},
		{name: "announced, no spec", body: review{object: `{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot"}`}.body(), signed: true, setup: announce, wantFast: true},
		{name: "announced, unschedulable", body: review{}.body(), decision: &unschedulable, signed: true, setup: announce, wantFast: true},
		{name: "claimed", body: review{}.body(), signed: true, setup: claim, wantFast: true},
		{name: "claimed and announced, no spec", body: review{object: `{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot"}`}.body(), setup: claimAndAnnounce, wantFast: true},
		{name: "claimed, unschedulable", body: review{}.body(), decision: &unschedulable, setup: claim, wantFast: true},
		{name: "claimed from default-scheduler", body: review{object: shootJSON("", `"schedulerName": "default-scheduler",`)}.body(), setup: claim, wantFast: true},
		{name: "not claimed from another scheduler", body: review{object: shootJSON("", `"schedulerName": "custom",`)}.body(), setup: claimAndAnnounce, wantFast: true},

		// Errors the decision reports
		{name: "wrong kind", body: review{kind: "core.gardener.cloud/v1beta1/Seed", resource: "core.gardener.cloud/v1beta1/seeds"}.body(), wantFast: true},
		{name: "binding subresource", body: review{subResource: "binding"}.body(), wantFast: true},
		{name: "missing uid", body: strings.Replace(review{}.body(), `"uid": "`+testUID+`"`, `"uid": ""`, 1), wantFast: true},
		{name: "null object", body: review{object: "null"}.body(), wantFast: true},
		{name: "no object", body: strings.Replace(review{}.body(), `"object": `, `"objectX": `, 1), wantFast: true},
		{name: "object of wrong kind", body: review{object: `{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed"}`}.body(), wantFast: true},
		{name: "object of wrong apiVersion", body: review{object: `{"apiVersion": "core.gardener.cloud/v1", "kind": "Shoot"}`}.body(), wantFast: true},
		{name: "object not an object", body: review{object: `"crazy-botany"`}.body()},
		{name: "object field of wrong type", body: review{object: `{"kind": "Shoot", "spec": {"seedName": 42}}`}.body()},
		{name: "update of an object that does not decode", body: review{operation: "UPDATE", object: `[1]`}.body()},

		// The review's apiVersion and kind: admission.k8s.io/v1
		// AdmissionReview only
		{name: "missing request", body: `{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1"}`, wantFast: true},
		{name: "request null", body: rv + `"request": null}`, wantFast: true},
		{name: "admission.k8s.io/v1beta1 review", body: review{apiVersion: "admission.k8s.io/v1beta1"}.body(), wantFast: true, refused: true},
		{name: "admission.k8s.io/v2 review", body: review{apiVersion: "admission.k8s.io/v2"}.body(), wantFast: true, refused: true},
		{name: "kind Foo", body: strings.Replace(review{}.body(), `"AdmissionReview"`, `"Foo"`, 1), wantFast: true, refused: true},
		{name: "other apiVersion and kind", body: strings.Replace(strings.Replace(review{}.body(), `"AdmissionReview"`, `"Bar"`, 1), `"admission.k8s.io/v1"`, `"foo.example/v9"`, 1), wantFast: true, refused: true},
		{name: "no apiVersion and kind", body: `{"request": ` + strings.SplitN(review{}.body(), `"request": `, 2)[1], wantFast: true, refused: true},
		{name: "only a kind", body: `{"kind": "AdmissionReview", "request": {"uid": "u"}}`, wantFast: true, refused: true},
		{name: "core apiVersion", body: `{"apiVersion": "v1", "request": {"uid": "u"}}`, wantFast: true, refused: true},
		{name: "apiVersion with an empty group", body: `{"apiVersion": "/v1", "kind": "AdmissionReview", "request": {"uid": "u"}}`, wantFast: true, refused: true},
		{name: "empty review", body: `{}`, wantFast: true, refused: true},
		{name: "unparsable apiVersion", body: `{"apiVersion": "a/b/c", "kind": "AdmissionReview", "request": {}}`},
		{name: "apiVersion in another case too", body: rv + `"APIVERSION": "admission.k8s.io/v1beta1", "request": ` + strings.SplitN(review{}.body(), `"request": `, 2)[1], refused: true},
		{name: "apiVersion and kind only in another case", body: `{"APIVERSION": "admission.k8s.io/v1", "KIND": "AdmissionReview", "request": ` + strings.SplitN(review{}.body(), `"request": `, 2)[1]},
		{name: "kind of wrong type in another case", body: rv + `"Kind": 5, "request": {}}`},
		{name: "kind with the Kelvin sign", body: rv + "\"\u212aind\": \"X\", \"request\": {}}", refused: true},
		{name: "escaped top-level key", body: rv + `"k\u0069nd": "X", "request": {}}`, refused: true},
		{name: "v1beta1 review that does not decode", body: strings.Replace(review{apiVersion: "admission.k8s.io/v1beta1"}.body(), `"userInfo": {`, `"userInfo": {"extra": [1], `, 1), refused: true},
		{name: "v1beta1 review in YAML", body: string(yamlV1beta1), refused: true},
		{name: "v1beta1 review of another content type", body: review{apiVersion: "admission.k8s.io/v1beta1"}.body(), contentType: "application/yaml"},

		// What decoding into a struct would see differently from
		// runtime.RawExtension
		{name: "object twice, then null", body: strings.Replace(review{}.body(), `"oldObject": null`, `"object": null`, 1)},
		{name: "object twice", body: strings.Replace(review{}.body(), `"oldObject": null`, `"object": {"kind": "Shoot"}`, 1)},
		{name: "escaped object key", body: strings.Replace(review{}.body(), `"oldObject": null`, `"\u006fbject": null`, 1)},
		{name: "request twice", body: rv + `"request": {"uid": "a"}, "request": {"operation": "CREATE"}}`},

		// Decoding errors and what only controller-runtime decodes
		{name: "malformed JSON", body: rv + `"request": {"uid": `},
		{name: "trailing garbage", body: review{}.body() + "x"},
		{name: "response of wrong type", body: rv + `"response": {"allowed": "yes"}, "request": {"uid": "u"}}`},
		{name: "userInfo of wrong type", body: strings.Replace(review{}.body(), `"userInfo": {`, `"userInfo": {"extra": [1], `, 1)},
		{name: "top-level array", body: `[` + review{}.body() + `]`},
		{name: "no-break space before", body: "\u00a0" + review{}.body()},
		{name: "YAML", body: string(yamlBody)},
		{name: "empty body", body: "", refused: true},
		{name: "blank body", body: " \n", refused: true},
		{name: "wrong content type", body: review{}.body(), contentType: "application/yaml"},
		{name: "no content type", body: review{}.body(), contentType: "-"},
		{name: "over controller-runtime's 7 MiB", body: review{object: big}.body()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := scheduled
			if tc.decision != nil {
				d = *tc.decision
			}
			ct := tc.contentType
			switch ct {
			case "":
				ct = "application/json"
			case "-":
				ct = ""
			}
			var fast *mutatingHTTPHandler
			got := runMutator(t, d, tc.signed, tc.setup, tc.body, ct, func(m *ShootMutator) http.Handler {
				fast = NewMutatingHTTPHandler(m, 8<<20).(*mutatingHTTPHandler)
				return fast
			})
			want := runMutator(t, d, tc.signed, tc.setup, tc.body, ct, oracle)

			assert.Equal(t, tc.wantFast, fast.slowServed.Load() == 0, "served by the fast path")
			assert.Equal(t, tc.refused, strings.Contains(got.rec.Body.String(), refusal), "refused: %s", got.rec.Body)
			if tc.refused {
				assert.Empty(t, got.placer.Calls())
			}
			assert.Equal(t, want.rec.Code, got.rec.Code)
			assert.Equal(t, want.rec.Header(), got.rec.Header())
			if !assert.Equal(t, want.rec.Body.String(), got.rec.Body.String()) {
				return
			}
			var ar admissionv1.AdmissionReview
			require.NoError(t, json.Unmarshal(got.rec.Body.Bytes(), &ar), got.rec.Body.String())
			require.NotNil(t, ar.Response)
			assert.Equal(t, want.placer.Calls(), got.placer.Calls())
			assert.Equal(t, decisionCounts(t, want.reg), decisionCounts(t, got.reg))
			if len(ar.Response.Patch) > 0 {
				// The patch applies to the object as controller-runtime
				// reads it.
				data := []byte(tc.body)
				if !bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{")) {
					data, err = yaml.YAMLToJSON(data)
					require.NoError(t, err)
				}
				var req admissionv1.AdmissionReview
				require.NoError(t, kjson.UnmarshalCaseSensitivePreserveInts(data, &req))
				applyPatch(t, string(req.Request.Object.Raw), ar.Response.Patch)
			}
		})
	}
}

// The test above covers what the decision makes of ambiguous objects only
// through equality; here the patch itself.
func TestMutatingHTTPHandlerAmbiguousObject(t *testing.T) {
	object := `{"kind": "Shoot", "metadata": {"annotations": {"seedwarden.io/placement": "x"}}, "metadata": {"name": "n"}, "spec": {}, "spec": null}`
	got := runMutator(t, scheduled, false, nil, review{object: object}.body(), "application/json", func(m *ShootMutator) http.Handler {
		return NewMutatingHTTPHandler(m, 0)
	})
	var ar admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(got.rec.Body.Bytes(), &ar))
	assert.JSONEq(t, `[{"op":"add","path":"/spec","value":{"seedName":"aws-eu2"}},
		{"op":"add","path":"/metadata/annotations","value":{"seedwarden.io/reservation":"`+testUID+`"}}]`, string(ar.Response.Patch))
	patched := applyPatch(t, object, ar.Response.Patch)
	assert.Equal(t, "aws-eu2", patched["spec"].(map[string]any)["seedName"])
}

// countingReader counts what is read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestMutatingHTTPHandlerBodyLimit(t *testing.T) {
	body := review{}.body()
	limit := int64(len(body))
	serve := func(t *testing.T, body string, contentLength int64) (*httptest.ResponseRecorder, int) {
		t.Helper()
		placer := &fakePlacer{decision: scheduled}
		h := NewMutatingHTTPHandler(newMutator(t, placer, nil), limit)
		cr := &countingReader{r: strings.NewReader(body)}
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/mutate-shoots", cr)
		req.Header.Set("Content-Type", "application/json")
		req.ContentLength = contentLength
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec, cr.n
	}

	t.Run("at the limit", func(t *testing.T) {
		rec, _ := serve(t, body, -1)
		assert.Equal(t, http.StatusOK, rec.Code)
		assert.Contains(t, rec.Body.String(), `"allowed":true`)
	})
	t.Run("Content-Length over the limit is not read", func(t *testing.T) {
		rec, read := serve(t, body+" ", limit+1)
		assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
		assert.Equal(t, fmt.Sprintf("request body of %d bytes exceeds the limit of %d bytes (server.maxRequestBytes)\n", limit+1, limit), rec.Body.String())
		assert.Zero(t, read)
	})
	t.Run("unknown length over the limit is read up to it", func(t *testing.T) {
		rec, read := serve(t, body+strings.Repeat(" ", 1<<20), -1)
		assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
		assert.Equal(t, fmt.Sprintf("request body exceeds the limit of %d bytes (server.maxRequestBytes)\n", limit), rec.Body.String())
		assert.LessOrEqual(t, read, int(limit)+1)
	})
}

// errReader fails after some bytes.
type errReader struct{ data string }

func (e *errReader) Read(p []byte) (int, error) {
	if e.data == "" {
		return 0, fmt.Errorf("connection reset")
	}
	n := copy(p, e.data)
	e.data = e.data[n:]
	return n, nil
}

func TestMutatingHTTPHandlerReadError(t *testing.T) {
	for name, mk := range map[string]func(*ShootMutator) http.Handler{
		"fast":               func(m *ShootMutator) http.Handler { return NewMutatingHTTPHandler(m, 0) },
		"controller-runtime": func(m *ShootMutator) http.Handler { return &webhook.Admission{Handler: m} },
		"oracle":             oracle,
	} {
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/mutate-shoots", &errReader{data: `{"kind":`})
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			mk(newMutator(t, &fakePlacer{decision: scheduled}, nil)).ServeHTTP(rec, req)
			assert.Equal(t, http.StatusOK, rec.Code)
			assert.Equal(t, `{"response":{"uid":"","allowed":false,"status":{"metadata":{},"message":"connection reset","code":400}}}`+"\n", rec.Body.String())
		})
	}
}

// panicPlacer panics in Place.
type panicPlacer struct{}

func (panicPlacer) Place(context.Context, *api.Shoot, placement.Options, string, string) (placement.Decision, error) {
	panic("boom")
}

func TestMutatingHTTPHandlerRecoversPanics(t *testing.T) {
	body := review{}.body()
	serve := func(h http.Handler) *httptest.ResponseRecorder {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/mutate-shoots", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	m := &ShootMutator{Placer: panicPlacer{}, SchedulerName: "default-scheduler", Log: logr.Discard()}
	before := testutil.ToFloat64(admissionmetrics.WebhookPanics)
	got := serve(NewMutatingHTTPHandler(m, 0))
	assert.Equal(t, before+1, testutil.ToFloat64(admissionmetrics.WebhookPanics))
	want := serve(oracle(m))
	assert.Equal(t, want.Code, got.Code)
	assert.Equal(t, want.Body.String(), got.Body.String())
	assert.Contains(t, got.Body.String(), `"message":"panic: boom [recovered]","code":500`)
	assert.Contains(t, got.Body.String(), `"uid":"`+testUID+`"`)
}

// webhook.Server wraps every registered http.Handler with controller-
// runtime's instrumentation, so the webhook metrics keep counting.
func TestMutatingHTTPHandlerKeepsWebhookMetrics(t *testing.T) {
	const path = "/mutate-shoots-metrics-test"
	srv := webhook.NewServer(webhook.Options{})
	srv.Register(path, NewMutatingHTTPHandler(newMutator(t, &fakePlacer{decision: scheduled}, nil), 0))
	for range 3 {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, path, strings.NewReader(review{}.body()))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.WebhookMux().ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code)
	}
	families, err := ctrlmetrics.Registry.Gather()
	require.NoError(t, err)
	found := map[string]bool{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["webhook"] != path {
				continue
			}
			switch f.GetName() {
			case "controller_runtime_webhook_requests_total":
				if labels["code"] == "200" {
					assert.Equal(t, 3.0, m.GetCounter().GetValue())
					found[f.GetName()] = true
				}
			case "controller_runtime_webhook_latency_seconds":
				assert.Equal(t, uint64(3), m.GetHistogram().GetSampleCount())
				found[f.GetName()] = true
			case "controller_runtime_webhook_requests_in_flight":
				found[f.GetName()] = true
			}
		}
	}
	assert.Len(t, found, 3, "%v", found)
}

// FuzzMutatingHTTPHandler: arbitrary bodies through the fast path and
// through webhook.Admission behind RequireAdmissionReviewV1: the fast path
// never panics and answers exactly as they do (an AdmissionReview, or an
// HTTP error). Run with e.g. -fuzz=FuzzMutatingHTTPHandler -fuzztime=60s.
func FuzzMutatingHTTPHandler(f *testing.F) {
	const shoot = `{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","metadata":{"name":"a","annotations":{"a":"b"}},"spec":{"region":"eu"}}`
	const target = `"kind":{"group":"core.gardener.cloud","version":"v1beta1","kind":"Shoot"},"resource":{"group":"core.gardener.cloud","version":"v1beta1","resource":"shoots"}`
	f.Add([]byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u",` + target + `,"operation":"CREATE","object":` + shoot + `}}`))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1beta1","request":{"uid":"u",` + target + `,"operation":"CREATE","dryRun":true,"object":{"metadata":{"annotations":{"seedwarden.io/placement":"x"}},"spec":{"region":"eu-x"}}}}`))
	f.Add([]byte(`{"request":{"uid":"u",` + target + `,"operation":"CREATE","object":{"metadata":{},"metadata":null,"spec":{"seedName":""}}}}`))
	f.Add([]byte(`{"Kind":"X","request":{"object":{},"object":null}}`))
	f.Add([]byte(`{"request":{"uid":"u",` + target + `,"operation":"UPDATE","object":[1],"oldObject":{}}}`))
	f.Add([]byte(`kind: AdmissionReview`))
	f.Add([]byte(`{"request":{"uid":"\u00e4","object":{"kind":"Shoot","sp\u0065c":{}}}}`))
	f.Add([]byte(``))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","APIVERSION":"admission.k8s.io/v1beta1","request":{"uid":"u"}}`))
	f.Add([]byte(`{"apiVersion":"/v1","kind":"Foo","request":{"uid":"u",` + target + `,"operation":"CREATE","object":` + shoot + `}}`))
	f.Add([]byte("apiVersion: admission.k8s.io/v1beta1\nkind: AdmissionReview\nrequest:\n  uid: u\n"))

	signer, err := placementtoken.NewSigner([][]byte{[]byte("0123456789abcdef0123456789abcdef")}, time.Minute,
		func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) })
	if err != nil {
		f.Fatal(err)
	}
	m := &ShootMutator{Placer: fuzzPlacer{}, Options: placement.Options{Strategy: placement.SameRegion}, Signer: signer}
	fast := NewMutatingHTTPHandler(m, 8<<20)
	// Behind a plain http.Handler, so that webhook.Admission decodes the
	// review itself (RequireAdmissionReviewV1 decodes one for a
	// *webhook.Admission).
	slow := RequireAdmissionReviewV1(http.HandlerFunc((&webhook.Admission{Handler: m}).WithRecoverPanic(false).ServeHTTP))

	f.Fuzz(func(t *testing.T, body []byte) {
		serve := func(h http.Handler) *httptest.ResponseRecorder {
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/mutate-shoots", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec
		}
		got, want := serve(fast), serve(slow)
		if got.Code != want.Code || got.Body.String() != want.Body.String() || !reflect.DeepEqual(got.Header(), want.Header()) {
			t.Fatalf("fast path answers %d %v %q, webhook.Admission %d %v %q", got.Code, got.Header(), got.Body, want.Code, want.Header(), want.Body)
		}
		if got.Code != http.StatusOK {
			return
		}
		var ar admissionv1.AdmissionReview
		if err := json.Unmarshal(got.Body.Bytes(), &ar); err != nil || ar.Response == nil {
			t.Fatalf("not an AdmissionReview response (%v): %s", err, got.Body)
		}
		if !ar.Response.Allowed && (ar.Response.Result == nil || ar.Response.Result.Message == "") {
			t.Fatalf("rejection without a message: %s", got.Body)
		}
	})
}

// benchPlacer places every Shoot on one seed without recording anything.
type benchPlacer struct{}

func (benchPlacer) Place(context.Context, *api.Shoot, placement.Options, string, string) (placement.Decision, error) {
	return placement.Decision{Seed: "aws-eu2", Tied: []string{"aws-eu2"}, Usage: 4, Total: 1000}, nil
}

// realisticReview is a CREATE review of about 9.5 KB, the size of
// hack/httpbench's: a Shoot with thirteen worker pools, labels, annotations and
// managedFields.
func realisticReview(tb testing.TB) []byte {
	tb.Helper()
	var obj map[string]any
	require.NoError(tb, json.Unmarshal([]byte(shootJSON(`"annotations": {"gardener.cloud/created-by": "alice@example.com", "dashboard.gardener.cloud/no-hibernation-schedule": "true", "shoot.gardener.cloud/cleanup-extended-apis-finalize-grace-period-seconds": "30", "custom.shoot.sapcloud.io/allow-multi-zone": "true"},`, "")), &obj))
	spec := obj["spec"].(map[string]any)
	provider := spec["provider"].(map[string]any)
	workers := provider["workers"].([]any)
	for i := range 12 {
		w := map[string]any{}
		for k, v := range workers[0].(map[string]any) {
			w[k] = v
		}
		w["name"] = fmt.Sprintf("pool-%d", i)
		workers = append(workers, w)
	}
	provider["workers"] = workers
	meta := obj["metadata"].(map[string]any)
	meta["managedFields"] = append(meta["managedFields"].([]any), map[string]any{
		"manager": "gardener-dashboard", "operation": "Update", "apiVersion": "core.gardener.cloud/v1beta1",
		"time": "2026-05-04T09:12:44Z", "fieldsType": "FieldsV1",
		"fieldsV1": map[string]any{"f:metadata": map[string]any{"f:annotations": map[string]any{".": map[string]any{}, "f:gardener.cloud/created-by": map[string]any{}}},
			"f:spec": map[string]any{"f:addons": map[string]any{".": map[string]any{}, "f:kubernetesDashboard": map[string]any{".": map[string]any{}, "f:enabled": map[string]any{}}},
				"f:kubernetes": map[string]any{".": map[string]any{}, "f:version": map[string]any{}}, "f:maintenance": map[string]any{".": map[string]any{}, "f:autoUpdate": map[string]any{}},
				"f:networking": map[string]any{".": map[string]any{}, "f:nodes": map[string]any{}, "f:type": map[string]any{}}, "f:purpose": map[string]any{}, "f:region": map[string]any{}}},
	})
	raw, err := json.Marshal(obj)
	require.NoError(tb, err)
	return []byte(review{object: string(raw)}.body())
}

// BenchmarkMutatingHTTPHandler: the same realistic CREATE review through
// the fast path and through controller-runtime's webhook.Admission, in
// process (httptest, no TLS, no network), with a placer that costs nothing:
// what is left is reading, decoding, deciding the patch, signing and
// encoding. Run with -benchmem.
func BenchmarkMutatingHTTPHandler(b *testing.B) {
	body := realisticReview(b)
	signer, err := placementtoken.NewSigner([][]byte{[]byte("0123456789abcdef0123456789abcdef")}, time.Minute, nil)
	require.NoError(b, err)
	newM := func() *ShootMutator {
		return &ShootMutator{
			Placer: benchPlacer{}, Options: placement.Options{Strategy: placement.MinimalDistance},
			SchedulerName: "default-scheduler", Signer: signer,
			Metrics: metrics.New(prometheus.NewRegistry()), Log: logr.Discard(),
		}
	}
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{
		{"fast", NewMutatingHTTPHandler(newM(), 3<<20)},
		{"controller-runtime", &webhook.Admission{Handler: newM()}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			ctx := context.Background()
			for b.Loop() {
				req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mutate-shoots", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				bc.h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(`"patchType":"JSONPatch"`)) {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
