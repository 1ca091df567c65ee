package manifests_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// uninstallSelector finds the label selector of docs/install.md's uninstall
// command for the webhook configurations.
var uninstallSelector = regexp.MustCompile(`(?m)^\s*kubectl delete mutatingwebhookconfiguration,validatingwebhookconfiguration -l (\S+)\s*$`)

// Every webhook configuration of the base and of every Component (each
// directory here whose kustomization.yaml is a Component, and every file it
// lists) carries the labels install.md's uninstall deletes by, so that no
// registration stays behind, whatever its name. (The e2e test
// TestDocumentedUninstallLeavesNoWebhookConfiguration runs that uninstall.)
func TestEveryWebhookConfigurationMatchesTheUninstallSelector(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := uninstallSelector.FindAllStringSubmatch(string(data), -1)
	if len(m) != 1 {
		t.Fatalf("docs/install.md has %d uninstall commands deleting webhook configurations by label, want 1", len(m))
	}
	sel, err := labels.Parse(m[0][1])
	if err != nil {
		t.Fatalf("docs/install.md's uninstall selector %q: %v", m[0][1], err)
	}
	files := resourceFiles(t)
	dirs, err := filepath.Glob("*/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range dirs {
		raw, err := os.ReadFile(k)
		if err != nil {
			t.Fatal(err)
		}
		var comp struct {
			Kind      string   `json:"kind"`
			Resources []string `json:"resources"`
		}
		if err := yaml.Unmarshal(raw, &comp); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if comp.Kind != "Component" {
			continue
		}
		for _, r := range comp.Resources {
			files = append(files, filepath.Join(filepath.Dir(k), r))
		}
	}
	n := 0
	for _, d := range readDocs(t, files...) {
		if kind := d.u.GetKind(); kind != mutatingConfiguration && kind != validatingConfiguration {
			continue
		}
		n++
		if !sel.Matches(labels.Set(d.u.GetLabels())) {
			t.Errorf("%s: labels %v do not match the uninstall selector %q", d, d.u.GetLabels(), sel)
		}
	}
	if n < 3 {
		t.Errorf("%d webhook configurations found, want at least the base's two and the resource-size one", n)
	}
}
