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
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/seedwarden/seedwarden/internal/config"
)

const (
	manifestsDir = "manifests"
	grafanaDir   = "grafana"
	// networkPolicyDir is the opt-in kustomize Component of the NetworkPolicy.
	networkPolicyDir  = "networkpolicy"
	networkPolicyFile = "networkpolicy.yaml"
	// resourceSizeDir is the opt-in kustomize Component of the
	// resource-size webhooks, registered where size limits are configured.
	resourceSizeDir   = "resource-size"
	resourceSizeFile  = "webhook-resource-size.yaml"
	resourceSizeHooks = "seedwarden-resource-size"

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

// doc is one YAML document of a manifest file.
type doc struct {
	file  string
	raw   []byte
	u     *unstructured.Unstructured
	typed runtime.Object // nil for kinds client-go does not know (cert-manager, ServiceMonitor)
}

func (d doc) String() string { return d.file + ": " + d.u.GetKind() + " " + d.u.GetName() }

var strictDecoder = serializer.NewCodecFactory(manifestScheme(), serializer.EnableStrict).UniversalDeserializer()

// manifestScheme knows client-go's kinds and CustomResourceDefinitions.
func manifestScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	return s
}

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

// requireComponentOf fails t unless dir/kustomization.yaml is a kustomize
// Component of exactly the file want.
func requireComponentOf(t testing.TB, dir, want string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
	}
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		t.Fatalf("%s/kustomization.yaml: %v", dir, err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1alpha1" || k.Kind != "Component" || !slices.Equal(k.Resources, []string{want}) {
		t.Fatalf("%s/kustomization.yaml: %+v, want a Component of %s", dir, k, want)
	}
}

// resourceSizeConfiguration is the resource-size component's
// ValidatingWebhookConfiguration.
func resourceSizeConfiguration(t testing.TB) *admissionregistrationv1.ValidatingWebhookConfiguration {
	t.Helper()
	docs := readDocs(t, filepath.Join(resourceSizeDir, resourceSizeFile))
	if len(docs) != 1 {
		t.Fatalf("%s: %d documents, want the webhook configuration alone", resourceSizeFile, len(docs))
	}
	return find[*admissionregistrationv1.ValidatingWebhookConfiguration](t, docs, validatingConfiguration, "", resourceSizeHooks)
}

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

func buildDocs(t testing.TB, out []byte) []doc {
	t.Helper()
	f := filepath.Join(t.TempDir(), "built.yaml")
	if err := os.WriteFile(f, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return readDocs(t, f)
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

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
