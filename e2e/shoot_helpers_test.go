package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	syaml "sigs.k8s.io/yaml"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/pending"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// Shoots as the tests create them, what the webhooks made of them (the
// admitted and the bound seed), the retry controller's traces, and
// `webhook simulate` for the seed expected.

var shootGVK = schema.GroupVersionKind{Group: api.GroupName, Version: "v1beta1", Kind: "Shoot"}

type shootOpt func(u *unstructured.Unstructured)

// newShoot returns a Shoot (unstructured, as kubectl sends it) in the project
// namespace, labelled with test, with generateName "e2e-": an aws Shoot in
// eu-central-1 like examples/shoot.yaml unless opts change it.
func newShoot(test string, opts ...shootOpt) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": shootGVK.GroupVersion().String(),
		"kind":       shootGVK.Kind,
		"metadata": map[string]any{
			"generateName": "e2e-",
			"namespace":    projectNamespace,
			"labels":       map[string]any{testLabel: labelValue(test)},
		},
		"spec": map[string]any{
			"purpose":    "evaluation",
			"kubernetes": map[string]any{"version": "1.33.4"},
			"networking": map[string]any{
				"type":       "calico",
				"nodes":      "10.250.0.0/16",
				"ipFamilies": []any{"IPv4"},
			},
		},
	}}
	awsShoot("eu-central-1", "eu-central-1a")(u)
	for _, o := range opts {
		o(u)
	}
	return u
}

func providerShoot(profile, machine, region, zone string) shootOpt {
	return func(u *unstructured.Unstructured) {
		must(unstructured.SetNestedMap(u.Object, map[string]any{"kind": "CloudProfile", "name": profile}, "spec", "cloudProfile"))
		must(unstructured.SetNestedField(u.Object, region, "spec", "region"))
		must(unstructured.SetNestedMap(u.Object, map[string]any{
			"type": profile,
			"workers": []any{map[string]any{
				"name":    "worker",
				"machine": map[string]any{"type": machine},
				"minimum": int64(1),
				"maximum": int64(3),
				"zones":   []any{zone},
			}},
		}, "spec", "provider"))
		if onGardener() {
			// prerequisites.yaml has a CredentialsBinding per provider.
			must(unstructured.SetNestedField(u.Object, profile, "spec", "credentialsBindingName"))
		}
	}
}

func awsShoot(region, zone string) shootOpt {
	return providerShoot("aws", "m5.large", region, zone)
}

func gcpShoot(region, zone string) shootOpt {
	return providerShoot("gcp", "n2-standard-4", region, zone)
}

func withName(name string) shootOpt {
	return func(u *unstructured.Unstructured) { u.SetGenerateName(""); u.SetName(name) }
}

func withSeed(seed string) shootOpt {
	return func(u *unstructured.Unstructured) {
		must(unstructured.SetNestedField(u.Object, seed, "spec", "seedName"))
	}
}

func withPurpose(p string) shootOpt {
	return func(u *unstructured.Unstructured) {
		must(unstructured.SetNestedField(u.Object, p, "spec", "purpose"))
	}
}

func withAnnotation(k, v string) shootOpt {
	return func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[k] = v
		u.SetAnnotations(a)
	}
}

// shootFromFile reads a Shoot manifest (examples/...) as kubectl would send it.
func shootFromFile(t *testing.T, test, rel string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.root, rel))
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, syaml.Unmarshal(data, &u.Object))
	u.SetNamespace(projectNamespace)
	l := u.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[testLabel] = labelValue(test)
	u.SetLabels(l)
	return u
}

func seedName(u *unstructured.Unstructured) string {
	v, _, _ := unstructured.NestedString(u.Object, "spec", "seedName")
	return v
}

// seedNameOf is the stored spec.seedName of a Shoot.
func seedNameOf(t *testing.T, key types.NamespacedName) string {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(shootGVK)
	require.NoError(t, s.c.Get(context.Background(), key, u))
	return seedName(u)
}

// admittedSeed is the seed the mutating webhook chose for u, read off the
// object the API server returned for a CREATE: spec.seedName in placement
// mode patch, the announced seed (placementtoken.SeedAnnotation) in mode
// binding, where spec.seedName is only set by the retry controller's bind.
func admittedSeed(u *unstructured.Unstructured) string {
	if bindingMode() {
		return u.GetAnnotations()[placementtoken.SeedAnnotation]
	}
	return seedName(u)
}

// placedSeed is the seed a Shoot the webhook placed at CREATE (u, as the API
// server returned it) ends up bound to: at once in mode patch; in mode
// binding once the retry controller has bound it (within bindTimeout). It
// fails t if the Shoot was not placed or not bound.
func (st *suite) placedSeed(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	announced := admittedSeed(u)
	require.NotEmpty(t, announced, "Shoot %s/%s was admitted without a seed", u.GetNamespace(), u.GetName())
	if !bindingMode() {
		return announced
	}
	require.Empty(t, seedName(u), "placement mode binding: the mutating webhook set spec.seedName of %s itself", u.GetName())
	var bound string
	eventually(t, bindTimeout, func() error {
		bound = seedNameOf(t, client.ObjectKeyFromObject(u))
		if bound == "" {
			return fmt.Errorf("Shoot %s/%s (announced seed %q) not bound yet", u.GetNamespace(), u.GetName(), announced)
		}
		return nil
	}, "the retry controller does not bind the announced Shoot")
	return bound
}

// bindTimeout bounds how long the retry controller may take to bind an
// announced Shoot (it does so at once, in milliseconds).
const bindTimeout = 10 * time.Second

// dryRunUntil waits for the webhooks to answer a Shoot as accept wants: it
// sends a dry-run CREATE of a new shoot() every interval and hands the
// Shoot the API server returns (as the webhooks left it) to accept, until
// accept takes one. After timeout it returns the last refusal. Dry runs
// leave nothing behind, so it can wait for a cache or a registration to
// catch up without creating Shoots.
func (st *suite) dryRunUntil(ctx context.Context, timeout, interval time.Duration,
	shoot func() *unstructured.Unstructured, accept func(admitted *unstructured.Unstructured) error) error {
	return poll(ctx, timeout, interval, func() error {
		sh := shoot()
		if err := st.c.Create(ctx, sh, dryRunAll); err != nil {
			return err
		}
		return accept(sh)
	})
}

// onSeed accepts a Shoot admitted onto seed (announced in mode binding).
func onSeed(seed string) func(*unstructured.Unstructured) error {
	return func(sh *unstructured.Unstructured) error {
		if got := admittedSeed(sh); got != seed {
			return fmt.Errorf("dry run placed on %q, want %s", got, seed)
		}
		return nil
	}
}

// onAnySeed accepts a Shoot admitted onto a seed, whichever.
func onAnySeed(sh *unstructured.Unstructured) error {
	if admittedSeed(sh) == "" {
		return errors.New("dry run not placed")
	}
	return nil
}

// patchedSeed is the seed an admission response's JSON patch gives the
// Shoot it was computed for (obj): spec.seedName, or in mode binding the
// announced seed. "" when the patch places nothing.
func patchedSeed(t *testing.T, obj *unstructured.Unstructured, patch []byte) string {
	t.Helper()
	seed, err := seedFromPatch(obj, patch)
	require.NoError(t, err)
	return seed
}

// seedFromPatch is patchedSeed for goroutines other than the test's.
func seedFromPatch(obj *unstructured.Unstructured, patch []byte) (string, error) {
	if len(patch) == 0 {
		return "", nil
	}
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		return "", err
	}
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return "", fmt.Errorf("admission patch %s: %w", patch, err)
	}
	out, err := p.Apply(raw)
	if err != nil {
		return "", fmt.Errorf("applying admission patch %s: %w", patch, err)
	}
	res := &unstructured.Unstructured{}
	if err := json.Unmarshal(out, &res.Object); err != nil {
		return "", err
	}
	return admittedSeed(res), nil
}

// concurrentDryRuns sends n dry-run CREATEs of a Shoot at once (errors are
// ignored: the caller checks what it needs afterwards).
func (st *suite) concurrentDryRuns(t *testing.T, n int) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sh := newShoot(fmt.Sprintf("%s-%d", t.Name(), i), awsShoot("eu-central-1", "eu-central-1a"))
			_ = st.c.Create(context.Background(), sh, dryRunAll)
		}()
	}
	wg.Wait()
}

// setAllocatable sets status.allocatable.shoots of a seed.
func (st *suite) setAllocatable(ctx context.Context, seed string, q resource.Quantity) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var sd api.Seed
		if err := st.c.Get(ctx, keyOf("", seed), &sd); err != nil {
			return err
		}
		if sd.Status.Allocatable == nil {
			sd.Status.Allocatable = corev1.ResourceList{}
		}
		sd.Status.Allocatable[api.ResourceShoots] = q
		return st.c.Status().Update(ctx, &sd)
	})
}

// shootEvents lists the events.k8s.io/v1 Events about a Shoot of a type and
// reason (the retry controller records through that API).
func (st *suite) shootEvents(ctx context.Context, shoot types.NamespacedName, eventType, reason string) ([]eventsv1.Event, error) {
	var list eventsv1.EventList
	if err := st.c.List(ctx, &list, client.InNamespace(shoot.Namespace)); err != nil {
		return nil, err
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == "Shoot" && e.Regarding.Name == shoot.Name && e.Type == eventType && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out, nil
}

// waitScheduledEvent waits for the one SchedulingSuccessful event of a Shoot,
// naming seed.
func (st *suite) waitScheduledEvent(t *testing.T, shoot types.NamespacedName, seed string) {
	t.Helper()
	eventually(t, 10*time.Second, func() error {
		evs, err := st.shootEvents(context.Background(), shoot, corev1.EventTypeNormal, pending.ReasonSchedulingSuccessful)
		if err != nil {
			return err
		}
		if len(evs) != 1 || !strings.Contains(evs[0].Note, seed) {
			return fmt.Errorf("%s events: %+v", pending.ReasonSchedulingSuccessful, evs)
		}
		return nil
	}, "no %s event naming %s", pending.ReasonSchedulingSuccessful, seed)
}

// review posts an AdmissionReview to a webhook directly, as the API server
// would.
func review(t *testing.T, hc *http.Client, url string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	t.Helper()
	b, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  req,
	})
	require.NoError(t, err)
	resp, err := hc.Post(url, "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, url)
	var out admissionv1.AdmissionReview
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.NotNil(t, out.Response)
	return out.Response
}

// shootCreate is the AdmissionRequest of a dry-run CREATE of u in the
// project namespace, as the API server sends it.
func shootCreate(t *testing.T, uid types.UID, u *unstructured.Unstructured) *admissionv1.AdmissionRequest {
	t.Helper()
	raw, err := json.Marshal(u.Object)
	require.NoError(t, err)
	return &admissionv1.AdmissionRequest{
		UID:       uid,
		Kind:      metav1.GroupVersionKind{Group: api.GroupName, Version: "v1beta1", Kind: "Shoot"},
		Resource:  metav1.GroupVersionResource{Group: api.GroupName, Version: "v1beta1", Resource: "shoots"},
		Name:      u.GetName(),
		Namespace: projectNamespace,
		Operation: admissionv1.Create,
		DryRun:    ptrTo(true),
		Object:    k8sruntime.RawExtension{Raw: raw},
	}
}

// simResult is one output line of `webhook simulate`.
type simResult struct {
	Name          string            `json:"name"`
	Seed          string            `json:"seed"`
	Unschedulable bool              `json:"unschedulable"`
	Step          string            `json:"step"`
	Message       string            `json:"message"`
	Reasons       map[string]string `json:"reasons"`
	Error         string            `json:"error"`
}

// landscapeGVKs are what `webhook simulate --landscape` reads.
var landscapeGVKs = []schema.GroupVersionKind{
	{Group: api.GroupName, Version: "v1beta1", Kind: "CloudProfileList"},
	{Group: api.GroupName, Version: "v1beta1", Kind: "NamespacedCloudProfileList"},
	{Group: api.GroupName, Version: "v1beta1", Kind: "ProjectList"},
	{Group: api.GroupName, Version: "v1beta1", Kind: "SeedList"},
	{Group: api.GroupName, Version: "v1beta1", Kind: "ShootList"},
}

// simulate decides shoot with `webhook simulate` against the landscape the
// API server holds now (what `kubectl get ... -o yaml` would show).
func (st *suite) simulate(t *testing.T, shoot *unstructured.Unstructured) simResult {
	t.Helper()
	ctx := context.Background()
	var items []any
	for _, gvk := range landscapeGVKs {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk)
		require.NoError(t, st.c.List(ctx, l))
		for _, it := range l.Items {
			it.SetGroupVersionKind(schema.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: strings.TrimSuffix(gvk.Kind, "List")})
			items = append(items, it.Object)
		}
	}
	var cms corev1.ConfigMapList
	require.NoError(t, st.c.List(ctx, &cms, client.InNamespace(gardenNamespace),
		client.MatchingLabels{api.LabelSchedulingPurpose: api.LabelSchedulingPurposeRegionConfig}))
	for i := range cms.Items {
		cm := cms.Items[i]
		cm.APIVersion, cm.Kind = "v1", "ConfigMap"
		items = append(items, &cm)
	}
	dir := t.TempDir()
	land, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	require.NoError(t, err)
	landPath := filepath.Join(dir, "landscape.json")
	require.NoError(t, os.WriteFile(landPath, land, 0o644))

	sh := shoot.DeepCopy()
	if sh.GetName() == "" {
		sh.SetName(sh.GetGenerateName() + "simulated")
	}
	shootJSON, err := json.Marshal(sh.Object)
	require.NoError(t, err)
	shootPath := filepath.Join(dir, "shoot.json")
	require.NoError(t, os.WriteFile(shootPath, shootJSON, 0o644))

	cmd := exec.Command(st.bin, "simulate", "--config", st.configPath, "--landscape", landPath, "--shoot", shootPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	line, _, _ := strings.Cut(strings.TrimSpace(stdout.String()), "\n")
	var r simResult
	require.NoError(t, json.Unmarshal([]byte(line), &r), "webhook simulate: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	require.Empty(t, r.Error, "webhook simulate: %s", stderr.String())
	require.NoError(t, err, "webhook simulate: %s", stderr.String())
	return r
}
