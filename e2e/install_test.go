package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What an install sends to the API server, from the kustomize base and the
// Helm chart as hack/chartcheck renders them (kustomize's and Helm's Go
// engines: this module does not import Helm): kustomize.yaml,
// helm-default.yaml, and helm-options.yaml with every optional part on.
var installRenderings = []string{"kustomize.yaml", "helm-default.yaml", "helm-options.yaml"}

// chartcheckDir is the nested module that renders them.
const chartcheckDir = "hack/chartcheck"

// dryRunSuffix renames an object that already exists in the suite's API
// server (the namespaces, the shipped RBAC, the registered webhook
// configurations) for its dry-run CREATE: a CREATE of the same name would be
// refused as a duplicate, and the name is not what is being checked.
const dryRunSuffix = "-install-check"

// installCRDs are the kinds of cert-manager and the Prometheus Operator the
// renderings use, which the suite's API server does not serve: installed as
// minimal CRDs (any spec is accepted), so that their objects are checked for
// what the API server checks of any object (metadata, names, namespaces),
// not against the projects' own schemas.
var installCRDs = []struct{ group, kind, plural string }{
	{"cert-manager.io", "Certificate", "certificates"},
	{"cert-manager.io", "Issuer", "issuers"},
	{"monitoring.coreos.com", "ServiceMonitor", "servicemonitors"},
	{"monitoring.coreos.com", "PrometheusRule", "prometheusrules"},
}

// Every object of the kustomize base and of the chart (default values and
// every option) is accepted by the API server: a server-side dry-run CREATE
// with strict field validation, so an unknown or misspelt field fails too.
func TestInstallRenderingsAcceptedByAPIServer(t *testing.T) {
	st := need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	dir := renderInstalls(ctx, t, st)
	installMinimalCRDs(ctx, t, st.c)
	for _, name := range installRenderings {
		t.Run(name, func(t *testing.T) {
			objs := readObjects(t, filepath.Join(dir, name))
			for _, o := range objs {
				if err := dryRunCreate(ctx, st.c, o); err != nil {
					t.Errorf("%s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
				}
			}
			t.Logf("%d objects accepted (dry run)", len(objs))
		})
	}
}

// renderInstalls writes hack/chartcheck's renderings (cmd/render, with
// args) into a temporary directory and returns it.
func renderInstalls(ctx context.Context, t *testing.T, st *suite, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	start := time.Now()
	cmd := exec.CommandContext(ctx, goTool(), append([]string{"run", "./cmd/render", "-out", dir}, args...)...)
	cmd.Dir = filepath.Join(st.root, chartcheckDir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: go run ./cmd/render: %v\n%s", chartcheckDir, err, out)
	}
	t.Logf("rendered in %s (%s)", time.Since(start).Round(time.Millisecond), chartcheckDir)
	return dir
}

// dryRunCreate creates o with dry run; under another name if it exists.
func dryRunCreate(ctx context.Context, c client.Client, o *unstructured.Unstructured) error {
	opts := []client.CreateOption{client.DryRunAll, client.FieldValidation("Strict")}
	// A new kind may need a moment to reach the client's RESTMapper.
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := c.Create(ctx, o.DeepCopy(), opts...)
		if apierrors.IsAlreadyExists(err) && o.GetKind() == "CustomResourceDefinition" {
			// A CRD's name is its plural and group: the suite's own
			// (installAutoscalerCRD) is replaced instead, in a dry run.
			err = dryRunReplace(ctx, c, o)
		} else if apierrors.IsAlreadyExists(err) {
			renamed := o.DeepCopy()
			renamed.SetName(o.GetName() + dryRunSuffix)
			err = c.Create(ctx, renamed, opts...)
		}
		if meta.IsNoMatchError(err) {
			return false, nil
		}
		return true, err
	})
}

// dryRunReplace updates the existing object to o, with dry run and strict
// field validation.
func dryRunReplace(ctx context.Context, c client.Client, o *unstructured.Unstructured) error {
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(o.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(o), existing); err != nil {
		return err
	}
	replacement := o.DeepCopy()
	replacement.SetResourceVersion(existing.GetResourceVersion())
	return c.Update(ctx, replacement, client.DryRunAll, client.FieldValidation("Strict"))
}

// installMinimalCRDs creates installCRDs (any spec) and waits until they
// are established; they are deleted when t ends.
func installMinimalCRDs(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	for _, crd := range installCRDs {
		u := minimalCRD(crd.group, crd.kind, crd.plural)
		err := c.Create(ctx, u)
		if apierrors.IsAlreadyExists(err) {
			continue // installed by someone else: theirs stays
		}
		if err != nil {
			t.Fatalf("CRD %s: %v", u.GetName(), err)
		}
		t.Cleanup(func() {
			if err := c.Delete(context.Background(), u); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete CRD %s: %v", u.GetName(), err)
			}
		})
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			got := minimalCRD(crd.group, crd.kind, crd.plural)
			if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, cond := range conds {
				m, _ := cond.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatalf("CRD %s not established: %v", u.GetName(), err)
		}
	}
}

func minimalCRD(group, kind, plural string) *unstructured.Unstructured {
	schema := map[string]any{"openAPIV3Schema": map[string]any{
		"type": "object", "x-kubernetes-preserve-unknown-fields": true,
	}}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group,
			"names": map[string]any{"kind": kind, "plural": plural, "listKind": kind + "List", "singular": strings.ToLower(kind)},
			"scope": "Namespaced",
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true, "schema": schema,
			}},
		},
	}}
}

// readObjects decodes a multi-document YAML file.
func readObjects(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := readManifestObjects(file)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// readManifestObjects decodes a multi-document YAML file; no object is an
// error.
func readManifestObjects(file string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("%s: no objects", file)
	}
	return objs, nil
}
