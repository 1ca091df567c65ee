package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

const testUID = "705ab4f5-6393-11e8-b7cc-42010a800002"

// fakePlacer records calls and returns a canned Decision; placement itself is
// tested in internal/placement.
type fakePlacer struct {
	decision placement.Decision

	mu    sync.Mutex
	calls []placeCall
}

type placeCall struct {
	shoot *api.Shoot
	opts  placement.Options
	key   string
}

func (f *fakePlacer) Place(_ context.Context, shoot *api.Shoot, opts placement.Options, key string) (placement.Decision, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, placeCall{shoot: shoot.DeepCopy(), opts: opts, key: key})
	return f.decision, nil
}

func (f *fakePlacer) Calls() []placeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]placeCall(nil), f.calls...)
}

var scheduled = placement.Decision{Seed: "aws-eu2", Tied: []string{"aws-eu2"}, Usage: 4, Total: 3}

var unschedulable = placement.Decision{
	Step:    placement.StepCandidates,
	Message: "no matching seed candidate found",
	Reasons: map[string]string{
		"aws-eu1": "taints not tolerated",
		"aws-eu2": "no capacity",
		"gcp-eu1": "provider type does not match",
	},
	Total: 3,
}

// shootJSON is a realistic Shoot as the API server sends it, with many fields
// api.Shoot does not model. meta and spec are spliced in at the start of
// metadata and spec, each as `"key": value,` fragments.
func shootJSON(meta, spec string) string {
	return `{
  "apiVersion": "core.gardener.cloud/v1beta1",
  "kind": "Shoot",
  "metadata": {` + meta + `
    "name": "crazy-botany",
    "namespace": "garden-dev",
    "creationTimestamp": null,
    "labels": {"team": "platform", "shoot.gardener.cloud/status": "unknown"},
    "managedFields": [{
      "manager": "kubectl-client-side-apply",
      "operation": "Update",
      "apiVersion": "core.gardener.cloud/v1beta1",
      "time": "2025-05-04T10:00:00Z",
      "fieldsType": "FieldsV1",
      "fieldsV1": {"f:spec": {"f:region": {}, "f:provider": {".": {}, "f:type": {}}}}
    }]
  },
  "spec": {` + spec + `
    "cloudProfile": {"kind": "CloudProfile", "name": "aws"},
    "region": "eu-west-1",
    "credentialsBindingName": "my-aws-account",
    "purpose": "evaluation",
    "provider": {
      "type": "aws",
      "infrastructureConfig": {
        "apiVersion": "aws.provider.extensions.gardener.cloud/v1alpha1",
        "kind": "InfrastructureConfig",
        "networks": {"vpc": {"cidr": "10.250.0.0/16"}, "zones": [
          {"name": "eu-west-1a", "internal": "10.250.112.0/22", "public": "10.250.96.0/22", "workers": "10.250.0.0/19"}
        ]}
      },
      "controlPlaneConfig": {"apiVersion": "aws.provider.extensions.gardener.cloud/v1alpha1", "kind": "ControlPlaneConfig"},
      "workers": [{
        "name": "worker-k3x9q",
        "minimum": 1, "maximum": 3, "maxSurge": 1, "maxUnavailable": 0,
        "machine": {"type": "m5.large", "image": {"name": "gardenlinux", "version": "1592.1.0"}, "architecture": "amd64"},
        "volume": {"type": "gp3", "size": "50Gi"},
        "cri": {"name": "containerd"},
        "zones": ["eu-west-1a"],
        "labels": {"pool": "default"},
        "taints": [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
      }],
      "workersSettings": {"sshAccess": {"enabled": false}}
    },
    "networking": {"type": "calico", "nodes": "10.250.0.0/16", "ipFamilies": ["IPv4"],
      "providerConfig": {"apiVersion": "calico.networking.extensions.gardener.cloud/v1alpha1", "kind": "NetworkConfig", "overlay": {"enabled": false}}},
    "kubernetes": {"version": "1.33.2", "enableStaticTokenKubeconfig": false,
      "kubeAPIServer": {"requests": {"maxNonMutatingInflight": 400}, "enableAnonymousAuthentication": false},
      "kubelet": {"failSwapOn": true}},
    "maintenance": {"autoUpdate": {"kubernetesVersion": true, "machineImageVersion": true},
      "timeWindow": {"begin": "220000+0100", "end": "230000+0100"}},
    "hibernation": {"schedules": [{"start": "00 17 * * 1,2,3,4,5", "location": "Europe/Berlin"}]},
    "addons": {"kubernetesDashboard": {"enabled": false}, "nginxIngress": {"enabled": false}},
    "extensions": [{"type": "shoot-dns-service", "providerConfig": {"apiVersion": "service.dns.extensions.gardener.cloud/v1alpha1", "kind": "DNSConfig", "syncProvidersFromShootSpecDNS": true}}],
    "dns": {"domain": "crazy-botany.dev.shoot.example.com"},
    "tolerations": [{"key": "seed.gardener.cloud/protected"}, {"key": "team", "value": "platform"}],
    "controlPlane": {"highAvailability": {"failureTolerance": {"type": "zone"}}},
    "accessRestrictions": [{"name": "eu-access-only", "options": {"support.gardener.cloud/eu-access-for-cluster-addons": "true"}}],
    "resources": [{"name": "audit-policy", "resourceRef": {"apiVersion": "v1", "kind": "ConfigMap", "name": "audit-policy"}}],
    "systemComponents": {"coreDNS": {"autoscaling": {"mode": "horizontal"}}}
  },
  "status": {}
}`
}

// review describes an admission.k8s.io AdmissionReview request body.
type review struct {
	apiVersion  string // default admission.k8s.io/v1
	uid         string
	kind        string // "group/version/Kind", default the Shoot's
	resource    string // "group/version/resource", default shoots
	subResource string
	operation   string // default CREATE
	dryRun      bool
	object      string // raw JSON; default shootJSON("", "")
}

func gvk(s string) (string, string, string) {
	p := strings.SplitN(s, "/", 3)
	for len(p) < 3 {
		p = append(p, "")
	}
	return p[0], p[1], p[2]
}

func (r review) body() string {
	if r.apiVersion == "" {
		r.apiVersion = "admission.k8s.io/v1"
	}
	if r.uid == "" {
		r.uid = testUID
	}
	if r.kind == "" {
		r.kind = "core.gardener.cloud/v1beta1/Shoot"
	}
	if r.resource == "" {
		r.resource = "core.gardener.cloud/v1beta1/shoots"
	}
	if r.operation == "" {
		r.operation = "CREATE"
	}
	if r.object == "" {
		r.object = shootJSON("", "")
	}
	kg, kv, kk := gvk(r.kind)
	rg, rv, rr := gvk(r.resource)
	return fmt.Sprintf(`{
  "kind": "AdmissionReview",
  "apiVersion": %q,
  "request": {
    "uid": %q,
    "kind": {"group": %q, "version": %q, "kind": %q},
    "resource": {"group": %q, "version": %q, "resource": %q},
    "subResource": %q,
    "requestKind": {"group": %[3]q, "version": %[4]q, "kind": %[5]q},
    "requestResource": {"group": %[6]q, "version": %[7]q, "resource": %[8]q},
    "name": "crazy-botany",
    "namespace": "garden-dev",
    "operation": %[10]q,
    "userInfo": {"username": "jane.doe@example.com", "uid": "4f1e", "groups": ["system:authenticated", "garden-dev-admins"]},
    "object": %[11]s,
    "oldObject": null,
    "dryRun": %[12]t,
    "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "kubectl-client-side-apply", "fieldValidation": "Strict"}
  }
}`, r.apiVersion, r.uid, kg, kv, kk, rg, rv, rr, r.subResource, r.operation, r.object, r.dryRun)
}

// serve sends body through controller-runtime's webhook as the API server
// would and returns the AdmissionReview it answers with.
func serve(t testing.TB, h *ShootMutator, ctx context.Context, body string) (*http.Response, admissionv1.AdmissionReview) {
	t.Helper()
	wh := (&webhook.Admission{Handler: h}).WithRecoverPanic(false)
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mutate-shoots", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	wh.ServeHTTP(rec, req)
	var out admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), "response: %s", rec.Body.String())
	require.NotNil(t, out.Response, "response: %s", rec.Body.String())
	return rec.Result(), out
}

// applyPatch applies a response's JSON patch to the original object.
func applyPatch(t testing.TB, object string, patch []byte) map[string]any {
	t.Helper()
	p, err := jsonpatch.DecodePatch(patch)
	require.NoError(t, err)
	patched, err := p.Apply([]byte(object))
	require.NoError(t, err, "patch %s", patch)
	var out map[string]any
	require.NoError(t, json.Unmarshal(patched, &out))
	return out
}

func decodeJSON(t testing.TB, s string) map[string]any {
	t.Helper()
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &out), s)
	return out
}

func newMutator(t *testing.T, p Placer, reg prometheus.Registerer) *ShootMutator {
	return &ShootMutator{
		Placer:        p,
		Options:       placement.Options{Strategy: placement.MinimalDistance, NetworkMode: placement.Disjoint},
		SchedulerName: "default-scheduler",
		Metrics:       metrics.New(reg),
		Log:           testr.NewWithOptions(t, testr.Options{Verbosity: 1}),
	}
}

func TestShootMutatorPlaces(t *testing.T) {
	withSeed := func(object map[string]any, seed string) map[string]any {
		object["spec"].(map[string]any)["seedName"] = seed
		return object
	}
	withAnnotations := func(object map[string]any, annotations map[string]any) map[string]any {
		object["metadata"].(map[string]any)["annotations"] = annotations
		return object
	}
	createdBy := `"annotations": {"gardener.cloud/created-by": "jane.doe@example.com"},`

	tests := []struct {
		name      string
		review    review
		wantKey   string
		wantPatch string
		want      func() map[string]any
	}{{
		name:    "annotations present",
		review:  review{object: shootJSON(createdBy, "")},
		wantKey: testUID,
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations/seedwarden.io~1reservation","value":"` + testUID + `"}]`,
		want: func() map[string]any {
			o := withSeed(decodeJSON(t, shootJSON("", "")), "aws-eu2")
			return withAnnotations(o, map[string]any{"gardener.cloud/created-by": "jane.doe@example.com", cache.AnnotationReservation: testUID})
		},
	}, {
		name:    "annotations absent",
		review:  review{},
		wantKey: testUID,
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations","value":{"seedwarden.io/reservation":"` + testUID + `"}}]`,
		want: func() map[string]any {
			return withAnnotations(withSeed(decodeJSON(t, shootJSON("", "")), "aws-eu2"), map[string]any{cache.AnnotationReservation: testUID})
		},
	}, {
		name:    "annotations empty",
		review:  review{object: shootJSON(`"annotations": {},`, "")},
		wantKey: testUID,
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations/seedwarden.io~1reservation","value":"` + testUID + `"}]`,
		want: func() map[string]any {
			return withAnnotations(withSeed(decodeJSON(t, shootJSON("", "")), "aws-eu2"), map[string]any{cache.AnnotationReservation: testUID})
		},
	}, {
		name:    "annotations null",
		review:  review{object: shootJSON(`"annotations": null,`, "")},
		wantKey: testUID,
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations","value":{"seedwarden.io/reservation":"` + testUID + `"}}]`,
		want: func() map[string]any {
			return withAnnotations(withSeed(decodeJSON(t, shootJSON("", "")), "aws-eu2"), map[string]any{cache.AnnotationReservation: testUID})
		},
	}, {
		name:    "user-written reservation annotation is overwritten",
		review:  review{object: shootJSON(`"annotations": {"seedwarden.io/reservation": "forged"},`, "")},
		wantKey: testUID,
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations/seedwarden.io~1reservation","value":"` + testUID + `"}]`,
		want: func() map[string]any {
			return withAnnotations(withSeed(decodeJSON(t, shootJSON("", "")), "aws-eu2"), map[string]any{cache.AnnotationReservation: testUID})
		},
	}, {
		name:    "empty seedName is replaced",
		review:  review{object: shootJSON("", `"seedName": "",`)},
		wantKey: testUID,
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations","value":{"seedwarden.io/reservation":"` + testUID + `"}}]`,
		want: func() map[string]any {
			return withAnnotations(withSeed(decodeJSON(t, shootJSON("", "")), "aws-eu2"), map[string]any{cache.AnnotationReservation: testUID})
		},
	}, {
		name:    "our schedulerName",
		review:  review{object: shootJSON("", `"schedulerName": "default-scheduler",`)},
		wantKey: testUID,
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations","value":{"seedwarden.io/reservation":"` + testUID + `"}}]`,
		want: func() map[string]any {
			o := withSeed(decodeJSON(t, shootJSON("", `"schedulerName": "default-scheduler",`)), "aws-eu2")
			return withAnnotations(o, map[string]any{cache.AnnotationReservation: testUID})
		},
	}, {
		name:      "dry-run reserves nothing",
		review:    review{dryRun: true, object: shootJSON(createdBy, "")},
		wantKey:   "",
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"}]`,
		want: func() map[string]any {
			return withSeed(decodeJSON(t, shootJSON(createdBy, "")), "aws-eu2")
		},
	}, {
		name:    "admission.k8s.io/v1beta1 review",
		review:  review{apiVersion: "admission.k8s.io/v1beta1"},
		wantKey: testUID,
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations","value":{"seedwarden.io/reservation":"` + testUID + `"}}]`,
		want: func() map[string]any {
			return withAnnotations(withSeed(decodeJSON(t, shootJSON("", "")), "aws-eu2"), map[string]any{cache.AnnotationReservation: testUID})
		},
	}, {
		name:    "no spec, no metadata",
		review:  review{object: `{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot"}`},
		wantKey: testUID,
		wantPatch: `[{"op":"add","path":"/spec","value":{"seedName":"aws-eu2"}},
			{"op":"add","path":"/metadata","value":{"annotations":{"seedwarden.io/reservation":"` + testUID + `"}}}]`,
		want: func() map[string]any {
			return decodeJSON(t, `{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
				"spec": {"seedName": "aws-eu2"}, "metadata": {"annotations": {"seedwarden.io/reservation": "`+testUID+`"}}}`)
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			placer := &fakePlacer{decision: scheduled}
			m := newMutator(t, placer, prometheus.NewRegistry())
			httpResp, ar := serve(t, m, t.Context(), tt.review.body())
			resp := ar.Response

			assert.Equal(t, http.StatusOK, httpResp.StatusCode)
			wantAPIVersion := tt.review.apiVersion
			if wantAPIVersion == "" {
				wantAPIVersion = "admission.k8s.io/v1"
			}
			assert.Equal(t, wantAPIVersion, ar.APIVersion)
			assert.Equal(t, testUID, string(resp.UID))
			assert.True(t, resp.Allowed)
			require.NotNil(t, resp.PatchType)
			assert.Equal(t, admissionv1.PatchTypeJSONPatch, *resp.PatchType)
			assert.JSONEq(t, tt.wantPatch, string(resp.Patch))
			assert.Empty(t, resp.Warnings)

			object := tt.review.object
			if object == "" {
				object = shootJSON("", "")
			}
			assert.Equal(t, tt.want(), applyPatch(t, object, resp.Patch))

			calls := placer.Calls()
			require.Len(t, calls, 1)
			assert.Equal(t, tt.wantKey, calls[0].key)
			assert.Equal(t, m.Options, calls[0].opts)
		})
	}
}

// The Placer sees the Shoot as the API server sent it.
func TestShootMutatorDecodesShoot(t *testing.T) {
	placer := &fakePlacer{decision: scheduled}
	m := newMutator(t, placer, nil)
	_, ar := serve(t, m, t.Context(), review{}.body())
	require.True(t, ar.Response.Allowed)

	calls := placer.Calls()
	require.Len(t, calls, 1)
	s := calls[0].shoot
	assert.Equal(t, "crazy-botany", s.Name)
	assert.Equal(t, "garden-dev", s.Namespace)
	assert.Equal(t, "eu-west-1", s.Spec.Region)
	assert.Equal(t, &api.CloudProfileReference{Kind: "CloudProfile", Name: "aws"}, s.Spec.CloudProfile)
	assert.Equal(t, "aws", s.Spec.Provider.Type)
	require.Len(t, s.Spec.Provider.Workers, 1)
	assert.Equal(t, []string{"eu-west-1a"}, s.Spec.Provider.Workers[0].Zones)
	require.NotNil(t, s.Spec.Networking)
	assert.Equal(t, "10.250.0.0/16", *s.Spec.Networking.Nodes)
	assert.Equal(t, []string{"IPv4"}, s.Spec.Networking.IPFamilies)
	assert.Equal(t, "evaluation", *s.Spec.Purpose)
	assert.Len(t, s.Spec.Tolerations, 2)
	assert.Equal(t, "zone", s.Spec.ControlPlane.HighAvailability.FailureTolerance.Type)
	assert.Equal(t, "eu-access-only", s.Spec.AccessRestrictions[0].Name)
	assert.Equal(t, "crazy-botany.dev.shoot.example.com", *s.Spec.DNS.Domain)
	assert.Nil(t, s.Spec.SeedName)
}

func TestShootMutatorDoesNotPlace(t *testing.T) {
	tests := []struct {
		name        string
		review      review
		body        string // overrides review
		wantAllowed bool
		wantCode    int32
		wantMessage string // substring
	}{{
		name:        "already seeded",
		review:      review{object: shootJSON("", `"seedName": "gcp-eu1",`)},
		wantAllowed: true, wantCode: http.StatusOK, wantMessage: `spec.seedName already set to "gcp-eu1"`,
	}, {
		name:        "foreign schedulerName",
		review:      review{object: shootJSON("", `"schedulerName": "custom-scheduler",`)},
		wantAllowed: true, wantCode: http.StatusOK, wantMessage: `spec.schedulerName "custom-scheduler" is not ours`,
	}, {
		name:        "update",
		review:      review{operation: "UPDATE"},
		wantAllowed: true, wantCode: http.StatusOK, wantMessage: `not a create (operation "UPDATE")`,
	}, {
		name:        "delete",
		review:      review{operation: "DELETE", object: "null"},
		wantAllowed: true, wantCode: http.StatusOK, wantMessage: `not a create (operation "DELETE")`,
	}, {
		name:     "wrong kind",
		review:   review{kind: "core.gardener.cloud/v1beta1/Seed", resource: "core.gardener.cloud/v1beta1/seeds"},
		wantCode: http.StatusBadRequest, wantMessage: `expected kind core.gardener.cloud/v1beta1 Shoot, got "core.gardener.cloud/v1beta1, Kind=Seed" (operation "CREATE")`,
	}, {
		name:     "wrong kind version",
		review:   review{kind: "core.gardener.cloud/v1/Shoot"},
		wantCode: http.StatusBadRequest, wantMessage: `got "core.gardener.cloud/v1, Kind=Shoot"`,
	}, {
		name:     "wrong resource",
		review:   review{resource: "core.gardener.cloud/v1beta1/seeds"},
		wantCode: http.StatusBadRequest, wantMessage: `expected resource shoots in group core.gardener.cloud without subresource, got "seeds" in group "core.gardener.cloud"`,
	}, {
		name:     "binding subresource",
		review:   review{subResource: "binding"},
		wantCode: http.StatusBadRequest, wantMessage: `got "shoots/binding"`,
	}, {
		name:     "status subresource on update",
		review:   review{subResource: "status", operation: "UPDATE"},
		wantCode: http.StatusBadRequest, wantMessage: `got "shoots/status" in group "core.gardener.cloud" (operation "UPDATE")`,
	}, {
		name:     "missing request",
		body:     `{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1"}`,
		wantCode: http.StatusBadRequest, wantMessage: `expected kind core.gardener.cloud/v1beta1 Shoot, got "/, Kind=" (operation "")`,
	}, {
		name:     "missing uid",
		body:     strings.Replace(review{}.body(), `"uid": "`+testUID+`"`, `"uid": ""`, 1),
		wantCode: http.StatusBadRequest, wantMessage: "admission request has no uid",
	}, {
		name:     "empty object",
		review:   review{object: "null"},
		wantCode: http.StatusBadRequest, wantMessage: "admission request carries no object",
	}, {
		name:     "no object",
		body:     strings.Replace(review{}.body(), `"object": `, `"objectX": `, 1),
		wantCode: http.StatusBadRequest, wantMessage: "admission request carries no object",
	}, {
		name:     "object of wrong kind",
		review:   review{object: `{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed", "metadata": {"name": "aws-eu1"}, "spec": {}}`},
		wantCode: http.StatusBadRequest, wantMessage: `object has kind "Seed", expected "Shoot"`,
	}, {
		name:     "object of wrong apiVersion",
		review:   review{object: strings.Replace(shootJSON("", ""), "core.gardener.cloud/v1beta1", "core.gardener.cloud/v1", 1)},
		wantCode: http.StatusBadRequest, wantMessage: `object has apiVersion "core.gardener.cloud/v1", expected "core.gardener.cloud/v1beta1"`,
	}, {
		name:     "object not an object",
		review:   review{object: `"crazy-botany"`},
		wantCode: http.StatusBadRequest, wantMessage: "cannot decode object as a Shoot: json: cannot unmarshal string",
	}, {
		name:     "object field of wrong type",
		review:   review{object: `{"kind": "Shoot", "spec": {"seedName": 42}}`},
		wantCode: http.StatusBadRequest, wantMessage: "cannot decode object as a Shoot",
	}, {
		name:     "malformed JSON body",
		body:     `{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": {"uid": `,
		wantCode: http.StatusBadRequest, wantMessage: "unexpected end of JSON input",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			placer := &fakePlacer{decision: scheduled}
			m := newMutator(t, placer, nil)
			body := tt.body
			if body == "" {
				body = tt.review.body()
			}
			httpResp, ar := serve(t, m, t.Context(), body)
			resp := ar.Response

			assert.Equal(t, http.StatusOK, httpResp.StatusCode, "errors travel inside the AdmissionReview")
			assert.Equal(t, tt.wantAllowed, resp.Allowed)
			require.NotNil(t, resp.Result)
			assert.Equal(t, tt.wantCode, resp.Result.Code)
			assert.Contains(t, resp.Result.Message, tt.wantMessage)
			assert.Nil(t, resp.PatchType)
			assert.Empty(t, resp.Patch)
			assert.Empty(t, resp.Warnings)
			assert.Empty(t, placer.Calls())
		})
	}
}

func TestShootMutatorUnschedulable(t *testing.T) {
	long := placement.Decision{Total: 2000, Reasons: map[string]string{}}
	for i := range 2000 {
		// Distinct reasons: the summary groups seeds sharing one.
		long.Reasons[fmt.Sprintf("seed-%04d", i)] = fmt.Sprintf("taints not tolerated: «dedicated-%d»", i)
	}
	tests := []struct {
		name     string
		decision placement.Decision
		dryRun   bool
		want     func(t *testing.T, w string)
	}{{
		name:     "per-seed reasons",
		decision: unschedulable,
		want: func(t *testing.T, w string) {
			assert.Equal(t, "seedwarden: no seed fits this Shoot; it stays pending: "+
				"0/3 seeds eligible: aws-eu1: taints not tolerated, aws-eu2: no capacity, gcp-eu1: provider type does not match", w)
		},
	}, {
		name:     "dry-run",
		decision: unschedulable,
		dryRun:   true,
		want: func(t *testing.T, w string) {
			assert.True(t, strings.HasPrefix(w, UnschedulableWarningPrefix+"0/3 seeds eligible: aws-eu1"), w)
		},
	}, {
		name: "message without reasons, with control characters",
		decision: placement.Decision{Step: placement.StepStrategy, Total: 7,
			Message: "region config \"eu\": yaml: line 2:\n\tmapping values are not allowed"},
		want: func(t *testing.T, w string) {
			assert.Equal(t, UnschedulableWarningPrefix+
				`0/7 seeds eligible: region config "eu": yaml: line 2:  mapping values are not allowed`, w)
		},
	}, {
		name:     "truncated on a rune boundary",
		decision: long,
		want: func(t *testing.T, w string) {
			assert.Equal(t, maxWarningRunes, utf8.RuneCountInString(w))
			assert.True(t, utf8.ValidString(w))
			assert.True(t, strings.HasSuffix(w, "…"))
			assert.True(t, strings.HasPrefix(w, UnschedulableWarningPrefix+"0/2000 seeds eligible: seed-0000: taints"))
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			placer := &fakePlacer{decision: tt.decision}
			m := newMutator(t, placer, nil)
			_, ar := serve(t, m, t.Context(), review{dryRun: tt.dryRun}.body())
			resp := ar.Response

			assert.True(t, resp.Allowed)
			assert.Nil(t, resp.PatchType)
			assert.Empty(t, resp.Patch)
			require.Len(t, resp.Warnings, 1)
			tt.want(t, resp.Warnings[0])
			assertValidWarning(t, resp.Warnings[0])

			calls := placer.Calls()
			require.Len(t, calls, 1)
			if tt.dryRun {
				assert.Empty(t, calls[0].key)
			} else {
				assert.Equal(t, testUID, calls[0].key)
			}
		})
	}
}

func assertValidWarning(t testing.TB, w string) {
	t.Helper()
	assert.True(t, utf8.ValidString(w), "warning not UTF-8: %q", w)
	assert.LessOrEqual(t, utf8.RuneCountInString(w), maxWarningRunes)
	assert.False(t, strings.ContainsFunc(w, unicode.IsControl), "control character in warning %q", w)
}

func TestShootMutatorContextDone(t *testing.T) {
	placer := &fakePlacer{decision: scheduled}
	m := newMutator(t, placer, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, ar := serve(t, m, ctx, review{}.body())
	assert.False(t, ar.Response.Allowed)
	assert.Equal(t, int32(http.StatusServiceUnavailable), ar.Response.Result.Code)
	assert.Contains(t, ar.Response.Result.Message, "context canceled")
	assert.Empty(t, placer.Calls())
}

func TestShootMutatorNoPlacer(t *testing.T) {
	m := newMutator(t, nil, nil)
	_, ar := serve(t, m, t.Context(), review{}.body())
	assert.False(t, ar.Response.Allowed)
	assert.Equal(t, int32(http.StatusInternalServerError), ar.Response.Result.Code)
}

func TestShootMutatorMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	scheduler := &fakePlacer{decision: scheduled}
	m := newMutator(t, scheduler, reg)
	serve(t, m, t.Context(), review{}.body())
	serve(t, m, t.Context(), review{dryRun: true}.body())
	serve(t, m, t.Context(), review{object: shootJSON("", `"seedName": "gcp-eu1",`)}.body())
	serve(t, m, t.Context(), review{kind: "core.gardener.cloud/v1beta1/Seed"}.body())
	m.Placer = &fakePlacer{decision: unschedulable}
	serve(t, m, t.Context(), review{}.body())

	// Metrics may be nil.
	m.Metrics = nil
	serve(t, m, t.Context(), review{}.body())

	families, err := reg.Gather()
	require.NoError(t, err)
	counts := map[string]float64{}
	var observations uint64
	for _, f := range families {
		switch f.GetName() {
		case metrics.DecisionsTotalName:
			for _, mt := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range mt.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				assert.Equal(t, "MinimalDistance", labels["strategy"])
				counts[labels["result"]] = mt.GetCounter().GetValue()
			}
		case metrics.DurationName:
			observations = f.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	assert.Equal(t, map[string]float64{
		metrics.ResultScheduled:     2,
		metrics.ResultSkipped:       1,
		metrics.ResultError:         1,
		metrics.ResultUnschedulable: 1,
	}, counts)
	assert.Equal(t, uint64(5), observations)
}

func TestWarning(t *testing.T) {
	assert.Equal(t, "a b\uFFFDc", warning("a\nb\xffc"))
	s := strings.Repeat("ä", maxWarningRunes)
	assert.Equal(t, s, warning(s))
	w := warning(s + "x")
	assert.Equal(t, maxWarningRunes, utf8.RuneCountInString(w))
	assert.Equal(t, strings.Repeat("ä", maxWarningRunes-1)+"…", w)
}

func TestEscapeJSONPointer(t *testing.T) {
	assert.Equal(t, "seedwarden.io~1reservation", escapeJSONPointer(cache.AnnotationReservation))
	assert.Equal(t, "a~0b~1c", escapeJSONPointer("a~b/c"))
}

// fuzzPlacer schedules most Shoots but declares those in regions ending in
// "x" unschedulable, with reasons built from Shoot fields, so warnings carry
// arbitrary input.
type fuzzPlacer struct{}

func (fuzzPlacer) Place(_ context.Context, shoot *api.Shoot, _ placement.Options, _ string) (placement.Decision, error) {
	if strings.HasSuffix(shoot.Spec.Region, "x") {
		return placement.Decision{Total: 2, Message: shoot.Spec.Region, Reasons: map[string]string{
			shoot.Name: shoot.Spec.Region, shoot.Spec.Provider.Type: shoot.Namespace,
		}}, nil
	}
	return placement.Decision{Seed: "fuzz-seed", Tied: []string{"fuzz-seed"}, Total: 1}, nil
}

// FuzzShootMutator: run with e.g. -fuzz=FuzzShootMutator -fuzztime=60s
// -fuzzminimizetime=5s; the seeds are kept small because minimizing a large
// input eats the whole default minimization budget (60s) without fuzzing.
func FuzzShootMutator(f *testing.F) {
	const shoot = `{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","metadata":{"name":"a","annotations":{"a":"b"}},"spec":{"region":"eu"}}`
	f.Add([]byte(shoot), []byte(`{"request":{"uid":"u","kind":{"group":"core.gardener.cloud","version":"v1beta1","kind":"Shoot"},`+
		`"resource":{"group":"core.gardener.cloud","version":"v1beta1","resource":"shoots"},"operation":"CREATE","object":`+shoot+`}}`))
	f.Add([]byte(`{"metadata":{"Annotations":{}},"spec":null}`), []byte(`{"request":{"object":{"kind":"Shoot"},"dryRun":true}}`))
	f.Add([]byte(`{"spec":{"region":"eu-x","seedName":""},"metadata":{"name":"n\u0007"}}`), []byte(`{"request":{"object":{}}}`))
	f.Add([]byte(`null`), []byte(`{`))

	signer, err := placementtoken.NewSigner([][]byte{[]byte("0123456789abcdef0123456789abcdef")}, time.Minute, nil)
	if err != nil {
		f.Fatal(err)
	}
	m := &ShootMutator{Placer: fuzzPlacer{}, Options: placement.Options{Strategy: placement.SameRegion}, Signer: signer}
	wh := (&webhook.Admission{Handler: m}).WithRecoverPanic(false)

	f.Fuzz(func(t *testing.T, object, body []byte) {
		// The object straight into the handler: any bytes.
		for _, dryRun := range []bool{false, true} {
			req := webhook.AdmissionRequest{AdmissionRequest: admissionv1.AdmissionRequest{
				UID:       testUID,
				Kind:      metaGVK("core.gardener.cloud", "v1beta1", "Shoot"),
				Resource:  metaGVR("core.gardener.cloud", "v1beta1", "shoots"),
				Operation: admissionv1.Create,
				DryRun:    &dryRun,
			}}
			req.Object.Raw = object
			checkResponse(t, object, wh.Handle(t.Context(), req).AdmissionResponse)
		}

		// The object inside a real review, when it can be embedded.
		if json.Valid(object) {
			_, ar := serveFuzz(t, wh, review{object: string(object)}.body())
			if ar.Response != nil && !bytes.Equal(bytes.TrimSpace(object), []byte("null")) {
				checkResponse(t, object, *ar.Response)
			}
		}

		// Arbitrary bytes as the whole body.
		serveFuzz(t, wh, string(body))
	})
}

func serveFuzz(t *testing.T, wh *webhook.Admission, body string) (*http.Response, admissionv1.AdmissionReview) {
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/mutate-shoots", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	wh.ServeHTTP(rec, req)
	var ar admissionv1.AdmissionReview
	if rec.Code != http.StatusOK {
		return rec.Result(), ar // an HTTP error is an acceptable answer
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &ar); err != nil || ar.Response == nil {
		t.Fatalf("not an AdmissionReview response (%v): %s", err, rec.Body.String())
	}
	if !ar.Response.Allowed && (ar.Response.Result == nil || ar.Response.Result.Message == "") {
		t.Fatalf("rejection without a message: %s", rec.Body.String())
	}
	return rec.Result(), ar
}

// checkResponse asserts the invariants of any answer for object: errors say
// why; a patch applies to the object and places it; warnings survive the
// API server.
func checkResponse(t *testing.T, object []byte, resp admissionv1.AdmissionResponse) {
	t.Helper()
	for _, w := range resp.Warnings {
		assertValidWarning(t, w)
	}
	if !resp.Allowed {
		if resp.Result == nil || resp.Result.Message == "" || resp.Result.Code < 400 {
			t.Fatalf("rejection without code and message: %+v", resp.Result)
		}
		return
	}
	if len(resp.Patch) == 0 {
		return
	}
	p, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		t.Fatalf("invalid patch %s: %v", resp.Patch, err)
	}
	patched, err := p.Apply(object)
	if err != nil {
		t.Fatalf("patch %s does not apply to %q: %v", resp.Patch, object, err)
	}
	// Exact keys, as the API server's decoding of the patched object uses.
	var got map[string]any
	if err := json.Unmarshal(patched, &got); err != nil {
		t.Fatalf("patched object %q: %v", patched, err)
	}
	places := bytes.Contains(resp.Patch, []byte(`"path":"/spec`))
	if spec, _ := got["spec"].(map[string]any); places && spec["seedName"] != "fuzz-seed" {
		t.Fatalf("patched object has no seedName: %s", patched)
	}
	// A placement token survives only where the webhook placed the Shoot
	// (and then it is the webhook's own).
	meta, _ := got["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	if token, ok := annotations[placementtoken.Annotation]; ok && (!places || !bytes.Contains(resp.Patch, []byte(fmt.Sprint(token)))) {
		t.Fatalf("placement annotation %v survives a patch that did not write it: %s", token, resp.Patch)
	}
}

func metaGVK(g, v, k string) metav1.GroupVersionKind {
	return metav1.GroupVersionKind{Group: g, Version: v, Kind: k}
}

func metaGVR(g, v, r string) metav1.GroupVersionResource {
	return metav1.GroupVersionResource{Group: g, Version: v, Resource: r}
}
