package manifests_test

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"
)

// virtualGardenDir is the kustomize Component for gardener-operator's
// virtual garden: webhooks by URL, serve with the virtual garden's kubeconfig.
const virtualGardenDir = "virtual-garden"

// jsonPatch reads a file of JSON 6902 operations of the Component.
func jsonPatch(t *testing.T, file string) []struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
} {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(virtualGardenDir, file))
	if err != nil {
		t.Fatal(err)
	}
	var ops []struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	if err := yaml.UnmarshalStrict(data, &ops); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return ops
}

var webhookURLOp = regexp.MustCompile(`^/webhooks/(\d+)/clientConfig/(service|url)$`)

// Each of the Component's URL patches replaces, for every webhook of the
// configuration it patches, the Service by a URL on the same path, by index
// in the base's order: a webhook added to or moved in the base fails here
// (hack/chartcheck's TestVirtualGardenComponent checks the built result).
func TestVirtualGardenURLPatchesMatchTheBase(t *testing.T) {
	vwc := find[*admissionregistrationv1.ValidatingWebhookConfiguration](t, manifests(t), validatingConfiguration, "", "seedwarden")
	mwc := find[*admissionregistrationv1.MutatingWebhookConfiguration](t, manifests(t), mutatingConfiguration, "", "seedwarden")
	paths := func(ccs ...admissionregistrationv1.WebhookClientConfig) []string {
		var out []string
		for _, cc := range ccs {
			out = append(out, deref(cc.Service.Path))
		}
		return out
	}
	var mPaths, vPaths, sPaths []string
	for _, w := range mwc.Webhooks {
		mPaths = append(mPaths, paths(w.ClientConfig)...)
	}
	for _, w := range vwc.Webhooks {
		vPaths = append(vPaths, paths(w.ClientConfig)...)
	}
	for _, w := range resourceSizeConfiguration(t).Webhooks {
		sPaths = append(sPaths, paths(w.ClientConfig)...)
	}
	for file, want := range map[string][]string{"url-mutating.yaml": mPaths, "url-validating.yaml": vPaths, "url-resource-size.yaml": sPaths} {
		removed, added := map[int]bool{}, map[int]string{}
		for _, op := range jsonPatch(t, file) {
			m := webhookURLOp.FindStringSubmatch(op.Path)
			if m == nil {
				t.Errorf("%s: unexpected operation %s %s", file, op.Op, op.Path)
				continue
			}
			i, _ := strconv.Atoi(m[1])
			switch {
			case op.Op == "remove" && m[2] == "service":
				removed[i] = true
			case op.Op == "add" && m[2] == "url":
				u, err := url.Parse(op.Value.(string))
				if err != nil {
					t.Errorf("%s: webhook %d: %v", file, i, err)
					continue
				}
				added[i] = u.Path
			default:
				t.Errorf("%s: unexpected operation %s %s", file, op.Op, op.Path)
			}
		}
		for i, p := range want {
			if !removed[i] || added[i] != p {
				t.Errorf("%s: webhook %d (path %s): service removed %v, url path %q", file, i, p, removed[i], added[i])
			}
		}
		if len(added) != len(want) || len(removed) != len(want) {
			t.Errorf("%s: %d urls added, %d services removed, for %d webhooks", file, len(added), len(removed), len(want))
		}
	}
}

// The Component passes serve the kubeconfig it mounts from the Secret the
// operator creates: the flag and the mount agree.
func TestVirtualGardenKubeconfigMountedAndPassed(t *testing.T) {
	var args []string
	var mountPath, secret, key, itemPath string
	for _, op := range jsonPatch(t, "deployment.yaml") {
		switch op.Path {
		case "/spec/template/spec/containers/0/args/-":
			args = append(args, op.Value.(string))
		case "/spec/template/spec/containers/0/volumeMounts/-":
			mountPath, _ = op.Value.(map[string]any)["mountPath"].(string)
		case "/spec/template/spec/volumes/-":
			s := op.Value.(map[string]any)["secret"].(map[string]any)
			secret, _ = s["secretName"].(string)
			item := s["items"].([]any)[0].(map[string]any)
			key, itemPath = item["key"].(string), item["path"].(string)
		}
	}
	if len(args) != 2 || args[0] != "--kubeconfig" {
		t.Fatalf("args added %v, want --kubeconfig PATH", args)
	}
	if want := filepath.Join(mountPath, itemPath); args[1] != want {
		t.Errorf("--kubeconfig %s, but the Secret's key %s is mounted at %s", args[1], key, want)
	}
	if secret != "seedwarden-virtual-garden-kubeconfig" || key != "kubeconfig" {
		t.Errorf("mounted Secret %s key %s, want seedwarden-virtual-garden-kubeconfig key kubeconfig (docs/install.md)", secret, key)
	}
}
