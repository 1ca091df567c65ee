// Package manifests_test checks the deployment manifests in deploy/manifests
// (a kustomize base) and the Grafana dashboard in deploy/grafana without a
// cluster: every document decodes strictly into its Kubernetes type, the
// kustomization lists every file, the webhook configurations match the
// server's paths and carry explicit, reasoned failure policies, the
// Deployment is locked down, RBAC is exactly what the server uses, and the
// shipped configuration file is accepted by internal/config.
//
// With kubectl on PATH the kustomization is also built; with kube-apiserver
// and etcd available (KUBEBUILDER_ASSETS or hack/e2e-tools.sh) the objects are
// also created on a real API server with dry run, which runs its validation.
package manifests_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/testenv"
)

const (
	manifestsDir = "manifests"
	grafanaDir   = "grafana"
	// networkPolicyDir is the opt-in kustomize Component of the NetworkPolicy.
	networkPolicyDir  = "networkpolicy"
	networkPolicyFile = "networkpolicy.yaml"

	namespace   = "seedwarden"
	serviceName = "seedwarden"
	// The ServiceMonitor scrapes as this ServiceAccount, with the token in metricsToken.
	metricsScraper = "seedwarden-metrics"
	metricsToken   = "seedwarden-metrics-token"
	certificate    = "seedwarden-webhook"
	certSecret     = "seedwarden-webhook-tls"
	placementKey   = "seedwarden-placement-key"
	configName     = "seedwarden-config"
	configMount    = "/etc/seedwarden/config"
	configFile     = "config.yaml"
	gardenNS       = "garden"
	dashboardFile  = "seedwarden-dashboard.json"
	metadataName   = "kubernetes.io/metadata.name"
	injectCAFrom   = "cert-manager.io/inject-ca-from"
	nonRootUserGID = int64(65532)
)

// Webhook paths the server registers (cmd/webhook). A webhook configuration
// pointing anywhere else would get 404s, which fail closed.
const (
	pathMutateShoots        = "/mutate-shoots"
	pathShootBinding        = "/validate-shoot-binding"
	pathShootCapacity       = "/validate-shoot-capacity"
	pathResourceSize        = "/validate-resource-size"
	pathKubeconfigSecret    = "/validate-kubeconfig-secret"
	pathNamespaceDeletion   = "/validate-namespace-deletion"
	gardenerGroup           = "core.gardener.cloud"
	gardenerVersion         = "v1beta1"
	mutatingConfiguration   = "MutatingWebhookConfiguration"
	validatingConfiguration = "ValidatingWebhookConfiguration"
)

// rule is one admission rule, flattened for comparison.
type rule struct {
	group, version, resource string
	ops                      string // sorted, comma-separated
	scope                    admissionregistrationv1.ScopeType
}

// webhookWant is what each webhook must declare.
type webhookWant struct {
	config       string
	path         string
	failure      admissionregistrationv1.FailurePolicyType
	sideEffects  admissionregistrationv1.SideEffectClass
	maxTimeout   int32
	rules        []rule
	excludedAlso []string // namespaces excluded besides seedwarden
	// projectsOnly: the webhook selects project namespaces by Gardener's
	// label, as gardener-admission-controller's size limits do, so that an
	// outage never blocks Gardener's own namespaces.
	projectsOnly bool
	// conditions are the names of the matchConditions, in order.
	conditions []string
}

// seedChangeCondition is where the binding webhook's matchCondition starts: every
// request that can choose a seed, nothing else. The expression is compiled
// by a real API server in TestAPIServerAcceptsManifests and exercised by the
// e2e suite.
const seedChangeCondition = "request.operation == 'CREATE' || request.?subResource.orValue('') == 'binding' || " +
	"object.?spec.?seedName.orValue('') != oldObject.?spec.?seedName.orValue('')"

// seedSetCondition is the capacity webhook's matchCondition: a request that
// sets or changes spec.seedName (a CREATE without one takes no place: in
// placement mode binding the seed is only announced then).
const seedSetCondition = "(request.operation == 'CREATE' && object.?spec.?seedName.orValue('') != '') || " +
	"request.?subResource.orValue('') == 'binding' || " +
	"object.?spec.?seedName.orValue('') != oldObject.?spec.?seedName.orValue('')"

// seedConstraintCondition is the binding webhook's matchCondition: also
// the UPDATEs that change what the current seed must offer (the Shoot's
// seedSelector, control-plane zones, region).
const seedConstraintCondition = seedChangeCondition + " || " +
	"object.?spec.?seedSelector != oldObject.?spec.?seedSelector || " +
	"object.?spec.?controlPlane.?zones != oldObject.?spec.?controlPlane.?zones || " +
	"object.?spec.?region.orValue('') != oldObject.?spec.?region.orValue('')"

var shootRules = []rule{
	{gardenerGroup, gardenerVersion, "shoots", "CREATE,UPDATE", admissionregistrationv1.NamespacedScope},
	{gardenerGroup, gardenerVersion, "shoots/binding", "UPDATE", admissionregistrationv1.NamespacedScope},
}

var webhooks = map[string]webhookWant{
	"place.shoots.seedwarden.io": {
		config: mutatingConfiguration, path: pathMutateShoots,
		failure: admissionregistrationv1.Ignore, sideEffects: admissionregistrationv1.SideEffectClassNoneOnDryRun, maxTimeout: 5,
		rules: []rule{{gardenerGroup, gardenerVersion, "shoots", "CREATE", admissionregistrationv1.NamespacedScope}},
	},
	"binding.shoots.seedwarden.io": {
		config: validatingConfiguration, path: pathShootBinding,
		failure: admissionregistrationv1.Fail, sideEffects: admissionregistrationv1.SideEffectClassNone, maxTimeout: 5,
		rules: shootRules, conditions: []string{"may-affect-seed"},
	},
	"capacity.shoots.seedwarden.io": {
		config: validatingConfiguration, path: pathShootCapacity,
		failure: admissionregistrationv1.Fail, sideEffects: admissionregistrationv1.SideEffectClassNoneOnDryRun, maxTimeout: 5,
		rules: shootRules, conditions: []string{"may-change-seed"},
	},
	"size.seedwarden.io": {
		config: validatingConfiguration, path: pathResourceSize,
		failure: admissionregistrationv1.Fail, sideEffects: admissionregistrationv1.SideEffectClassNone, maxTimeout: 5,
		rules: []rule{
			{gardenerGroup, gardenerVersion, "projects", "CREATE,UPDATE", admissionregistrationv1.AllScopes},
			{gardenerGroup, gardenerVersion, "seeds", "CREATE,UPDATE", admissionregistrationv1.AllScopes},
			{gardenerGroup, gardenerVersion, "shoots", "CREATE,UPDATE", admissionregistrationv1.AllScopes},
			{"", "v1", "configmaps", "CREATE,UPDATE", admissionregistrationv1.NamespacedScope},
			{"", "v1", "secrets", "CREATE,UPDATE", admissionregistrationv1.NamespacedScope},
		},
		projectsOnly: true,
	},
	"kubeconfig.secrets.seedwarden.io": {
		config: validatingConfiguration, path: pathKubeconfigSecret,
		failure: admissionregistrationv1.Fail, sideEffects: admissionregistrationv1.SideEffectClassNone, maxTimeout: 5,
		rules:        []rule{{"", "v1", "secrets", "CREATE,UPDATE", admissionregistrationv1.NamespacedScope}},
		excludedAlso: []string{"kube-system", "cert-manager"},
		conditions:   []string{"has-kubeconfig"},
	},
	"namespaces.seedwarden.io": {
		config: validatingConfiguration, path: pathNamespaceDeletion,
		failure: admissionregistrationv1.Fail, sideEffects: admissionregistrationv1.SideEffectClassNone, maxTimeout: 5,
		rules: []rule{{"", "v1", "namespaces", "DELETE", admissionregistrationv1.ClusterScope}},
	},
}

// doc is one YAML document of a manifest file.
type doc struct {
	file  string
	raw   []byte
	u     *unstructured.Unstructured
	typed runtime.Object // nil for kinds client-go does not know (cert-manager, ServiceMonitor)
}

func (d doc) String() string { return d.file + ": " + d.u.GetKind() + " " + d.u.GetName() }

var strictDecoder = serializer.NewCodecFactory(clientgoscheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// readDocs decodes every document of every file (strictly into its typed
// form where client-go knows the kind).
func readDocs(t testing.TB, files ...string) []doc {
	t.Helper()
	var out []doc
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			raw, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			js, err := yaml.YAMLToJSONStrict(raw)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if string(bytes.TrimSpace(js)) == "null" {
				continue // comments only
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(js); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			d := doc{file: f, raw: raw, u: u}
			obj, _, err := strictDecoder.Decode(js, nil, nil)
			switch {
			case err == nil:
				d.typed = obj
			case runtime.IsNotRegisteredError(err):
			default:
				t.Fatalf("%s: %s %s: %v", f, u.GetKind(), u.GetName(), err)
			}
			out = append(out, d)
		}
	}
	return out
}

type kustomization struct {
	APIVersion         string   `json:"apiVersion"`
	Kind               string   `json:"kind"`
	Resources          []string `json:"resources"`
	ConfigMapGenerator []struct {
		Name      string   `json:"name"`
		Namespace string   `json:"namespace"`
		Files     []string `json:"files"`
		Options   struct {
			DisableNameSuffixHash bool              `json:"disableNameSuffixHash"`
			Labels                map[string]string `json:"labels"`
		} `json:"options"`
	} `json:"configMapGenerator"`
	Images []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
	} `json:"images"`
}

func readKustomization(t testing.TB, dir string) *kustomization {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k := &kustomization{}
	if err := yaml.UnmarshalStrict(data, k); err != nil {
		t.Fatalf("%s/kustomization.yaml: %v", dir, err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Errorf("%s/kustomization.yaml: apiVersion/kind %s/%s", dir, k.APIVersion, k.Kind)
	}
	return k
}

// resourceFiles are the manifest files kustomization.yaml lists as resources.
func resourceFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	for _, r := range readKustomization(t, manifestsDir).Resources {
		if filepath.Ext(r) == ".yaml" {
			files = append(files, filepath.Join(manifestsDir, r))
		}
	}
	return files
}

func manifests(t testing.TB) []doc { return readDocs(t, resourceFiles(t)...) }

func find[T runtime.Object](t testing.TB, docs []doc, kind, ns, name string) T {
	t.Helper()
	for _, d := range docs {
		if d.u.GetKind() == kind && d.u.GetNamespace() == ns && d.u.GetName() == name {
			obj, ok := d.typed.(T)
			if !ok {
				t.Fatalf("%s: decoded as %T", d, d.typed)
			}
			return obj
		}
	}
	var zero T
	t.Fatalf("no %s %s/%s", kind, ns, name)
	return zero
}

func findU(t testing.TB, docs []doc, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	for _, d := range docs {
		if d.u.GetKind() == kind && d.u.GetNamespace() == ns && d.u.GetName() == name {
			return d.u
		}
	}
	t.Fatalf("no %s %s/%s", kind, ns, name)
	return nil
}

// shippedConfig is deploy/manifests/config.yaml, parsed by the server's own code.
func shippedConfig(t testing.TB) *config.Config {
	t.Helper()
	c, err := config.Load(filepath.Join(manifestsDir, configFile))
	if err != nil {
		t.Fatalf("the shipped configuration is rejected by the server: %v", err)
	}
	return c
}

func TestKustomizationListsEveryFile(t *testing.T) {
	for _, dir := range []string{manifestsDir, grafanaDir} {
		k := readKustomization(t, dir)
		listed := map[string]bool{"kustomization.yaml": true}
		for _, r := range k.Resources {
			if st, err := os.Stat(filepath.Join(dir, r)); err != nil {
				t.Errorf("%s: resource %s: %v", dir, r, err)
			} else if st.IsDir() {
				if _, err := os.Stat(filepath.Join(dir, r, "kustomization.yaml")); err != nil {
					t.Errorf("%s: resource %s is a directory without kustomization.yaml", dir, r)
				}
				continue
			}
			listed[r] = true
		}
		for _, g := range k.ConfigMapGenerator {
			for _, f := range g.Files {
				if strings.Contains(f, "..") {
					t.Errorf("%s: generator file %s is outside the kustomization (kustomize refuses it)", dir, f)
				}
				listed[f] = true
			}
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			if !listed[e.Name()] {
				t.Errorf("%s/%s is not listed in %s/kustomization.yaml", dir, e.Name(), dir)
			}
			delete(listed, e.Name())
		}
		for f := range listed {
			t.Errorf("%s/kustomization.yaml lists %s, which does not exist", dir, f)
		}
	}
	k := readKustomization(t, manifestsDir)
	if !slices.Contains(k.Resources, "../"+grafanaDir) {
		t.Errorf("the base does not include ../%s", grafanaDir)
	}
	found := false
	for _, g := range k.ConfigMapGenerator {
		if g.Name == configName && g.Namespace == namespace && reflect.DeepEqual(g.Files, []string{configFile}) {
			found = true
		}
	}
	if !found {
		t.Errorf("no configMapGenerator %s/%s from %s", namespace, configName, configFile)
	}
}

func TestDocumentsDecode(t *testing.T) {
	docs := manifests(t)
	type key struct{ kind, ns, name string }
	got := map[key]bool{}
	for _, d := range docs {
		k := key{d.u.GetKind(), d.u.GetNamespace(), d.u.GetName()}
		if got[k] {
			t.Errorf("%s: duplicate", d)
		}
		got[k] = true
		if d.u.GetLabels()["app.kubernetes.io/name"] != "seedwarden" {
			t.Errorf("%s: no label app.kubernetes.io/name=seedwarden", d)
		}
	}
	want := []key{
		{"Namespace", "", namespace},
		{"ServiceAccount", namespace, "seedwarden"},
		{"ClusterRole", "", "seedwarden"},
		{"ClusterRole", "", "seedwarden-metrics-reader"},
		{"ClusterRoleBinding", "", "seedwarden"},
		{"Role", namespace, "seedwarden"},
		{"RoleBinding", namespace, "seedwarden"},
		{"Role", gardenNS, "seedwarden-region-config"},
		{"RoleBinding", gardenNS, "seedwarden-region-config"},
		{"Issuer", namespace, "seedwarden-selfsigned"},
		{"Certificate", namespace, "seedwarden-ca"},
		{"Issuer", namespace, "seedwarden-ca"},
		{"Certificate", namespace, certificate},
		{"Deployment", namespace, "seedwarden"},
		{"PodDisruptionBudget", namespace, "seedwarden"},
		{"Service", namespace, serviceName},
		{mutatingConfiguration, "", "seedwarden"},
		{validatingConfiguration, "", "seedwarden"},
		{"ServiceMonitor", namespace, "seedwarden"},
		{"PrometheusRule", namespace, "seedwarden"},
		{"ServiceAccount", namespace, metricsScraper},
		{"Secret", namespace, metricsToken},
		{"ClusterRoleBinding", "", "seedwarden-metrics-reader"},
	}
	for _, k := range want {
		if !got[k] {
			t.Errorf("missing %s %s/%s", k.kind, k.ns, k.name)
		}
		delete(got, k)
	}
	for k := range got {
		t.Errorf("unexpected %s %s/%s (add it to this test)", k.kind, k.ns, k.name)
	}
	// Only cert-manager and Prometheus Operator kinds are left untyped.
	for _, d := range docs {
		if d.typed == nil && d.u.GroupVersionKind().Group != "cert-manager.io" && d.u.GroupVersionKind().Group != "monitoring.coreos.com" {
			t.Errorf("%s: %s is not a known type", d, d.u.GetAPIVersion())
		}
	}
}

func TestNamespace(t *testing.T) {
	ns := find[*corev1.Namespace](t, manifests(t), "Namespace", "", namespace)
	if ns.Labels[metadataName] != namespace {
		t.Errorf("label %s = %q", metadataName, ns.Labels[metadataName])
	}
	if ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("the namespace does not enforce the restricted Pod Security Standard")
	}
}

func TestWebhookConfigurations(t *testing.T) {
	docs := manifests(t)
	mwc := find[*admissionregistrationv1.MutatingWebhookConfiguration](t, docs, mutatingConfiguration, "", "seedwarden")
	vwc := find[*admissionregistrationv1.ValidatingWebhookConfiguration](t, docs, validatingConfiguration, "", "seedwarden")
	svc := find[*corev1.Service](t, docs, "Service", namespace, serviceName)
	cert := findU(t, docs, "Certificate", namespace, certificate)

	for _, obj := range []metav1.Object{mwc, vwc} {
		if got := obj.GetAnnotations()[injectCAFrom]; got != namespace+"/"+certificate {
			t.Errorf("%s: %s = %q", obj.GetName(), injectCAFrom, got)
		}
	}
	dnsNames, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
	for _, n := range []string{serviceName + "." + namespace + ".svc", serviceName + "." + namespace + ".svc.cluster.local"} {
		if !slices.Contains(dnsNames, n) {
			t.Errorf("certificate %s lacks dnsName %s", certificate, n)
		}
	}

	type common struct {
		name, config string
		cc           admissionregistrationv1.WebhookClientConfig
		rules        []admissionregistrationv1.RuleWithOperations
		failure      *admissionregistrationv1.FailurePolicyType
		matchPolicy  *admissionregistrationv1.MatchPolicyType
		nsSel        *metav1.LabelSelector
		objSel       *metav1.LabelSelector
		sideEffects  *admissionregistrationv1.SideEffectClass
		timeout      *int32
		versions     []string
		conds        []admissionregistrationv1.MatchCondition
	}
	var all []common
	for _, w := range mwc.Webhooks {
		all = append(all, common{w.Name, mutatingConfiguration, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector, w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions})
		if w.ReinvocationPolicy == nil || *w.ReinvocationPolicy != admissionregistrationv1.NeverReinvocationPolicy {
			t.Errorf("%s: reinvocationPolicy must be explicitly Never", w.Name)
		}
	}
	for _, w := range vwc.Webhooks {
		all = append(all, common{w.Name, validatingConfiguration, w.ClientConfig, w.Rules, w.FailurePolicy, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector, w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions})
	}

	seen := map[string]bool{}
	paths := map[string]bool{}
	for _, w := range all {
		want, ok := webhooks[w.name]
		if !ok {
			t.Errorf("unexpected webhook %s (add it to this test)", w.name)
			continue
		}
		if seen[w.name] {
			t.Errorf("duplicate webhook %s", w.name)
		}
		seen[w.name] = true
		if w.config != want.config {
			t.Errorf("%s is in the %s, want %s", w.name, w.config, want.config)
		}

		s := w.cc.Service
		if s == nil || w.cc.URL != nil {
			t.Errorf("%s: clientConfig must name the Service", w.name)
			continue
		}
		if s.Name != serviceName || s.Namespace != namespace || s.Port == nil || *s.Port != 443 {
			t.Errorf("%s: clientConfig.service = %s/%s:%v", w.name, s.Namespace, s.Name, s.Port)
		}
		if s.Path == nil || *s.Path != want.path {
			t.Errorf("%s: path = %v, want %s", w.name, s.Path, want.path)
		} else if paths[*s.Path] {
			t.Errorf("%s: path %s used twice", w.name, *s.Path)
		} else {
			paths[*s.Path] = true
		}
		if len(w.cc.CABundle) != 0 {
			t.Errorf("%s: caBundle is injected by cert-manager, not committed", w.name)
		}

		// Explicit (the API server's defaults are not relied upon).
		if w.failure == nil || *w.failure != want.failure {
			t.Errorf("%s: failurePolicy = %v, want explicit %s", w.name, deref(w.failure), want.failure)
		}
		if w.sideEffects == nil || *w.sideEffects != want.sideEffects {
			t.Errorf("%s: sideEffects = %v, want explicit %s", w.name, deref(w.sideEffects), want.sideEffects)
		}
		if w.timeout == nil || *w.timeout < 1 || *w.timeout > want.maxTimeout {
			t.Errorf("%s: timeoutSeconds = %v, want explicit 1..%d", w.name, deref(w.timeout), want.maxTimeout)
		}
		if w.matchPolicy == nil || *w.matchPolicy != admissionregistrationv1.Equivalent {
			t.Errorf("%s: matchPolicy must be explicitly Equivalent", w.name)
		}
		if !reflect.DeepEqual(w.versions, []string{"v1"}) {
			t.Errorf("%s: admissionReviewVersions = %v, want [v1]", w.name, w.versions)
		}
		if w.objSel != nil {
			t.Errorf("%s: objectSelector: labels are user-controlled, a guard must not depend on them", w.name)
		}
		var conds []string
		for _, c := range w.conds {
			conds = append(conds, c.Name)
			if c.Name == "may-change-seed" && c.Expression != seedSetCondition {
				t.Errorf("%s: matchCondition %s is\n%s\nwant\n%s", w.name, c.Name, c.Expression, seedSetCondition)
			}
			if c.Name == "may-affect-seed" && c.Expression != seedConstraintCondition {
				t.Errorf("%s: matchCondition %s is\n%s\nwant\n%s", w.name, c.Name, c.Expression, seedConstraintCondition)
			}
		}
		if !reflect.DeepEqual(conds, want.conditions) {
			t.Errorf("%s: matchConditions %v, want %v", w.name, conds, want.conditions)
		}

		// Never its own namespace; everything else that is not explicitly
		// excluded (projectsOnly: labelled project namespaces only).
		if want.projectsOnly {
			checkProjectsOnly(t, w.name, w.nsSel, namespace)
		} else if w.nsSel == nil {
			t.Errorf("%s: no namespaceSelector", w.name)
		} else {
			sel, err := metav1.LabelSelectorAsSelector(w.nsSel)
			if err != nil {
				t.Errorf("%s: namespaceSelector: %v", w.name, err)
			} else {
				for _, ns := range append([]string{namespace}, want.excludedAlso...) {
					if sel.Matches(labels.Set{metadataName: ns}) {
						t.Errorf("%s: namespaceSelector does not exclude %s", w.name, ns)
					}
				}
				for _, ns := range []string{"garden", "garden-dev", "default"} {
					if !sel.Matches(labels.Set{metadataName: ns}) {
						t.Errorf("%s: namespaceSelector excludes %s", w.name, ns)
					}
				}
				for _, req := range w.nsSel.MatchExpressions {
					if req.Key != metadataName {
						t.Errorf("%s: namespaceSelector uses label %s; only %s cannot be set by users", w.name, req.Key, metadataName)
					}
				}
				if len(w.nsSel.MatchLabels) > 0 {
					t.Errorf("%s: namespaceSelector.matchLabels: only %s NotIn is expected", w.name, metadataName)
				}
			}
		}

		var got []rule
		for _, r := range w.rules {
			ops := make([]string, 0, len(r.Operations))
			for _, op := range r.Operations {
				ops = append(ops, string(op))
			}
			sort.Strings(ops)
			if r.Scope == nil {
				t.Errorf("%s: rule %v has no explicit scope", w.name, r.Resources)
				continue
			}
			for _, g := range r.APIGroups {
				for _, v := range r.APIVersions {
					for _, res := range r.Resources {
						got = append(got, rule{g, v, res, strings.Join(ops, ","), *r.Scope})
					}
				}
			}
		}
		sortRules(got)
		sortRules(want.rules)
		if !reflect.DeepEqual(got, want.rules) {
			t.Errorf("%s: rules\n got %v\nwant %v", w.name, got, want.rules)
		}
	}
	for name := range webhooks {
		if !seen[name] {
			t.Errorf("webhook %s is missing", name)
		}
	}

	// The Service routes port 443 to the container's webhook port.
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == 443 {
			sp = &svc.Spec.Ports[i]
		}
	}
	if sp == nil {
		t.Fatal("the Service has no port 443")
	}
	dep := find[*appsv1.Deployment](t, docs, "Deployment", namespace, "seedwarden")
	if got := containerPort(t, dep, sp.TargetPort); got != int32(shippedConfig(t).Server.Port) {
		t.Errorf("Service 443 -> container port %d, but the server listens on %d", got, shippedConfig(t).Server.Port)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(dep.Spec.Template.Labels)) {
		t.Error("the Service does not select the Deployment's pods")
	}
}

// Every failurePolicy and timeoutSeconds line has its reasoning in a comment
// right above it.
func TestWebhookDecisionsAreExplained(t *testing.T) {
	for _, f := range []string{"webhook-mutating.yaml", "webhook-validating.yaml"} {
		data, err := os.ReadFile(filepath.Join(manifestsDir, f))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		field := regexp.MustCompile(`^\s*(failurePolicy|timeoutSeconds|sideEffects):`)
		counts := map[string]int{}
		for i, l := range lines {
			m := field.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			counts[m[1]]++
			if strings.Contains(l, "#") {
				t.Errorf("%s:%d: keep the value free of trailing comments; explain it above", f, i+1)
			}
			if i == 0 || !strings.HasPrefix(strings.TrimSpace(lines[i-1]), "#") {
				t.Errorf("%s:%d: %s has no explanation in a comment above it", f, i+1, m[1])
			}
		}
		n := 0
		for _, w := range webhooks {
			if (f == "webhook-mutating.yaml") == (w.config == mutatingConfiguration) {
				n++
			}
		}
		for _, k := range []string{"failurePolicy", "timeoutSeconds", "sideEffects"} {
			if counts[k] != n {
				t.Errorf("%s: %d %s lines for %d webhooks", f, counts[k], k, n)
			}
		}
	}
}

func TestDeployment(t *testing.T) {
	docs := manifests(t)
	cfg := shippedConfig(t)
	dep := find[*appsv1.Deployment](t, docs, "Deployment", namespace, "seedwarden")
	spec := dep.Spec.Template.Spec

	if dep.Spec.Replicas == nil || *dep.Spec.Replicas < 2 {
		t.Errorf("replicas = %v, want at least 2 (fail-closed webhooks)", deref(dep.Spec.Replicas))
	}
	if spec.PriorityClassName != "system-cluster-critical" {
		t.Errorf("priorityClassName = %q, want system-cluster-critical (fail-closed webhooks are in the write path)", spec.PriorityClassName)
	}
	if ru := dep.Spec.Strategy.RollingUpdate; ru == nil || ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 0 {
		t.Error("a rollout must not take a replica away before its successor is ready (maxUnavailable 0)")
	}
	sel, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
	if err != nil || !sel.Matches(labels.Set(dep.Spec.Template.Labels)) {
		t.Errorf("the selector does not match the pod template (%v)", err)
	}
	if spec.ServiceAccountName != "seedwarden" {
		t.Errorf("serviceAccountName = %q", spec.ServiceAccountName)
	}
	// The kubelet kills the pod after the grace period: it must cover the
	// shutdown delay and the server's graceful shutdown (25s,
	// gracefulShutdownTimeout in cmd/webhook).
	delay := shippedConfig(t).Server.ShutdownDelay.Duration
	if delay < time.Second {
		t.Errorf("server.shutdownDelay = %s: the API server's pooled connections would meet a closing server", delay)
	}
	if g, least := deref(spec.TerminationGracePeriodSeconds), int64((delay+25*time.Second)/time.Second)+1; g < least || g > 60 {
		t.Errorf("terminationGracePeriodSeconds = %d, want %d to 60 (server.shutdownDelay %s + 25s graceful shutdown + margin)", g, least, delay)
	}

	// Pod security context.
	psc := spec.SecurityContext
	if psc == nil || !deref(psc.RunAsNonRoot) || deref(psc.RunAsUser) != nonRootUserGID || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext = %+v", psc)
	}

	// Spread: preferred anti-affinity by hostname, topology spread.
	aff := spec.Affinity
	if aff == nil || aff.PodAntiAffinity == nil || len(aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		t.Fatal("no preferred podAntiAffinity")
	}
	term := aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm
	if term.TopologyKey != "kubernetes.io/hostname" || !selects(t, term.LabelSelector, dep) {
		t.Errorf("podAntiAffinity term = %+v", term)
	}
	if len(aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
		t.Error("required anti-affinity would leave a replica Pending on a single-node cluster")
	}
	if len(spec.TopologySpreadConstraints) == 0 || !selects(t, spec.TopologySpreadConstraints[0].LabelSelector, dep) {
		t.Error("no topologySpreadConstraints selecting the pods")
	}

	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers", len(spec.Containers))
	}
	c := spec.Containers[0]
	if want := []string{"serve", "--config", configMount + "/" + configFile}; !reflect.DeepEqual(c.Args, want) {
		t.Errorf("args = %q, want %q", c.Args, want)
	}
	if c.Image == "" || strings.HasSuffix(c.Image, ":latest") || !strings.Contains(c.Image, ":") {
		t.Errorf("image %q: want a pinned tag", c.Image)
	}

	// Container security context.
	sc := c.SecurityContext
	if sc == nil {
		t.Fatal("no container securityContext")
	}
	if !deref(sc.ReadOnlyRootFilesystem) {
		t.Error("readOnlyRootFilesystem is not true")
	}
	if !deref(sc.RunAsNonRoot) || deref(sc.RunAsUser) != nonRootUserGID {
		t.Error("not runAsNonRoot with runAsUser 65532")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("allowPrivilegeEscalation is not false")
	}
	if deref(sc.Privileged) {
		t.Error("privileged")
	}
	if sc.Capabilities == nil || !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
		t.Errorf("capabilities = %+v, want drop ALL", sc.Capabilities)
	}
	if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Error("seccompProfile is not RuntimeDefault")
	}

	// Resources.
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, okReq := c.Resources.Requests[r]
		lim, okLim := c.Resources.Limits[r]
		if !okReq || !okLim {
			t.Errorf("%s: request and limit must both be set", r)
		} else if req.Cmp(lim) > 0 {
			t.Errorf("%s: request %s above limit %s", r, req.String(), lim.String())
		}
	}

	// Ports and probes agree with the configuration file.
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	wantPorts := map[string]int32{
		"webhook": int32(cfg.Server.Port),
		"metrics": portOf(t, cfg.Metrics.BindAddress),
		"health":  portOf(t, cfg.Health.BindAddress),
	}
	if !reflect.DeepEqual(ports, wantPorts) {
		t.Errorf("container ports %v, want %v (from %s)", ports, wantPorts, configFile)
	}
	for name, p := range map[string]*corev1.Probe{"/readyz": c.ReadinessProbe, "/healthz": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("no HTTP probe for %s", name)
			continue
		}
		if p.HTTPGet.Path != name || containerPort(t, dep, p.HTTPGet.Port) != wantPorts["health"] {
			t.Errorf("probe %s: %s on %s", name, p.HTTPGet.Path, p.HTTPGet.Port.String())
		}
		if p.HTTPGet.Scheme != "" && p.HTTPGet.Scheme != corev1.URISchemeHTTP {
			t.Errorf("probe %s: scheme %s", name, p.HTTPGet.Scheme)
		}
	}

	// Volumes: the cert-manager Secret at certDir, the configuration, the
	// placement key; nothing writable but /tmp.
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m
		if m.SubPath != "" {
			t.Errorf("mount %s uses subPath: updates (certificate renewals) would never reach it", m.MountPath)
		}
		v, ok := vols[m.Name]
		if !ok {
			t.Errorf("mount %s: no volume %s", m.MountPath, m.Name)
			continue
		}
		if v.EmptyDir == nil && !m.ReadOnly {
			t.Errorf("mount %s is writable", m.MountPath)
		}
	}
	checkSecretMount := func(path, secret string) {
		t.Helper()
		m, ok := mounts[path]
		if !ok {
			t.Errorf("nothing mounted at %s", path)
			return
		}
		v := vols[m.Name]
		if v.Secret == nil || v.Secret.SecretName != secret {
			t.Errorf("%s: want Secret %s, got %+v", path, secret, v.VolumeSource)
			return
		}
		if v.Secret.Optional != nil && *v.Secret.Optional {
			t.Errorf("%s: Secret %s must not be optional", path, secret)
		}
	}
	checkSecretMount(cfg.Server.CertDir, certSecret)
	checkSecretMount("/etc/seedwarden/placement-key", placementKey)
	if m, ok := mounts[configMount]; !ok || vols[m.Name].ConfigMap == nil || vols[m.Name].ConfigMap.Name != configName {
		t.Errorf("ConfigMap %s is not mounted at %s", configName, configMount)
	}

	// The certificate Secret is the one cert-manager writes.
	cert := findU(t, docs, "Certificate", namespace, certificate)
	if s, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName"); s != certSecret {
		t.Errorf("Certificate %s writes Secret %q, the Deployment mounts %q", certificate, s, certSecret)
	}
}

func TestPodDisruptionBudget(t *testing.T) {
	docs := manifests(t)
	pdb := find[*policyv1.PodDisruptionBudget](t, docs, "PodDisruptionBudget", namespace, "seedwarden")
	dep := find[*appsv1.Deployment](t, docs, "Deployment", namespace, "seedwarden")
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 || pdb.Spec.MaxUnavailable != nil {
		t.Errorf("want minAvailable 1, got %+v", pdb.Spec)
	}
	if !selects(t, pdb.Spec.Selector, dep) {
		t.Error("the PodDisruptionBudget does not select the pods")
	}
}

func TestCertificates(t *testing.T) {
	docs := manifests(t)
	cert := findU(t, docs, "Certificate", namespace, certificate)
	want := map[string]any{
		"duration":    "2160h",
		"renewBefore": "360h",
	}
	for k, v := range want {
		if got := cert.Object["spec"].(map[string]any)[k]; got != v {
			t.Errorf("%s = %v, want %v", k, got, v)
		}
	}
	pk, _, _ := unstructured.NestedMap(cert.Object, "spec", "privateKey")
	if pk["algorithm"] != "ECDSA" || pk["rotationPolicy"] != "Always" {
		t.Errorf("privateKey = %v", pk)
	}
	if size, _, _ := unstructured.NestedInt64(cert.Object, "spec", "privateKey", "size"); size != 256 {
		t.Errorf("privateKey.size = %d", size)
	}
	// Chain: webhook <- CA Issuer <- CA Certificate <- self-signed Issuer.
	issuer, _, _ := unstructured.NestedString(cert.Object, "spec", "issuerRef", "name")
	caIssuer := findU(t, docs, "Issuer", namespace, issuer)
	caSecret, _, _ := unstructured.NestedString(caIssuer.Object, "spec", "ca", "secretName")
	var ca *unstructured.Unstructured
	for _, d := range docs {
		if s, _, _ := unstructured.NestedString(d.u.Object, "spec", "secretName"); d.u.GetKind() == "Certificate" && s == caSecret {
			ca = d.u
		}
	}
	if ca == nil {
		t.Fatalf("no Certificate writes the CA Secret %q of Issuer %s", caSecret, issuer)
	}
	if isCA, _, _ := unstructured.NestedBool(ca.Object, "spec", "isCA"); !isCA {
		t.Errorf("%s is not a CA", ca.GetName())
	}
	root, _, _ := unstructured.NestedString(ca.Object, "spec", "issuerRef", "name")
	if _, found, _ := unstructured.NestedMap(findU(t, docs, "Issuer", namespace, root).Object, "spec", "selfSigned"); !found {
		t.Errorf("Issuer %s is not self-signed", root)
	}
}

func TestServiceMonitor(t *testing.T) {
	docs := manifests(t)
	sm := findU(t, docs, "ServiceMonitor", namespace, "seedwarden")
	svc := find[*corev1.Service](t, docs, "Service", namespace, serviceName)
	eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(eps) != 1 {
		t.Fatalf("%d endpoints", len(eps))
	}
	ep := eps[0].(map[string]any)
	// authorization, not the deprecated bearerTokenFile: the token of the
	// scraper's ServiceAccount, from its token Secret.
	wantAuth := map[string]any{"type": "Bearer", "credentials": map[string]any{"name": metricsToken, "key": "token"}}
	if ep["scheme"] != "https" || !reflect.DeepEqual(ep["authorization"], wantAuth) || ep["bearerTokenFile"] != nil {
		t.Errorf("endpoint = %v: want HTTPS with authorization %v", ep, wantAuth)
	}
	secret := find[*corev1.Secret](t, docs, "Secret", namespace, metricsToken)
	if secret.Type != corev1.SecretTypeServiceAccountToken || secret.Annotations[corev1.ServiceAccountNameKey] != metricsScraper {
		t.Errorf("Secret %s: type %s, for ServiceAccount %q; want a token of %s", metricsToken, secret.Type, secret.Annotations[corev1.ServiceAccountNameKey], metricsScraper)
	}
	var metricsPort *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Name == ep["port"] {
			metricsPort = &svc.Spec.Ports[i]
		}
	}
	if metricsPort == nil {
		t.Fatalf("the Service has no port %v", ep["port"])
	}
	dep := find[*appsv1.Deployment](t, docs, "Deployment", namespace, "seedwarden")
	if got, want := containerPort(t, dep, metricsPort.TargetPort), portOf(t, shippedConfig(t).Metrics.BindAddress); got != want {
		t.Errorf("metrics: Service -> container port %d, the server listens on %d", got, want)
	}
	ml, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	if !labels.SelectorFromSet(ml).Matches(labels.Set(svc.Labels)) {
		t.Error("the ServiceMonitor does not select the Service")
	}
}

// The headroom alert compares the metrics seedwarden exports, per profile,
// with the lowest replica's headroom, and names the profile.
func TestPrometheusRule(t *testing.T) {
	rule := findU(t, manifests(t), "PrometheusRule", namespace, "seedwarden")
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	var alert map[string]any
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rules {
			if r.(map[string]any)["alert"] == "SeedwardenHeadroomLow" {
				alert = r.(map[string]any)
			}
		}
	}
	if alert == nil {
		t.Fatal("no alert SeedwardenHeadroomLow")
	}
	expr, _ := alert["expr"].(string)
	for _, want := range []string{
		"min by (profile) (" + metrics.HeadroomShootsName + ")",
		"< on (profile)",
		"by (profile) (" + metrics.HeadroomAlertThresholdName + ")",
	} {
		if !strings.Contains(expr, want) {
			t.Errorf("expr %q does not contain %q", expr, want)
		}
	}
	if strings.Count(expr, "(") != strings.Count(expr, ")") {
		t.Errorf("unbalanced parentheses in %s", expr)
	}
	if metrics.HeadroomProfileLabel != "profile" {
		t.Errorf("the metrics' profile label is %q", metrics.HeadroomProfileLabel)
	}
	if alert["for"] != "15m" {
		t.Errorf("for = %v, want 15m", alert["for"])
	}
	ann, _, _ := unstructured.NestedStringMap(alert, "annotations")
	for _, k := range []string{"summary", "description"} {
		if !strings.Contains(ann[k], "{{ $labels.profile }}") {
			t.Errorf("annotation %s does not name the profile: %q", k, ann[k])
		}
	}
}

// RBAC is exactly what the server uses: anything more must be added here on
// purpose, with the code that needs it.
func TestRBACIsLeastPrivilege(t *testing.T) {
	docs := manifests(t)
	type grant struct{ ns, group, resource, verb, name string }
	flatten := func(ns string, rules []rbacv1.PolicyRule) []grant {
		var out []grant
		for _, r := range rules {
			for _, v := range r.Verbs {
				for _, u := range r.NonResourceURLs {
					out = append(out, grant{ns, "", u, v, ""})
				}
				for _, g := range r.APIGroups {
					for _, res := range r.Resources {
						names := r.ResourceNames
						if len(names) == 0 {
							names = []string{""}
						}
						for _, n := range names {
							out = append(out, grant{ns, g, res, v, n})
						}
					}
				}
			}
		}
		return out
	}
	got := map[string][]grant{}
	for _, d := range docs {
		switch o := d.typed.(type) {
		case *rbacv1.ClusterRole:
			got["ClusterRole/"+o.Name] = flatten("", o.Rules)
		case *rbacv1.Role:
			got["Role/"+o.Namespace+"/"+o.Name] = flatten(o.Namespace, o.Rules)
		}
	}
	want := map[string][]grant{}
	add := func(role, ns, group string, resources []string, verbs []string, name string) {
		for _, r := range resources {
			for _, v := range verbs {
				want[role] = append(want[role], grant{ns, group, r, v, name})
			}
		}
	}
	read := []string{"get", "list", "watch"}
	add("ClusterRole/seedwarden", "", "core.gardener.cloud", []string{"seeds", "shoots", "cloudprofiles", "namespacedcloudprofiles", "projects"}, read, "")
	cfg := shippedConfig(t)
	// SubjectAccessReviews: the binding webhook asks about the requesting
	// user, and the secure metrics endpoint about the scraper, whose token
	// it checks with a TokenReview first.
	if cfg.BindingEnabled() || cfg.MetricsSecure() {
		add("ClusterRole/seedwarden", "", "authorization.k8s.io", []string{"subjectaccessreviews"}, []string{"create"}, "")
	}
	if cfg.MetricsSecure() {
		add("ClusterRole/seedwarden", "", "authentication.k8s.io", []string{"tokenreviews"}, []string{"create"}, "")
	}
	add("ClusterRole/seedwarden", "", "", []string{"events"}, []string{"create", "patch"}, "")
	add("ClusterRole/seedwarden", "", "events.k8s.io", []string{"events"}, []string{"create", "patch"}, "")
	// The retry controller, as the shipped configuration runs it: binding
	// through shoots/binding, status.lastOperation through shoots/status.
	// Only bindMode update (Shoots from a CRD) would patch shoots itself.
	if !cfg.PendingShootsEnabled() {
		t.Fatal("the shipped configuration disables pendingShoots: drop the controller's permissions and this check")
	}
	add("ClusterRole/seedwarden", "", "core.gardener.cloud", []string{"shoots/status"}, []string{"patch"}, "")
	switch cfg.PendingShoots.BindMode {
	case "binding":
		add("ClusterRole/seedwarden", "", "core.gardener.cloud", []string{"shoots/binding"}, []string{"update"}, "")
	case "update":
		add("ClusterRole/seedwarden", "", "core.gardener.cloud", []string{"shoots"}, []string{"patch"}, "")
	default:
		t.Fatalf("pendingShoots.bindMode %q", cfg.PendingShoots.BindMode)
	}
	want["ClusterRole/seedwarden-metrics-reader"] = []grant{{"", "", "/metrics", "get", ""}}
	// Leader election: the Lease the configuration names, in the pods' own
	// namespace; only create cannot be limited by name.
	if !cfg.LeaderElectionEnabled() {
		t.Fatal("the shipped configuration disables leader election, but runs two replicas")
	}
	if ns := cfg.LeaderElection.Namespace; ns != "" && ns != namespace {
		t.Fatalf("leaderElection.namespace %q: the Role grants Leases in %s only", ns, namespace)
	}
	add("Role/seedwarden/seedwarden", namespace, "coordination.k8s.io", []string{"leases"}, []string{"get", "update"}, cfg.LeaderElection.ID)
	add("Role/seedwarden/seedwarden", namespace, "coordination.k8s.io", []string{"leases"}, []string{"create"}, "")
	add("Role/seedwarden/seedwarden", namespace, "", []string{"secrets"}, read, placementKey)
	// The certificate watcher: only the Certificate the configuration names,
	// in the namespace it names.
	if !cfg.Certificate.Watched() {
		t.Fatal("the shipped configuration watches no Certificate: drop its permission and this check")
	}
	if cfg.Certificate.Namespace != namespace || cfg.Certificate.Name != certificate {
		t.Fatalf("certificate %s/%s: the Role grants %s/%s", cfg.Certificate.Namespace, cfg.Certificate.Name, namespace, certificate)
	}
	add("Role/seedwarden/seedwarden", namespace, "cert-manager.io", []string{"certificates"}, read, cfg.Certificate.Name)
	// Capacity reservations across replicas: get, create and update of
	// ConfigMaps in the reservation namespace (names follow the seeds).
	reservationNS := ""
	if cfg.CapacityEnabled() && cfg.Capacity.APIServer() {
		reservationNS = cfg.Capacity.ReservationNamespace
		if reservationNS != namespace {
			t.Fatalf("capacity.reservationNamespace %q: the Role grants ConfigMaps in %s only", reservationNS, namespace)
		}
		add("Role/seedwarden/seedwarden", namespace, "", []string{"configmaps"}, []string{"get", "create", "update"}, "")
	}
	add("Role/garden/seedwarden-region-config", gardenNS, "", []string{"configmaps"}, read, "")

	sortGrants := func(g []grant) {
		sort.Slice(g, func(i, j int) bool {
			return strings.Join([]string{g[i].ns, g[i].group, g[i].resource, g[i].verb, g[i].name}, "|") < strings.Join([]string{g[j].ns, g[j].group, g[j].resource, g[j].verb, g[j].name}, "|")
		})
	}
	for role := range want {
		sortGrants(want[role])
		sortGrants(got[role])
		if !reflect.DeepEqual(got[role], want[role]) {
			t.Errorf("%s:\n got %v\nwant %v", role, got[role], want[role])
		}
	}
	for role := range got {
		if _, ok := want[role]; !ok {
			t.Errorf("unexpected %s", role)
		}
	}
	for role, gs := range got {
		for _, g := range gs {
			if g.group == "*" || g.resource == "*" || g.verb == "*" {
				t.Errorf("%s: wildcard %+v", role, g)
			}
			if g.resource == "secrets" && g.name == "" {
				t.Errorf("%s: Secrets without resourceNames", role)
			}
			switch {
			case g.resource != "configmaps":
			case g.ns == gardenNS:
			case g.ns == reservationNS && reservationNS != "" && g.verb != "list" && g.verb != "watch" && g.verb != "delete":
			default:
				t.Errorf("%s: %s on ConfigMaps outside the garden namespace (and the reservation namespace)", role, g.verb)
			}
			if g.resource == "leases" && g.verb != "create" && g.name == "" {
				t.Errorf("%s: Leases without resourceNames (%s)", role, g.verb)
			}
			if g.group == "core.gardener.cloud" && g.resource == "shoots" && g.verb != "get" && g.verb != "list" && g.verb != "watch" &&
				cfg.PendingShoots.BindMode != "update" {
				t.Errorf("%s: %s on shoots, which only bindMode update needs", role, g.verb)
			}
		}
	}

	// Bindings: each role to the seedwarden ServiceAccount, in the role's namespace.
	sa := rbacv1.Subject{Kind: "ServiceAccount", Name: "seedwarden", Namespace: namespace}
	bound := map[string]bool{}
	for _, d := range docs {
		switch o := d.typed.(type) {
		case *rbacv1.ClusterRoleBinding:
			if o.RoleRef.Name == "seedwarden-metrics-reader" {
				// Only the scraper's ServiceAccount (servicemonitor.yaml) reads the metrics.
				scraper := rbacv1.Subject{Kind: "ServiceAccount", Name: metricsScraper, Namespace: namespace}
				if !reflect.DeepEqual(o.Subjects, []rbacv1.Subject{scraper}) {
					t.Errorf("ClusterRoleBinding %s: %+v, want only %s", o.Name, o.Subjects, metricsScraper)
				}
				continue
			}
			if !reflect.DeepEqual(o.Subjects, []rbacv1.Subject{sa}) || o.RoleRef.Kind != "ClusterRole" {
				t.Errorf("ClusterRoleBinding %s: %+v -> %+v", o.Name, o.Subjects, o.RoleRef)
			}
			bound["ClusterRole/"+o.RoleRef.Name] = true
		case *rbacv1.RoleBinding:
			if !reflect.DeepEqual(o.Subjects, []rbacv1.Subject{sa}) || o.RoleRef.Kind != "Role" {
				t.Errorf("RoleBinding %s/%s: %+v -> %+v", o.Namespace, o.Name, o.Subjects, o.RoleRef)
			}
			bound["Role/"+o.Namespace+"/"+o.RoleRef.Name] = true
		}
	}
	for role := range want {
		// The metrics reader is for the scraper, bound above.
		if role != "ClusterRole/seedwarden-metrics-reader" && !bound[role] {
			t.Errorf("%s is not bound to the seedwarden ServiceAccount", role)
		}
	}
	if bound["ClusterRole/seedwarden-metrics-reader"] {
		t.Error("the metrics reader is bound to seedwarden itself")
	}
}

func TestShippedConfig(t *testing.T) {
	cfg := shippedConfig(t)
	if cfg.Server.Port != 9443 || cfg.Server.CertDir != "/etc/seedwarden/certs" {
		t.Errorf("server = %+v", cfg.Server)
	}
	if cfg.Health.BindAddress != ":8081" {
		t.Errorf("health.bindAddress = %q", cfg.Health.BindAddress)
	}
	if portOf(t, cfg.Metrics.BindAddress) != 8443 {
		t.Errorf("metrics.bindAddress = %q", cfg.Metrics.BindAddress)
	}
	// Prometheus scrapes from another pod: HTTPS with authentication and
	// authorization (servicemonitor.yaml, the metrics-reader ClusterRole).
	if !cfg.MetricsSecure() {
		t.Error("metrics.secure is false: the ServiceMonitor could not scrape a loopback address")
	}
	// Two replicas: capacity is reserved through the API server.
	if !cfg.CapacityEnabled() || !cfg.Capacity.APIServer() {
		t.Errorf("capacity = %+v: two replicas need coordination apiserver, or together they can overfill a seed", cfg.Capacity)
	}
	// The Certificate watched is the one whose Secret is mounted at certDir
	// (TestDeployment checks the mount).
	if cfg.Certificate.Namespace != namespace || cfg.Certificate.Name != certificate {
		t.Errorf("certificate = %s/%s, want %s/%s", cfg.Certificate.Namespace, cfg.Certificate.Name, namespace, certificate)
	}
	if cfg.GardenNamespace != gardenNS {
		t.Errorf("gardenNamespace %q: rbac-garden.yaml grants %s", cfg.GardenNamespace, gardenNS)
	}
	// Against a cluster the server refuses to start without the key; it is
	// the Secret the Deployment mounts.
	if cfg.Placement.KeyFile != "/etc/seedwarden/placement-key/key" {
		t.Errorf("placement.keyFile = %q, want the mounted Secret %s (key \"key\")", cfg.Placement.KeyFile, placementKey)
	}
	// Real Gardener serves shoots/binding; update is for CRD test clusters.
	if !cfg.PendingShootsEnabled() || cfg.PendingShoots.BindMode != "binding" {
		t.Errorf("pendingShoots = %+v, want enabled with bindMode binding", cfg.PendingShoots)
	}
	// The Lease goes to the pod's namespace, which the Deployment passes in.
	dep := find[*appsv1.Deployment](t, manifests(t), "Deployment", namespace, "seedwarden")
	podNS := false
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		if e.Name == config.PodNamespaceEnv && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
			podNS = true
		}
	}
	if cfg.LeaderElection.Namespace == "" && !podNS {
		t.Errorf("leaderElection.namespace is empty but the Deployment does not set %s from metadata.namespace", config.PodNamespaceEnv)
	}
	data, err := os.ReadFile(filepath.Join(manifestsDir, configFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("apiVersion: "+config.APIVersion)) || !bytes.Contains(data, []byte("kind: "+config.Kind)) {
		t.Errorf("%s does not name apiVersion %s, kind %s", configFile, config.APIVersion, config.Kind)
	}
}

func TestGrafanaDashboard(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(grafanaDir, dashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			ID      int    `json:"id"`
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr  string `json:"expr"`
				RefID string `json:"refId"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatal(err)
	}
	if dash.UID == "" || dash.Title == "" {
		t.Error("no uid or title")
	}
	var exprs []string
	ids := map[int]bool{}
	for _, p := range dash.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if strings.Count(tg.Expr, "(") != strings.Count(tg.Expr, ")") {
				t.Errorf("panel %q: unbalanced parentheses in %s", p.Title, tg.Expr)
			}
			exprs = append(exprs, tg.Expr)
		}
	}
	all := strings.Join(exprs, "\n")
	for _, m := range []string{
		metrics.DecisionsTotalName,
		metrics.DurationName + "_bucket",
		metrics.SeedChargedShootsName,
		metrics.SeedAllocatableShootsName,
		metrics.SeedShootsName,
		metrics.SeedUtilizationName,
		metrics.HeadroomShootsName,
		metrics.HeadroomAlertThresholdName,
		metrics.HeadroomDurationName + "_bucket",
		metrics.HeadroomLastSuccessName,
		"seedwarden_rejected_resources_total",
		"seedwarden_certificate_expiry_timestamp_seconds",
		"seedwarden_certificate_ready",
		"seedwarden_pending_shoots",
		metrics.CacheStaleSecondsName,
		"controller_runtime_webhook_requests_total",
		"controller_runtime_webhook_latency_seconds_bucket",
	} {
		if !strings.Contains(all, m) {
			t.Errorf("no panel queries %s", m)
		}
	}
	if !strings.Contains(all, "histogram_quantile(0.99, sum by (le) (rate("+metrics.DurationName+"_bucket") ||
		!strings.Contains(all, "histogram_quantile(0.5, sum by (le) (rate("+metrics.DurationName+"_bucket") {
		t.Error("no p50/p99 of the scheduling duration")
	}

	k := readKustomization(t, grafanaDir)
	if len(k.ConfigMapGenerator) != 1 || k.ConfigMapGenerator[0].Options.Labels["grafana_dashboard"] == "" ||
		!reflect.DeepEqual(k.ConfigMapGenerator[0].Files, []string{dashboardFile}) {
		t.Errorf("the dashboard ConfigMap generator: %+v", k.ConfigMapGenerator)
	}
}

// kustomize itself (kubectl's built-in copy) builds the base.
func TestKustomizeBuild(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not on PATH")
	}
	out, err := exec.Command(kubectl, "kustomize", manifestsDir).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl kustomize: %v\n%s", err, out)
	}
	built := buildDocs(t, out)
	if want := len(manifests(t)) + 2; len(built) != want {
		t.Errorf("kustomize built %d objects, want %d (the files plus two generated ConfigMaps)", len(built), want)
	}
	var cm *corev1.ConfigMap
	var dep *appsv1.Deployment
	for _, d := range built {
		switch o := d.typed.(type) {
		case *corev1.ConfigMap:
			if strings.HasPrefix(o.Name, configName+"-") {
				cm = o
			}
		case *appsv1.Deployment:
			dep = o
		}
	}
	if cm == nil || dep == nil {
		t.Fatal("no configuration ConfigMap or Deployment in the build")
	}
	if cm.Namespace != namespace {
		t.Errorf("ConfigMap %s in namespace %q", cm.Name, cm.Namespace)
	}
	if _, err := config.Parse([]byte(cm.Data[configFile])); err != nil {
		t.Errorf("built ConfigMap: %v", err)
	}
	found := false
	for _, v := range dep.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == cm.Name {
			found = true
		}
	}
	if !found {
		t.Errorf("the Deployment does not mount the generated ConfigMap %s", cm.Name)
	}
}

func buildDocs(t testing.TB, out []byte) []doc {
	t.Helper()
	f := filepath.Join(t.TempDir(), "built.yaml")
	if err := os.WriteFile(f, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return readDocs(t, f)
}

// The objects Kubernetes itself validates (everything but the cert-manager
// and Prometheus Operator kinds) are accepted by a real API server (server-side
// dry run): webhook configurations, Deployment, RBAC and all.
func TestAPIServerAcceptsManifests(t *testing.T) {
	_, cfg := testenv.Start(t)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	docs := append(manifests(t), readDocs(t, filepath.Join(networkPolicyDir, networkPolicyFile))...)
	// Namespaces for real (the namespaced objects need them), the rest dry run.
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gardenNS}}); err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if d.u.GetKind() == "Namespace" {
			if err := c.Create(ctx, d.u.DeepCopy(), client.FieldValidation("Strict")); err != nil {
				t.Fatalf("%s: %v", d, err)
			}
		}
	}
	n := 0
	for _, d := range docs {
		if d.typed == nil || d.u.GetKind() == "Namespace" {
			continue
		}
		if err := c.Create(ctx, d.u.DeepCopy(), client.DryRunAll, client.FieldValidation("Strict")); err != nil {
			t.Errorf("%s: %v", d, err)
		}
		n++
	}
	t.Logf("%d objects accepted (dry run)", n)
}

func selects(t testing.TB, ls *metav1.LabelSelector, dep *appsv1.Deployment) bool {
	t.Helper()
	if ls == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		t.Error(err)
		return false
	}
	return !sel.Empty() && sel.Matches(labels.Set(dep.Spec.Template.Labels))
}

// containerPort resolves a named or numeric port of the Deployment's container.
func containerPort(t testing.TB, dep *appsv1.Deployment, p intstr.IntOrString) int32 {
	t.Helper()
	if p.Type == intstr.Int {
		return p.IntVal
	}
	for _, c := range dep.Spec.Template.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.Name == p.StrVal {
				return cp.ContainerPort
			}
		}
	}
	t.Errorf("no container port named %q", p.StrVal)
	return 0
}

// portOf is the port of a bind address like ":8443" or "0.0.0.0:8443".
func portOf(t testing.TB, addr string) int32 {
	t.Helper()
	i := strings.LastIndex(addr, ":")
	var p int32
	for _, r := range addr[i+1:] {
		if r < '0' || r > '9' {
			t.Errorf("bind address %q has no numeric port", addr)
			return 0
		}
		p = p*10 + int32(r-'0')
	}
	return p
}

func sortRules(r []rule) {
	sort.Slice(r, func(i, j int) bool {
		a, b := r[i], r[j]
		return strings.Join([]string{a.group, a.version, a.resource, a.ops, string(a.scope)}, "|") <
			strings.Join([]string{b.group, b.version, b.resource, b.ops, string(b.scope)}, "|")
	})
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// checkProjectsOnly: the selector takes labelled project namespaces (not
// Gardener's own, labelled app=gardener) and nothing unlabelled: not
// seedwarden's namespace, garden, kube-system or cert-manager.
func checkProjectsOnly(t *testing.T, name string, nsSel *metav1.LabelSelector, namespace string) {
	t.Helper()
	if nsSel == nil {
		t.Errorf("%s: no namespaceSelector", name)
		return
	}
	sel, err := metav1.LabelSelectorAsSelector(nsSel)
	if err != nil {
		t.Errorf("%s: namespaceSelector: %v", name, err)
		return
	}
	project := labels.Set{metadataName: "garden-dev", "gardener.cloud/role": "project", "project.gardener.cloud/name": "dev"}
	if !sel.Matches(project) {
		t.Errorf("%s: namespaceSelector excludes the project namespace %v", name, project)
	}
	gardenerOwn := labels.Set{metadataName: "garden", "gardener.cloud/role": "project", "app": "gardener"}
	if sel.Matches(gardenerOwn) {
		t.Errorf("%s: namespaceSelector selects %v", name, gardenerOwn)
	}
	for _, ns := range []string{namespace, "garden", "kube-system", "cert-manager", "default"} {
		if sel.Matches(labels.Set{metadataName: ns}) {
			t.Errorf("%s: namespaceSelector selects the unlabelled namespace %s", name, ns)
		}
	}
}
