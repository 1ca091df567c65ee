package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// What the mutating webhook's tests share: a recording placer, canned
// decisions, a realistic Shoot and the AdmissionReview that carries it.

const testUID = "705ab4f5-6393-11e8-b7cc-42010a800002"

// fakePlacer records calls and returns a canned Decision; placement itself is
// tested in internal/placement.
type fakePlacer struct {
	decision placement.Decision

	mu    sync.Mutex
	calls []placeCall
}

type placeCall struct {
	shoot     *api.Shoot
	opts      placement.Options
	key, user string
}

func (f *fakePlacer) Place(_ context.Context, shoot *api.Shoot, opts placement.Options, key, user string) (placement.Decision, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, placeCall{shoot: shoot.DeepCopy(), opts: opts, key: key, user: user})
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
	oldObject   string // raw JSON; default null
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
	if r.oldObject == "" {
		r.oldObject = "null"
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
    "oldObject": %[13]s,
    "dryRun": %[12]t,
    "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "kubectl-client-side-apply", "fieldValidation": "Strict"}
  }
}`, r.apiVersion, r.uid, kg, kv, kk, rg, rv, rr, r.subResource, r.operation, r.object, r.dryRun, r.oldObject)
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

func metaGVK(g, v, k string) metav1.GroupVersionKind {
	return metav1.GroupVersionKind{Group: g, Version: v, Kind: k}
}

func metaGVR(g, v, r string) metav1.GroupVersionResource {
	return metav1.GroupVersionResource{Group: g, Version: v, Resource: r}
}
