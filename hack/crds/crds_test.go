package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
	"github.com/seedwarden/seedwarden/internal/testenv"
)

const (
	crdDir         = "../../e2e/crds"
	conformanceDir = "../../internal/placement/testdata/conformance"
)

// want is what each generated CRD must declare.
var want = map[string]struct {
	group, version                   string
	kind, plural, singular, listKind string
	scope                            apiextensionsv1.ResourceScope
	statusSubresource                bool
	// scale is the scale subresource's spec and status replicas paths
	// ("" for none).
	scaleSpec, scaleStatus string
}{
	"core.gardener.cloud_shoots.yaml":                  {core, coreVersion, "Shoot", "shoots", "shoot", "ShootList", apiextensionsv1.NamespaceScoped, true, "", ""},
	"core.gardener.cloud_seeds.yaml":                   {core, coreVersion, "Seed", "seeds", "seed", "SeedList", apiextensionsv1.ClusterScoped, true, "", ""},
	"core.gardener.cloud_cloudprofiles.yaml":           {core, coreVersion, "CloudProfile", "cloudprofiles", "cloudprofile", "CloudProfileList", apiextensionsv1.ClusterScoped, false, "", ""},
	"core.gardener.cloud_namespacedcloudprofiles.yaml": {core, coreVersion, "NamespacedCloudProfile", "namespacedcloudprofiles", "namespacedcloudprofile", "NamespacedCloudProfileList", apiextensionsv1.NamespaceScoped, true, "", ""},
	"core.gardener.cloud_projects.yaml":                {core, coreVersion, "Project", "projects", "project", "ProjectList", apiextensionsv1.ClusterScoped, false, "", ""},
	// Gardener's ManagedSeedSet serves managedseedsets/scale on
	// spec.replicas and status.replicas; the autoscaler scales through it.
	"seedmanagement.gardener.cloud_managedseedsets.yaml": {seedmanagement.GroupName, seedmanagement.SchemeGroupVersion.Version,
		"ManagedSeedSet", "managedseedsets", "managedseedset", "ManagedSeedSetList", apiextensionsv1.NamespaceScoped, true, ".spec.replicas", ".status.replicas"},
}

const core = api.GroupName

var coreVersion = api.SchemeGroupVersion.Version

func readCRD(t testing.TB, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	return decodeCRDFile(t, filepath.Join(crdDir, name))
}

func TestCRDFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, filepath.Base(f))
	}
	var wantNames []string
	for n := range want {
		wantNames = append(wantNames, n)
	}
	sort.Strings(got)
	sort.Strings(wantNames)
	if !reflect.DeepEqual(got, wantNames) {
		t.Fatalf("files in %s = %v, want %v", crdDir, got, wantNames)
	}

	for name, w := range want {
		t.Run(w.kind, func(t *testing.T) {
			crd := readCRD(t, name)
			if crd.APIVersion != "apiextensions.k8s.io/v1" || crd.Kind != "CustomResourceDefinition" {
				t.Errorf("apiVersion/kind = %s/%s", crd.APIVersion, crd.Kind)
			}
			if want := w.plural + "." + w.group; crd.Name != want {
				t.Errorf("name = %q, want %q", crd.Name, want)
			}
			if crd.Spec.Group != w.group {
				t.Errorf("group = %q, want %q", crd.Spec.Group, w.group)
			}
			n := crd.Spec.Names
			if n.Kind != w.kind || n.Plural != w.plural || n.Singular != w.singular || n.ListKind != w.listKind {
				t.Errorf("names = %+v", n)
			}
			if crd.Spec.Scope != w.scope {
				t.Errorf("scope = %s, want %s", crd.Spec.Scope, w.scope)
			}
			if len(crd.Spec.Versions) != 1 {
				t.Fatalf("%d versions, want 1", len(crd.Spec.Versions))
			}
			v := crd.Spec.Versions[0]
			if v.Name != w.version || !v.Served || !v.Storage {
				t.Errorf("version %q served=%v storage=%v, want %s served and storage", v.Name, v.Served, v.Storage, w.version)
			}
			hasStatusSub := v.Subresources != nil && v.Subresources.Status != nil
			if hasStatusSub != w.statusSubresource {
				t.Errorf("status subresource = %v, want %v", hasStatusSub, w.statusSubresource)
			}
			checkScale(t, v.Subresources, w.scaleSpec, w.scaleStatus)
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				t.Fatal("no schema")
			}
			root := v.Schema.OpenAPIV3Schema
			for _, f := range []string{"spec", "status"} {
				s, ok := root.Properties[f]
				if !ok {
					t.Errorf("no %s schema", f)
					continue
				}
				if s.XPreserveUnknownFields == nil || !*s.XPreserveUnknownFields {
					t.Errorf("%s does not preserve unknown fields", f)
				}
			}
			if root.XPreserveUnknownFields != nil {
				t.Error("the root must not preserve unknown fields (only spec and status do)")
			}

			// A plain kube-apiserver refuses non-structural schemas.
			internal := &apiextensions.JSONSchemaProps{}
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(root, internal, nil); err != nil {
				t.Fatal(err)
			}
			ss, err := structuralschema.NewStructural(internal)
			if err != nil {
				t.Fatalf("not structural: %v", err)
			}
			if errs := structuralschema.ValidateStructural(field.NewPath("openAPIV3Schema"), ss); len(errs) > 0 {
				t.Fatalf("not structural: %v", errs.ToAggregate())
			}
		})
	}
}

// checkScale checks the scale subresource's replicas paths ("" for none).
func checkScale(t *testing.T, sub *apiextensionsv1.CustomResourceSubresources, specPath, statusPath string) {
	t.Helper()
	var scale *apiextensionsv1.CustomResourceSubresourceScale
	if sub != nil {
		scale = sub.Scale
	}
	switch {
	case specPath == "" && scale != nil:
		t.Errorf("unexpected scale subresource %+v", scale)
	case specPath != "" && scale == nil:
		t.Error("no scale subresource")
	case scale != nil && (scale.SpecReplicasPath != specPath || scale.StatusReplicasPath != statusPath):
		t.Errorf("scale subresource on %s and %s, want %s and %s", scale.SpecReplicasPath, scale.StatusReplicasPath, specPath, statusPath)
	}
}

// Seed status.allocatable.shoots is a quantity: the apiserver must take "10"
// as well as 10.
func TestSeedAllocatableIsQuantity(t *testing.T) {
	crd := readCRD(t, "core.gardener.cloud_seeds.yaml")
	alloc := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties["allocatable"]
	if alloc.Type != "object" || alloc.AdditionalProperties == nil || alloc.AdditionalProperties.Schema == nil {
		t.Fatalf("status.allocatable is not a map: %+v", alloc)
	}
	q := alloc.AdditionalProperties.Schema
	if !q.XIntOrString {
		t.Errorf("status.allocatable values are not int-or-string")
	}
	if q.Pattern == "" {
		t.Errorf("status.allocatable values have no quantity pattern")
	}
}

// structurals returns the structural schema of every CRD, by kind.
func structurals(t testing.TB) map[string]*structuralschema.Structural {
	t.Helper()
	out := map[string]*structuralschema.Structural{}
	for name, w := range want {
		crd := readCRD(t, name)
		internal := &apiextensions.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, internal, nil); err != nil {
			t.Fatal(err)
		}
		ss, err := structuralschema.NewStructural(internal)
		if err != nil {
			t.Fatal(err)
		}
		out[w.kind] = ss
	}
	return out
}

// Every object of the conformance corpus (full Gardener objects, recorded
// from the reference) survives pruning unchanged: nothing a real Shoot or
// Seed carries is dropped by the apiserver.
func TestConformanceObjectsAreNotPruned(t *testing.T) {
	schemas := structurals(t)
	step := 0
	if testing.Short() {
		step = 10
	}
	objs := conformanceObjects(t, step)
	if len(objs) == 0 {
		t.Skip("no conformance corpus")
	}
	checked := 0
	for _, o := range objs {
		s, ok := schemas[o.GetKind()]
		if !ok {
			continue // ConfigMaps
		}
		before := o.DeepCopy().Object
		if unknown := pruning.PruneWithOptions(o.Object, s, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}); len(unknown) > 0 {
			t.Fatalf("%s %s: pruned %v", o.GetKind(), o.GetName(), unknown)
		}
		if !reflect.DeepEqual(before, o.Object) {
			t.Fatalf("%s %s changed by pruning", o.GetKind(), o.GetName())
		}
		checked++
	}
	t.Logf("%d objects checked", checked)
}

// conformanceObjects returns the landscape objects and the Shoot of every
// scenario (every step-th scenario if step > 0).
func conformanceObjects(t testing.TB, step int) []*unstructured.Unstructured {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(conformanceDir, "*.json"))
	sort.Strings(files)
	var out []*unstructured.Unstructured
	for i, f := range files {
		if step > 0 && i%step != 0 {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var sc struct {
			Objects []map[string]any `json:"objects"`
			Shoot   map[string]any   `json:"shoot"`
		}
		if err := json.Unmarshal(data, &sc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, o := range append(sc.Objects, sc.Shoot) {
			out = append(out, &unstructured.Unstructured{Object: o})
		}
	}
	return out
}

// Process is idempotent, so the committed files are its own fixed point.
func TestProcessIsIdempotent(t *testing.T) {
	for name := range want {
		data, err := os.ReadFile(filepath.Join(crdDir, name))
		if err != nil {
			t.Fatal(err)
		}
		out, err := Process(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(out, data) {
			t.Errorf("%s: Process changes the committed file", name)
		}
	}
}

// The committed CRDs are what hack/crds/generate.sh produces from the
// current internal/api (controller-gen from the module cache or proxy).
func TestGeneratedFilesUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs controller-gen")
	}
	out := t.TempDir()
	cmd := exec.Command("bash", "generate.sh", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generate.sh: %v\n%s", err, b)
	}
	for name := range want {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(filepath.Join(crdDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, committed) {
			t.Errorf("%s is out of date: run hack/crds/generate.sh", name)
		}
	}
}

// The CRDs install into a real kube-apiserver, which then serves the
// conformance objects (with strict field validation, as kubectl uses) and a
// Seed whose allocatable is the string "10" through the status subresource.
func TestServedByKubeAPIServer(t *testing.T) {
	_, cfg := testenv.Start(t, crdDir)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	for _, ns := range []string{"garden", "garden-proj"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}

	// Dry-run every 20th scenario's objects: the schema (types, required
	// fields, quantities) accepts real Gardener objects, unknown fields and all.
	strict := client.FieldValidation("Strict")
	n := 0
	for _, o := range conformanceObjects(t, 20) {
		if o.GetKind() == "ConfigMap" {
			continue
		}
		o.SetResourceVersion("")
		if err := c.Create(ctx, o, client.DryRunAll, strict); err != nil {
			b, _ := json.Marshal(o.Object)
			t.Fatalf("create %s %s: %v\n%s", o.GetKind(), o.GetName(), err, b)
		}
		n++
	}
	t.Logf("%d conformance objects accepted (dry run)", n)

	// A Seed with unknown fields, then its status with allocatable "10".
	seed := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`
apiVersion: core.gardener.cloud/v1beta1
kind: Seed
metadata:
  name: seed-a
spec:
  provider: {type: aws, region: eu-west-1, zones: [a, b, c]}
  networks: {pods: 10.0.0.0/16, services: 10.1.0.0/16, blockCIDRs: [169.254.169.254/32]}
  ingress: {domain: ingress.seed-a.example.com, controller: {kind: nginx}}
  dns: {provider: {type: aws-route53, secretRef: {name: dns, namespace: garden}}}
`), &seed.Object); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, seed, strict); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(seed.Object, map[string]any{"shoots": "10"}, "status", "allocatable"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(seed.Object, int64(7), "status", "observedGeneration"); err != nil {
		t.Fatal(err)
	}
	if err := c.Status().Update(ctx, seed); err != nil {
		t.Fatalf("status update: %v", err)
	}
	var typed api.Seed
	if err := c.Get(ctx, client.ObjectKey{Name: "seed-a"}, seed); err != nil {
		t.Fatal(err)
	}
	if err := runtimeConvert(seed, &typed); err != nil {
		t.Fatal(err)
	}
	if q := typed.Status.Allocatable[api.ResourceShoots]; q.Cmp(resource.MustParse("10")) != 0 {
		t.Errorf("allocatable.shoots = %s, want 10", q.String())
	}
	if _, found, _ := unstructured.NestedString(seed.Object, "spec", "ingress", "controller", "kind"); !found {
		t.Error("unknown field spec.ingress was pruned")
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(seed.Object, "status", "observedGeneration"); !found {
		t.Error("unknown field status.observedGeneration was pruned")
	}

	// A self-hosted Shoot: workers[].controlPlane is kept, with its
	// settings, under strict validation.
	selfHosted := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`
apiVersion: core.gardener.cloud/v1beta1
kind: Shoot
metadata: {name: self-hosted, namespace: garden}
spec:
  cloudProfile: {name: aws}
  region: eu-west-1
  provider:
    type: aws
    workers:
    - name: cp
      controlPlane: {backup: {provider: aws}}
`), &selfHosted.Object); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, selfHosted, strict); err != nil {
		t.Fatalf("self-hosted Shoot: %v", err)
	}
	var shoot api.Shoot
	if err := runtimeConvert(selfHosted, &shoot); err != nil {
		t.Fatal(err)
	}
	if pool, ok := api.SelfHostedPool(&shoot); !ok || pool != "cp" {
		t.Errorf("workers[].controlPlane not served: pool %q, self-hosted %v", pool, ok)
	}
	if workers, _, _ := unstructured.NestedSlice(selfHosted.Object, "spec", "provider", "workers"); len(workers) != 1 ||
		!reflect.DeepEqual(workers[0].(map[string]any)["controlPlane"], map[string]any{"backup": map[string]any{"provider": "aws"}}) {
		t.Errorf("workers[].controlPlane not kept whole: %v", workers)
	}

	// A ManagedSeedSet as Gardener's look (fields not modelled kept), and
	// its scale subresource on spec.replicas and status.replicas.
	checkManagedSeedSetScale(ctx, t, c)

	// The status subresource: spec changes through it are ignored.
	seed.Object["spec"].(map[string]any)["provider"].(map[string]any)["region"] = "changed"
	if err := c.Status().Update(ctx, seed); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "seed-a"}, seed); err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedString(seed.Object, "spec", "provider", "region"); r != "eu-west-1" {
		t.Errorf("spec changed through the status subresource: region %q", r)
	}

	// Not a quantity.
	bad := seed.DeepCopy()
	_ = unstructured.SetNestedField(bad.Object, map[string]any{"shoots": "ten"}, "status", "allocatable")
	if err := c.Status().Update(ctx, bad); err == nil || !strings.Contains(err.Error(), "allocatable") {
		t.Errorf("allocatable.shoots \"ten\" accepted (err %v)", err)
	}
}

func runtimeConvert(u *unstructured.Unstructured, out any) error {
	b, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// checkManagedSeedSetScale creates a ManagedSeedSet with Gardener's fields
// (shootTemplate, not modelled) under strict validation, then reads and
// writes its replicas through the scale subresource.
func checkManagedSeedSetScale(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	mss := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`
apiVersion: seedmanagement.gardener.cloud/v1alpha1
kind: ManagedSeedSet
metadata: {name: set, namespace: garden}
spec:
  replicas: 2
  selector: {matchLabels: {set: a}}
  template:
    metadata: {labels: {set: a}}
    spec:
      gardenlet:
        config:
          apiVersion: gardenlet.config.gardener.cloud/v1alpha1
          kind: GardenletConfiguration
          resources: {capacity: {shoots: "30"}}
  shootTemplate:
    metadata: {labels: {set: a}}
    spec: {region: eu-west-1, provider: {type: aws}}
  updateStrategy: {type: RollingUpdate}
`), &mss.Object); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, mss, client.FieldValidation("Strict")); err != nil {
		t.Fatalf("ManagedSeedSet: %v", err)
	}
	_ = unstructured.SetNestedField(mss.Object, map[string]any{"replicas": int64(1), "nextReplicaNumber": int64(1)}, "status")
	if err := c.Status().Update(ctx, mss); err != nil {
		t.Fatalf("ManagedSeedSet status: %v", err)
	}
	scale := &unstructured.Unstructured{}
	scale.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
	if err := c.SubResource("scale").Get(ctx, mss, scale); err != nil {
		t.Fatalf("managedseedsets/scale: %v", err)
	}
	specReplicas, _, _ := unstructured.NestedInt64(scale.Object, "spec", "replicas")
	statusReplicas, _, _ := unstructured.NestedInt64(scale.Object, "status", "replicas")
	if specReplicas != 2 || statusReplicas != 1 {
		t.Errorf("scale spec.replicas %d status.replicas %d, want 2 and 1", specReplicas, statusReplicas)
	}
	_ = unstructured.SetNestedField(scale.Object, int64(5), "spec", "replicas")
	if err := c.SubResource("scale").Update(ctx, mss, client.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("updating managedseedsets/scale: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(mss), mss); err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(mss.Object, "spec", "replicas"); r != 5 {
		t.Errorf("spec.replicas = %d after scaling to 5", r)
	}
	if _, found, _ := unstructured.NestedString(mss.Object, "spec", "shootTemplate", "spec", "region"); !found {
		t.Error("unknown field spec.shootTemplate was pruned")
	}
}
