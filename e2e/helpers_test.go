package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
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
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	syaml "sigs.k8s.io/yaml"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/pending"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

var dryRunAll = client.DryRunAll

func keyOf(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// poll calls f every interval until it returns nil or timeout passes; the
// error then names f's last error.
func poll(ctx context.Context, timeout, interval time.Duration, f func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not within %s: %w", timeout, err)
		case <-time.After(interval):
		}
	}
}

// eventually fails t unless f returns nil within timeout.
func eventually(t *testing.T, timeout time.Duration, f func() error, msgAndArgs ...any) {
	t.Helper()
	require.NoError(t, poll(context.Background(), timeout, 50*time.Millisecond, f), msgAndArgs...)
}

// ---------------------------------------------------------------- Shoots

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

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func seedName(u *unstructured.Unstructured) string {
	v, _, _ := unstructured.NestedString(u.Object, "spec", "seedName")
	return v
}

// labelValue makes a test name a label value.
func labelValue(test string) string {
	b := []byte(test)
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '.' {
			b[i] = '_'
		}
	}
	if len(b) > 63 {
		b = b[:63]
	}
	return strings.Trim(string(b), "_-.")
}

// startTest is the start of a test that creates Shoots: it needs the named
// webhooks registered, logs the webhook's output if the test fails, deletes
// the test's Shoots when it ends, and waits until earlier tests' Shoots are
// settled.
func (st *suite) startTest(t *testing.T, webhooks ...string) {
	t.Helper()
	st.requireWebhook(t, webhooks...)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	st.waitSettled(t)
}

// cleanupShoots deletes the Shoots t creates when it ends, and waits until the
// webhook's usage reflects that.
func (st *suite) cleanupShoots(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := st.deleteTestShoots(ctx, t.Name()); err != nil {
			t.Errorf("deleting the test's Shoots: %v", err)
			return
		}
		st.waitSettled(t)
	})
}

// deleteTestShoots deletes the Shoots labelled with test, in every
// namespace. gardener-apiserver wants each confirmed by annotation and
// checks a collection delete against every Shoot of the namespace, so there
// they go one by one.
func (st *suite) deleteTestShoots(ctx context.Context, test string) error {
	sel := client.MatchingLabels{testLabel: labelValue(test)}
	if !onGardener() {
		return st.c.DeleteAllOf(ctx, &api.Shoot{}, client.InNamespace(projectNamespace), sel)
	}
	var list api.ShootList
	if err := st.c.List(ctx, &list, sel); err != nil {
		return err
	}
	for i := range list.Items {
		if err := st.deleteShoot(ctx, &list.Items[i]); err != nil {
			return err
		}
	}
	return nil
}

// deleteShoot deletes a Shoot; on the gardener target after confirming the
// deletion (annotation confirmation.gardener.cloud/deletion).
func (st *suite) deleteShoot(ctx context.Context, sh client.Object) error {
	if onGardener() {
		patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"confirmation.gardener.cloud/deletion":"true"}}}`))
		if err := st.c.Patch(ctx, sh, patch); err != nil {
			return client.IgnoreNotFound(err)
		}
	}
	return client.IgnoreNotFound(st.c.Delete(ctx, sh))
}

// ---------------------------------------------------------------- clients

// warnings collects the warnings of the API server's responses.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

// take returns the warnings so far and forgets them.
func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.msgs
	w.msgs = nil
	return out
}

// clientAs returns a client acting as user (impersonation; "" is the admin),
// and the warnings its responses carry.
func (st *suite) clientAs(t *testing.T, user string, groups ...string) (client.Client, *warnings) {
	t.Helper()
	cfg := rest.CopyConfig(st.admin)
	if user != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append([]string{"system:authenticated"}, groups...)}
	}
	w := &warnings{}
	cfg.WarningHandler = nil
	cfg.WarningHandlerWithContext = w
	c, err := client.New(cfg, client.Options{Scheme: st.scheme})
	require.NoError(t, err)
	return c, w
}

// ---------------------------------------------------------------- simulate

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

// ---------------------------------------------------------------- usage

// expectedUsage counts Shoots per seed from the API server as docs/design.md
// defines usage: spec.seedName, plus status.seedName when it differs.
func (st *suite) expectedUsage(ctx context.Context) (map[string]int64, error) {
	var shoots api.ShootList
	if err := st.c.List(ctx, &shoots); err != nil {
		return nil, err
	}
	var seeds api.SeedList
	if err := st.c.List(ctx, &seeds); err != nil {
		return nil, err
	}
	u := map[string]int64{}
	for _, sd := range seeds.Items {
		u[sd.Name] = 0
	}
	for _, sh := range shoots.Items {
		if sh.Spec.SeedName != nil && *sh.Spec.SeedName != "" {
			if _, ok := u[*sh.Spec.SeedName]; ok {
				u[*sh.Spec.SeedName]++
			}
		}
		if sh.Status.SeedName != nil && *sh.Status.SeedName != "" &&
			(sh.Spec.SeedName == nil || *sh.Spec.SeedName != *sh.Status.SeedName) {
			if _, ok := u[*sh.Status.SeedName]; ok {
				u[*sh.Status.SeedName]++
			}
		}
	}
	return u, nil
}

// webhookUsage is seedwarden_seed_charged_shoots from the webhook's metrics endpoint.
func (st *suite) webhookUsage() (map[string]int64, error) {
	samples, err := scrape(st.metricsURL())
	if err != nil {
		return nil, err
	}
	u := map[string]int64{}
	for _, smp := range samples {
		if smp.name == "seedwarden_seed_charged_shoots" {
			u[smp.labels["seed"]] = int64(smp.value)
		}
	}
	return u, nil
}

// cacheMatches says why the webhook's usage differs from the API server's
// Shoots, or nil.
func (st *suite) cacheMatches(ctx context.Context) error {
	want, err := st.expectedUsage(ctx)
	if err != nil {
		return err
	}
	got, err := st.webhookUsage()
	if err != nil {
		return err
	}
	var diffs []string
	for seed, w := range want {
		if got[seed] != w {
			diffs = append(diffs, fmt.Sprintf("%s: webhook %d, API server %d", seed, got[seed], w))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		return fmt.Errorf("seed usage differs: %s", strings.Join(diffs, "; "))
	}
	return nil
}

// waitSettled waits until the webhook's cache agrees with the API server
// about every seed's usage (watch events delivered, reservations released).
func (st *suite) waitSettled(t *testing.T) {
	t.Helper()
	eventually(t, 15*time.Second, func() error { return st.cacheMatches(context.Background()) },
		"the webhook's cache did not catch up with the API server")
}

// ---------------------------------------------------------------- metrics

type sample struct {
	name   string
	labels map[string]string
	value  float64
}

func scrape(url string) ([]sample, error) {
	resp, err := probeClient.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return parseMetrics(b.String())
}

// apiserverMetrics scrapes the API server's /metrics as the admin.
func (st *suite) apiserverMetrics(ctx context.Context) ([]sample, error) {
	raw, err := st.cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	return parseMetrics(string(raw))
}

// parseMetrics reads the Prometheus text format (what both servers serve).
func parseMetrics(text string) ([]sample, error) {
	var out []sample
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		smp := sample{labels: map[string]string{}}
		rest := line
		if i := strings.IndexAny(line, "{ "); i >= 0 && line[i] == '{' {
			smp.name = line[:i]
			var err error
			if rest, err = parseLabels(line[i+1:], smp.labels); err != nil {
				return nil, fmt.Errorf("%q: %w", line, err)
			}
		} else if i >= 0 {
			smp.name, rest = line[:i], line[i:]
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return nil, fmt.Errorf("%q: no value", line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", line, err)
		}
		smp.value = v
		out = append(out, smp)
	}
	return out, nil
}

// parseLabels reads `a="x",b="y"}` into into and returns what follows `}`.
func parseLabels(s string, into map[string]string) (string, error) {
	for {
		s = strings.TrimLeft(s, ", ")
		if strings.HasPrefix(s, "}") {
			return s[1:], nil
		}
		eq := strings.IndexByte(s, '=')
		if eq < 0 || len(s) < eq+2 || s[eq+1] != '"' {
			return "", errors.New("bad label")
		}
		key := s[:eq]
		s = s[eq+2:]
		var val strings.Builder
		for {
			if s == "" {
				return "", errors.New("unterminated label value")
			}
			c := s[0]
			s = s[1:]
			if c == '\\' && s != "" {
				switch s[0] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(s[0])
				}
				s = s[1:]
				continue
			}
			if c == '"' {
				break
			}
			val.WriteByte(c)
		}
		into[key] = val.String()
	}
}

// counterSum adds the values of name's samples whose labels match all of match.
func counterSum(samples []sample, name string, match func(map[string]string) bool) float64 {
	var sum float64
	for _, smp := range samples {
		if smp.name == name && (match == nil || match(smp.labels)) {
			sum += smp.value
		}
	}
	return sum
}

// ---------------------------------------------------------------- retry controller

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

// createManifests creates every object of a YAML (or JSON) file of the
// repository, in order, and reports how many.
func (st *suite) createManifests(ctx context.Context, rel string) (int, error) {
	data, err := os.ReadFile(filepath.Join(st.root, rel))
	if err != nil {
		return 0, err
	}
	n := 0
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return n, nil
		} else if err != nil {
			return n, fmt.Errorf("%s: %w", rel, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if err := st.c.Create(ctx, u); err != nil {
			return n, fmt.Errorf("%s: %s %s: %w", rel, u.GetKind(), u.GetName(), err)
		}
		n++
	}
}

// seedNameOf is the stored spec.seedName of a Shoot.
func seedNameOf(t *testing.T, key types.NamespacedName) string {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(shootGVK)
	require.NoError(t, s.c.Get(context.Background(), key, u))
	return seedName(u)
}

// leaderStatus is leader_election_master_status of the retry controller's
// Lease in a webhook's metrics (0 when absent).
func leaderStatus(samples []sample) float64 {
	return counterSum(samples, "leader_election_master_status", func(l map[string]string) bool {
		return l["name"] == "seedwarden-pending-shoots"
	})
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

func ptrTo[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// ---------------------------------------------------------------- placement modes

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
