package chartcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"sigs.k8s.io/yaml"
)

// Components lists the kustomize Components beside the base: the
// directories of DeployDir whose kustomization.yaml is of kind Component,
// by name.
func Components(root string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, DeployDir))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, DeployDir, e.Name(), "kustomization.yaml"))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var k struct{ Kind string }
		if err := yaml.Unmarshal(data, &k); err != nil {
			return nil, fmt.Errorf("%s/%s/kustomization.yaml: %w", DeployDir, e.Name(), err)
		}
		if k.Kind == "Component" {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// RenderOverlay builds the base with the given Components (directories of
// DeployDir, applied in this order) from an overlay in a temporary
// directory, as an operator's overlay of resources: [base] and components
// would; extra files (name -> content) are written beside that
// kustomization.yaml and listed as its resources too.
func RenderOverlay(root string, extra map[string][]byte, components ...string) ([]Object, error) {
	dir, err := os.MkdirTemp("", "chartcheck-overlay-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// kustomize takes only relative paths to other kustomizations.
	rel := func(p string) (string, error) { return filepath.Rel(dir, filepath.Join(root, p)) }
	base, err := rel(ManifestsDir)
	if err != nil {
		return nil, err
	}
	resources := []string{base}
	names := make([]string, 0, len(extra))
	for name := range extra {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), extra[name], 0o600); err != nil {
			return nil, err
		}
		resources = append(resources, name)
	}
	k := map[string]any{
		"apiVersion": "kustomize.config.k8s.io/v1beta1",
		"kind":       "Kustomization",
		"resources":  resources,
	}
	var comps []string
	for _, c := range components {
		r, err := rel(filepath.Join(DeployDir, c))
		if err != nil {
			return nil, err
		}
		comps = append(comps, r)
	}
	if len(comps) > 0 {
		k["components"] = comps
	}
	data, err := yaml.Marshal(k)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), data, 0o600); err != nil {
		return nil, err
	}
	return RenderKustomize(dir)
}

// VirtualGarden is the Component for gardener-operator's virtual garden;
// VirtualGardenInput names the ConfigMap an overlay with it must add (kustomize
// reads it and never applies it, config.kubernetes.io/local-config), whose
// WebhookHostKey is the webhook URLs' host. DefaultWebhookHost is the one
// install.md suggests: the Service in the runtime cluster.
const (
	VirtualGarden      = "virtual-garden"
	VirtualGardenInput = "seedwarden-virtual-garden"
	WebhookHostKey     = "webhookHost"
	DefaultWebhookHost = "seedwarden.seedwarden.svc"
	// ClusterLabel says which cluster an object of the virtual-garden
	// Component goes to: ClusterRuntime, ClusterVirtualGarden or ClusterBoth.
	ClusterLabel         = "seedwarden.io/cluster"
	ClusterRuntime       = "runtime"
	ClusterVirtualGarden = "virtual-garden"
	ClusterBoth          = "both"
)

// ComponentInputs are the files an overlay must add for the given
// Components: for VirtualGarden, the ConfigMap with host as webhookHost.
func ComponentInputs(components []string, host string) map[string][]byte {
	for _, c := range components {
		if c == VirtualGarden {
			return map[string][]byte{"webhook-host.yaml": []byte(fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: %s
  annotations:
    config.kubernetes.io/local-config: "true"
data:
  %s: %q
`, VirtualGardenInput, ReleaseNamespace, WebhookHostKey, host))}
		}
	}
	return nil
}
