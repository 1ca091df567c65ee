package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// Helpers of the validating webhooks' tests. Names start with "v" (or say
// what they are for) to stay clear of other handlers' test helpers.

const (
	vUser      = "jane.doe@example.com"
	vNamespace = "garden-dev"
	vName      = "crazy-botany"
)

// newVClock is a settable clock (Now, Step, SetTime).
func newVClock() *clocktesting.FakeClock {
	return clocktesting.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
}

var vKey = []byte("0123456789abcdef0123456789abcdef-test-key")

func vSigner(t testing.TB, clock *clocktesting.FakeClock) *placementtoken.Signer {
	t.Helper()
	s, err := placementtoken.NewSigner([][]byte{vKey}, 2*time.Minute, clock.Now)
	require.NoError(t, err)
	return s
}

// vReview is an AdmissionReview request for a validating webhook.
type vReview struct {
	uid      string
	kind     metav1.GroupVersionKind     // default core.gardener.cloud/v1beta1 Shoot
	resource metav1.GroupVersionResource // default core.gardener.cloud/v1beta1 shoots
	// requestResource is what the client asked for; default resource.
	requestResource *metav1.GroupVersionResource
	subResource     string
	operation       admissionv1.Operation // default CREATE
	name            string                // default crazy-botany; "-" for none
	namespace       string                // default garden-dev; "-" for none
	object          string                // raw JSON; "" for none
	oldObject       string                // raw JSON; "" for none
	options         string                // raw JSON; "" for none
	user            *authenticationv1.UserInfo
	dryRun          bool
}

func (r vReview) request() admissionv1.AdmissionRequest {
	if r.uid == "" {
		r.uid = testUID
	}
	if r.kind == (metav1.GroupVersionKind{}) {
		r.kind = metaGVK("core.gardener.cloud", "v1beta1", "Shoot")
	}
	if r.resource == (metav1.GroupVersionResource{}) {
		r.resource = metaGVR("core.gardener.cloud", "v1beta1", "shoots")
	}
	if r.operation == "" {
		r.operation = admissionv1.Create
	}
	switch r.name {
	case "":
		r.name = vName
	case "-":
		r.name = ""
	}
	switch r.namespace {
	case "":
		r.namespace = vNamespace
	case "-":
		r.namespace = ""
	}
	user := authenticationv1.UserInfo{
		Username: vUser, UID: "4f1e",
		Groups: []string{"system:authenticated", "garden-dev-admins"},
		Extra:  map[string]authenticationv1.ExtraValue{"scopes": {"all"}},
	}
	if r.user != nil {
		user = *r.user
	}
	dry := r.dryRun
	if r.requestResource == nil {
		r.requestResource = &r.resource
	}
	req := admissionv1.AdmissionRequest{
		UID: types.UID(r.uid), Kind: r.kind, Resource: r.resource, SubResource: r.subResource,
		RequestKind: &r.kind, RequestResource: r.requestResource, RequestSubResource: r.subResource,
		Name: r.name, Namespace: r.namespace, Operation: r.operation, UserInfo: user, DryRun: &dry,
	}
	if r.object != "" {
		req.Object = runtime.RawExtension{Raw: []byte(r.object)}
	}
	if r.oldObject != "" {
		req.OldObject = runtime.RawExtension{Raw: []byte(r.oldObject)}
	}
	if r.options != "" {
		req.Options = runtime.RawExtension{Raw: []byte(r.options)}
	}
	return req
}

func (r vReview) body(t testing.TB) string {
	t.Helper()
	req := r.request()
	b, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  &req,
	})
	require.NoError(t, err)
	return string(b)
}

// vServe sends body through controller-runtime's webhook as the API server
// would and returns the response.
func vServe(t testing.TB, h admission.Handler, body string) *admissionv1.AdmissionResponse {
	t.Helper()
	wh := (&webhook.Admission{Handler: h}).WithRecoverPanic(false)
	req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/validate", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	wh.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var out admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), "response: %s", rec.Body.String())
	require.NotNil(t, out.Response, "response: %s", rec.Body.String())
	return out.Response
}

func vMessage(r *admissionv1.AdmissionResponse) string {
	if r.Result == nil {
		return ""
	}
	return r.Result.Message
}

// vShoot is shootJSON with spec.seedName (unless empty) and annotations.
func vShoot(seed string, annotations map[string]string) string {
	meta, spec := "", ""
	if len(annotations) > 0 {
		b, _ := json.Marshal(annotations)
		meta = `"annotations": ` + string(b) + `,`
	}
	if seed != "" {
		spec = fmt.Sprintf(`"seedName": %q,`, seed)
	}
	return shootJSON(meta, spec)
}

// vSeed is a ready aws seed in eu-west-1 that takes shootJSON's Shoot: three
// zones, eu-access-only, backup, internal domain internal.example.com,
// networks apart from the Shoot's. alloc < 0 means no allocatable.
func vSeed(name string, alloc int64, mods ...func(*api.Seed)) *api.Seed {
	nodes := "10.3.0.0/16"
	s := &api.Seed{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Seed"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: api.SeedSpec{
			Provider:           api.SeedProvider{Type: "aws", Region: "eu-west-1", Zones: []string{"eu-west-1a", "eu-west-1b", "eu-west-1c"}},
			Networks:           api.SeedNetworks{Nodes: &nodes, Pods: "10.1.0.0/16", Services: "10.2.0.0/16"},
			Backup:             &api.SeedBackup{Provider: "aws"},
			Taints:             []api.SeedTaint{{Key: "seed.gardener.cloud/protected"}},
			AccessRestrictions: []api.AccessRestriction{{Name: "eu-access-only"}},
			DNS: api.SeedDNS{
				Defaults: []api.SeedDNSProviderConfig{{Domain: "seed.example.com"}},
				Internal: &api.SeedDNSProviderConfig{Domain: "internal.example.com"},
			},
		},
		Status: api.SeedStatus{
			LastOperation: &api.LastOperation{State: "Succeeded", Type: "Reconcile"},
			Conditions: []api.Condition{
				{Type: api.ConditionGardenletReady, Status: api.ConditionTrue},
				{Type: api.ConditionBackupBucketsReady, Status: api.ConditionTrue},
			},
		},
	}
	if alloc >= 0 {
		s.Status.Allocatable = corev1.ResourceList{api.ResourceShoots: *resource.NewQuantity(alloc, resource.DecimalSI)}
	}
	for _, m := range mods {
		m(s)
	}
	return s
}

// vStore is a Store with the aws CloudProfile, project dev for garden-dev
// and the seeds.
func vStore(seeds ...*api.Seed) *cache.Store { return vStoreWith(cache.Options{}, seeds...) }

// vStoreWith is vStore with the Store's options.
func vStoreWith(opts cache.Options, seeds ...*api.Seed) *cache.Store {
	s := cache.NewStore(opts)
	s.Apply(&api.CloudProfile{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "CloudProfile"},
		ObjectMeta: metav1.ObjectMeta{Name: "aws"},
		Spec:       api.CloudProfileSpec{Type: "aws"},
	})
	ns := vNamespace
	s.Apply(&api.Project{ObjectMeta: metav1.ObjectMeta{Name: "dev"}, Spec: api.ProjectSpec{Namespace: &ns}})
	for _, sd := range seeds {
		s.Apply(sd)
	}
	return s
}

// vShootsOn adds n Shoots on seed to the store.
func vShootsOn(s *cache.Store, seed string, n int) {
	for i := range n {
		sh := &api.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: "garden-other", Name: fmt.Sprintf("%s-%d", seed, i)}}
		sh.Spec.SeedName = &seed
		s.Apply(sh)
	}
}

// fakeAuthorizer answers from allowed (by user name) and counts calls.
type fakeAuthorizer struct {
	allowed map[string]bool
	reason  string
	err     error

	calls atomic.Int32
	mu    sync.Mutex
	last  []string // user, namespace, name of the last call
}

func (f *fakeAuthorizer) Allowed(_ context.Context, user authenticationv1.UserInfo, ns, name string) (bool, string, error) {
	f.calls.Add(1)
	f.mu.Lock()
	f.last = []string{user.Username, ns, name}
	f.mu.Unlock()
	if f.err != nil {
		return false, "", f.err
	}
	return f.allowed[user.Username], f.reason, nil
}

func vLog(t *testing.T) logr.Logger { return testr.NewWithOptions(t, testr.Options{Verbosity: 1}) }

// vShootsOnNamed adds the Shoot namespace/name on seed to the store, as the
// watch would deliver it.
func vShootsOnNamed(s *cache.Store, namespace, name, seed string) {
	sh := &api.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	sh.Spec.SeedName = &seed
	s.Apply(sh)
}
