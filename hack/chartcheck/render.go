// Package chartcheck renders the Helm chart charts/seedwarden with Helm's Go
// engine and the kustomize base deploy/manifests with kustomize's Go API, as
// `helm template` and `kubectl kustomize` would, so that a test can compare
// them and the e2e suite can send both to an API server. It is a module of
// its own: Helm's and kustomize's dependencies stay out of seedwarden's.
package chartcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// Object is one rendered Kubernetes object, decoded from YAML.
type Object = map[string]any

// Release is the name and namespace the chart is rendered for: the ones the
// kustomize base hard-codes.
const (
	ReleaseName      = "seedwarden"
	ReleaseNamespace = "seedwarden"
)

// Paths of the chart and the kustomize base, relative to the repository root;
// the kustomize Components sit in directories of DeployDir beside the base.
const (
	ChartDir     = "charts/seedwarden"
	ManifestsDir = "deploy/manifests"
	DeployDir    = "deploy"
)

// RepoRoot finds the repository root from the working directory (the
// directory holding charts/ and deploy/).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, ChartDir, "Chart.yaml")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no %s above the working directory", ChartDir)
		}
		dir = parent
	}
}

// LoadChart loads the chart directory as `helm` does (Chart.yaml, values,
// schema, templates, files; .helmignore honoured).
func LoadChart(dir string) (*chart.Chart, error) {
	ch, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", dir, err)
	}
	if err := ch.Validate(); err != nil {
		return nil, fmt.Errorf("chart %s: %w", dir, err)
	}
	return ch, nil
}

// RenderChart renders the chart with values over its defaults (nil: the
// defaults), validated against values.schema.json, as `helm template
// --include-crds --namespace seedwarden seedwarden CHART` does: the crds/
// directory first (what `helm install` creates before the templates), then
// the templates. NOTES.txt is left out.
func RenderChart(ch *chart.Chart, values map[string]any) ([]Object, error) {
	return RenderChartIn(ch, ReleaseNamespace, values)
}

// RenderChartIn renders the chart for a release in namespace.
func RenderChartIn(ch *chart.Chart, namespace string, values map[string]any) ([]Object, error) {
	opts := chartutil.ReleaseOptions{Name: ReleaseName, Namespace: namespace, Revision: 1, IsInstall: true}
	vals, err := chartutil.ToRenderValues(ch, values, opts, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var objs []Object
	for _, crd := range ch.CRDObjects() {
		for _, doc := range releaseutil.SplitManifests(string(crd.File.Data)) {
			o, err := decode(doc)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", crd.Filename, err)
			}
			if o != nil {
				objs = append(objs, o)
			}
		}
	}
	for _, name := range names {
		if strings.HasSuffix(name, "NOTES.txt") || strings.HasPrefix(filepath.Base(name), "_") {
			continue
		}
		for _, doc := range releaseutil.SplitManifests(files[name]) {
			o, err := decode(doc)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if o != nil {
				objs = append(objs, o)
			}
		}
	}
	return objs, nil
}

// RenderKustomize builds a kustomization directory as `kubectl kustomize`
// does.
func RenderKustomize(dir string) ([]Object, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", dir, err)
	}
	var objs []Object
	for _, r := range m.Resources() {
		o, err := r.Map()
		if err != nil {
			return nil, fmt.Errorf("kustomize %s: %s: %w", dir, r.CurId(), err)
		}
		// A round trip through YAML, so that both sides carry the same Go
		// types (float64 numbers).
		data, err := yaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		if o, err = decode(string(data)); err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// decode reads one YAML document; nil for an empty one (a template whose
// condition is off).
func decode(doc string) (Object, error) {
	var o Object
	if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
		return nil, err
	}
	if len(o) == 0 {
		return nil, nil
	}
	if Kind(o) == "" || Name(o) == "" {
		return nil, fmt.Errorf("a document without kind or metadata.name:\n%s", doc)
	}
	return o, nil
}

// WriteYAML writes objects as one multi-document YAML stream.
func WriteYAML(path string, objs []Object) error {
	var b strings.Builder
	for _, o := range objs {
		data, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// Kind, Namespace and Name read an object's identity.
func Kind(o Object) string      { s, _ := o["kind"].(string); return s }
func Namespace(o Object) string { return meta(o, "namespace") }
func Name(o Object) string      { return meta(o, "name") }

func meta(o Object, field string) string {
	m, _ := o["metadata"].(map[string]any)
	s, _ := m[field].(string)
	return s
}

// Key identifies an object: kind/namespace/name.
func Key(o Object) string { return Kind(o) + "/" + Namespace(o) + "/" + Name(o) }
