package install

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/landscape"
)

// env is one test's garden: its own etcd and kube-apiserver (cluster egress
// through the CONNECT proxy), Gardener's CRDs of e2e/crds with the example
// landscape, the Prometheus Operator's kinds as minimal CRDs, and
// cert-manager's controller and cainjector. Each test that installs gets its
// own, so installs never meet.
type env struct {
	dir   string
	proxy *egressProxy
	cp    *controlPlane
	c     client.Client
	cs    kubernetes.Interface
	cm    *certManager
}

// Namespaces of the garden: the garden namespace and the project's, as the
// example landscape has them.
const (
	gardenNamespace  = "garden"
	projectNamespace = "garden-dev"
)

// newEnv starts a garden with cert-manager running: what docs/install.md
// lists under Prerequisites, before its step 1 ends.
func newEnv(t *testing.T) *env {
	t.Helper()
	start := time.Now()
	e := &env{dir: keptDir(t, "env")}
	e.proxy = startEgressProxy(t, e.dir)
	e.cp = startControlPlane(t, e.proxy.socket())
	e.connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	gardener := readDir(t, filepath.Join(tools.root, "e2e", "crds"))
	must(t, apply(ctx, e.c, append(gardener, minimalCRD("monitoring.coreos.com", "ServiceMonitor", "servicemonitors"),
		minimalCRD("monitoring.coreos.com", "PrometheusRule", "prometheusrules"))))
	for _, crd := range gardener {
		waitEstablished(t, e.c, crd.GetName())
	}
	e.loadLandscape(ctx, t)
	e.cm = startCertManager(t, e)
	t.Logf("garden with cert-manager up in %s (kube-apiserver %s, egress %s)", time.Since(start).Round(time.Millisecond), e.cp.admin.Host, e.proxy.socket())
	return e
}

// keptDir is a new folder for t's files and its processes' logs, removed
// when t passes and kept (and named in t's log) when it fails.
func keptDir(t *testing.T, what string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "seedwarden-install-e2e-"+what+"-")
	must(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s kept: %s", what, dir)
			return
		}
		os.RemoveAll(dir)
	})
	return dir
}

// connect makes the admin's clients.
func (e *env) connect(t *testing.T) {
	t.Helper()
	scheme := cache.NewScheme()
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	var err error
	e.c, err = client.New(e.cp.admin, client.Options{Scheme: scheme})
	must(t, err)
	e.cs, err = kubernetes.NewForConfig(e.cp.admin)
	must(t, err)
}

// loadLandscape creates the namespaces and examples/landscape.yaml
// (statuses through the status subresource).
func (e *env) loadLandscape(ctx context.Context, t *testing.T) {
	t.Helper()
	for _, ns := range []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: gardenNamespace}},
		{ObjectMeta: metav1.ObjectMeta{Name: projectNamespace, Labels: map[string]string{"gardener.cloud/role": "project", "project.gardener.cloud/name": "dev"}}},
	} {
		must(t, e.c.Create(ctx, ns))
	}
	objs, err := landscape.ReadFile(filepath.Join(tools.root, "examples", "landscape.yaml"), nil)
	must(t, err)
	for _, o := range objs {
		want := o.DeepCopyObject().(client.Object)
		must(t, e.c.Create(ctx, o))
		var status bool
		switch w := want.(type) {
		case *api.Seed:
			o.(*api.Seed).Status, status = w.Status, true
		case *api.Shoot:
			o.(*api.Shoot).Status, status = w.Status, true
		}
		if status {
			must(t, e.c.Status().Update(ctx, o))
		}
	}
}

// minimalCRD is a CRD of kind that accepts any spec (the Prometheus
// Operator's kinds: nothing here reads them but the tests).
func minimalCRD(group, kind, plural string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	u.SetName(plural + "." + group)
	u.Object["spec"] = map[string]any{
		"group": group, "scope": "Namespaced",
		"names": map[string]any{"kind": kind, "plural": plural, "singular": strings.ToLower(kind), "listKind": kind + "List"},
		"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
	}
	return u
}
