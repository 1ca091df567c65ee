package manifests_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/testenv"
)

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
		{"CustomResourceDefinition", "", "seedautoscalers.autoscaling.seedwarden.io"},
		{"CustomResourceDefinition", "", "seeddrains.operations.seedwarden.io"},
		{"ServiceAccount", namespace, "seedwarden"},
		{"ClusterRole", "", "seedwarden"},
		{"ClusterRole", "", "seedwarden-metrics-reader"},
		{"ClusterRoleBinding", "", "seedwarden"},
		{"ClusterRole", "", "seedwarden-autoscaler"},
		{"ClusterRoleBinding", "", "seedwarden-autoscaler"},
		{"ClusterRole", "", "seedwarden-seeddrain"},
		{"ClusterRoleBinding", "", "seedwarden-seeddrain"},
		{"ClusterRole", "", "seedwarden-audit"},
		{"ClusterRoleBinding", "", "seedwarden-audit"},
		{"Role", namespace, "seedwarden"},
		{"RoleBinding", namespace, "seedwarden"},
		{"Role", gardenNS, "seedwarden-region-config"},
		{"RoleBinding", gardenNS, "seedwarden-region-config"},
		{"Issuer", namespace, "seedwarden-selfsigned"},
		{"Certificate", namespace, "seedwarden-ca"},
		{"Issuer", namespace, "seedwarden-ca"},
		{"Certificate", namespace, certificate},
		{"Issuer", namespace, "seedwarden-client-selfsigned"},
		{"Certificate", namespace, "seedwarden-client-ca"},
		{"Issuer", namespace, "seedwarden-client-ca"},
		{"Certificate", namespace, "seedwarden-client-gardener-apiserver"},
		{"Certificate", namespace, "seedwarden-client-kube-apiserver"},
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

	docs := append(manifests(t), readDocs(t, filepath.Join(networkPolicyDir, networkPolicyFile), filepath.Join(resourceSizeDir, resourceSizeFile))...)
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
