package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/testenv"
)

// uninstallCommand is docs/install.md's first uninstall step: the webhook
// configurations, by label. The test runs the selector the page shows, so
// the page and the test cannot drift apart.
var uninstallCommand = regexp.MustCompile(`(?m)^\s*kubectl delete mutatingwebhookconfiguration,validatingwebhookconfiguration -l (\S+)\s*$`)

// The documented uninstall of an installation with every Component (the
// kustomize base with each Component of deploy/) and of the chart with every
// option leaves no webhook configuration behind: in an API server of its own
// (the suite's has its own registrations, and a fail-closed registration
// left behind there would refuse the other tests' writes), every object of
// the rendering is created, webhook configurations last as install.md says;
// then the selector of install.md's uninstall removes them, the other
// objects are deleted as `kubectl delete -k` would, and no webhook
// configuration remains. The old uninstall by name left
// seedwarden-resource-size, whose fail-closed size.seedwarden.io refuses
// every write of Seeds, Projects and project Secrets and ConfigMaps.
func TestDocumentedUninstallLeavesNoWebhookConfiguration(t *testing.T) {
	st := need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	selector := documentedUninstallSelector(t, st.root)
	dir := renderInstalls(ctx, t, st)
	for _, name := range []string{"kustomize-components.yaml", "helm-options.yaml"} {
		t.Run(name, func(t *testing.T) {
			_, cfg := testenv.Start(t)
			c, err := client.New(cfg, client.Options{})
			if err != nil {
				t.Fatal(err)
			}
			cs := kubernetes.NewForConfigOrDie(cfg)
			objs := readObjects(t, filepath.Join(dir, name))
			hooks := installForUninstall(ctx, t, c, objs)
			if hooks < 3 {
				t.Fatalf("%s registers %d webhook configurations, want the base's two and the resource-size one", name, hooks)
			}
			listed := webhookConfigurationNames(ctx, t, cs, selector)
			if len(listed) != hooks {
				t.Fatalf("the documented selector %q matches %v, but %d webhook configurations were installed", selector, listed, hooks)
			}

			opts := metav1.DeleteOptions{}
			sel := metav1.ListOptions{LabelSelector: selector}
			if err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().DeleteCollection(ctx, opts, sel); err != nil {
				t.Fatal(err)
			}
			if err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().DeleteCollection(ctx, opts, sel); err != nil {
				t.Fatal(err)
			}
			for _, o := range objs { // kubectl delete -k / helm uninstall
				if err := c.Delete(ctx, o.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("delete %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
				}
			}
			if left := webhookConfigurationNames(ctx, t, cs, ""); len(left) > 0 {
				t.Errorf("after the documented uninstall these webhook configurations are left: %v", left)
			}
			t.Logf("%d objects installed, %d webhook configurations removed by %q", len(objs), hooks, selector)
		})
	}
}

// documentedUninstallSelector is the label selector of install.md's
// uninstall command; there must be exactly one such command.
func documentedUninstallSelector(t *testing.T, root string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := uninstallCommand.FindAllStringSubmatch(string(data), -1)
	if len(m) != 1 {
		t.Fatalf("docs/install.md has %d uninstall commands deleting webhook configurations by label, want 1", len(m))
	}
	return m[0][1]
}

// installForUninstall creates objs for real in the order of an install
// (namespaces and CRDs, the rest, the webhook configurations) and returns
// how many webhook configurations it created.
func installForUninstall(ctx context.Context, t *testing.T, c client.Client, objs []*unstructured.Unstructured) int {
	t.Helper()
	installMinimalCRDs(ctx, t, c)
	for _, ns := range []string{gardenNamespace, seedwardenNamespace} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	phase := func(o *unstructured.Unstructured) int {
		switch o.GetKind() {
		case "Namespace", "CustomResourceDefinition":
			return 0
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			return 2
		}
		return 1
	}
	hooks := 0
	for p := range 3 {
		for _, o := range objs {
			if phase(o) != p {
				continue
			}
			err := createWhenServed(ctx, c, o)
			if apierrors.IsAlreadyExists(err) && o.GetKind() == "Namespace" {
				continue
			}
			if err != nil {
				t.Fatalf("create %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
			}
			if p == 2 {
				hooks++
			}
		}
	}
	return hooks
}

// createWhenServed creates o, waiting for a new kind to be served.
func createWhenServed(ctx context.Context, c client.Client, o *unstructured.Unstructured) error {
	var err error
	for range 150 {
		err = c.Create(ctx, o.DeepCopy(), client.FieldValidation("Strict"))
		if err == nil || !meta.IsNoMatchError(err) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
	return err
}

// webhookConfigurationNames lists the mutating and validating webhook
// configurations matching selector (empty: all).
func webhookConfigurationNames(ctx context.Context, t *testing.T, cs kubernetes.Interface, selector string) []string {
	t.Helper()
	opts := metav1.ListOptions{LabelSelector: selector}
	m, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	v, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range m.Items {
		names = append(names, "mutating/"+w.Name)
	}
	for _, w := range v.Items {
		names = append(names, "validating/"+w.Name)
	}
	return names
}
