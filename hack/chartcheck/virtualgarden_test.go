package chartcheck

import (
	"net/url"
	pathpkg "path"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// webhookEndpoints maps each webhook of every webhook configuration to its
// clientConfig: the URL, or the Service's path.
func webhookEndpoints(t *testing.T, objs map[string]Object) (urls, servicePaths map[string]string) {
	t.Helper()
	urls, servicePaths = map[string]string{}, map[string]string{}
	for k, o := range objs {
		if Kind(o) != "MutatingWebhookConfiguration" && Kind(o) != "ValidatingWebhookConfiguration" {
			continue
		}
		for _, w := range o["webhooks"].([]any) {
			w := w.(map[string]any)
			name := k + " " + w["name"].(string)
			cc := path(w, "clientConfig")
			if u, ok := cc["url"].(string); ok {
				urls[name] = u
			}
			if svc := path(cc, "service"); len(svc) > 0 {
				servicePaths[name] = svc["path"].(string)
			}
		}
	}
	return urls, servicePaths
}

// The virtual-garden Component, with every other Component before it:
// every webhook of every configuration is registered by URL at the
// overlay's host, on the base's path for it, and none by Service; the
// serving certificate also names the host (without the port); serve gets
// the mounted kubeconfig; every object says which cluster it goes to, the
// RBAC, CRDs and webhook configurations to the virtual garden.
func TestVirtualGardenComponent(t *testing.T) {
	const host, port = "seedwarden.garden.example.com", "8443"
	comps, err := Components(root(t))
	require.NoError(t, err)
	require.Contains(t, comps, VirtualGarden)
	require.Equal(t, VirtualGarden, comps[len(comps)-1], "the virtual-garden Component must come last, after those whose webhooks it rewrites")
	rendered, err := RenderOverlay(root(t), ComponentInputs(comps, host+":"+port), comps...)
	require.NoError(t, err)
	vg, err := Normalize(rendered)
	require.NoError(t, err)
	plain, err := Normalize(kustomizeOverlay(t, comps[:len(comps)-1]...))
	require.NoError(t, err)

	urls, services := webhookEndpoints(t, vg)
	assert.Empty(t, services, "webhooks still registered by Service")
	_, want := webhookEndpoints(t, plain)
	require.Len(t, want, 8, "the base's six webhooks and the resource-size two")
	require.Len(t, urls, len(want))
	for name, p := range want {
		u, err := url.Parse(urls[name])
		require.NoError(t, err, name)
		assert.Equal(t, "https", u.Scheme, name)
		assert.Equal(t, host+":"+port, u.Host, name)
		assert.Equal(t, p, u.Path, name)
	}

	cert := "Certificate/" + ReleaseNamespace + "/seedwarden-webhook"
	baseNames := path(plain[cert], "spec")["dnsNames"].([]any)
	assert.Equal(t, append(append([]any{}, baseNames...), host), path(vg[cert], "spec")["dnsNames"])

	spec := path(vg["Deployment/"+ReleaseNamespace+"/seedwarden"], "spec", "template", "spec")
	c := spec["containers"].([]any)[0].(map[string]any)
	args := c["args"].([]any)
	require.GreaterOrEqual(t, len(args), 2)
	assert.Equal(t, "--kubeconfig", args[len(args)-2])
	kubeconfig := args[len(args)-1].(string)
	var mounted bool
	for _, m := range c["volumeMounts"].([]any) {
		m := m.(map[string]any)
		if m["mountPath"] == pathpkg.Dir(kubeconfig) {
			mounted = true
			for _, v := range spec["volumes"].([]any) {
				v := v.(map[string]any)
				if v["name"] == m["name"] {
					assert.Equal(t, "seedwarden-virtual-garden-kubeconfig", path(v, "secret")["secretName"])
					assert.Equal(t, []any{map[string]any{"key": "kubeconfig", "path": pathpkg.Base(kubeconfig)}}, path(v, "secret")["items"])
				}
			}
		}
	}
	assert.True(t, mounted, "%s is not in a mounted volume", kubeconfig)

	assert.Len(t, vg, len(plain), "the Component adds or drops objects (its input ConfigMap must not be applied)")
	for k, o := range vg {
		cluster := path(o, "metadata", "labels")[ClusterLabel]
		switch Kind(o) {
		case "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
			"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			assert.Equal(t, ClusterVirtualGarden, cluster, k)
		case "Namespace":
			assert.Equal(t, ClusterBoth, cluster, k)
		case "Deployment", "Service", "Certificate", "Issuer", "ServiceMonitor", "PodDisruptionBudget":
			assert.Equal(t, ClusterRuntime, cluster, k)
		default:
			assert.Contains(t, []any{ClusterRuntime, ClusterVirtualGarden, ClusterBoth}, cluster, k)
		}
	}
	assert.Equal(t, ClusterBoth, path(vg["ServiceAccount/"+ReleaseNamespace+"/seedwarden"], "metadata", "labels")[ClusterLabel])
}

// Without the overlay's input the build fails, naming the ConfigMap.
func TestVirtualGardenComponentNeedsItsInput(t *testing.T) {
	_, err := RenderOverlay(root(t), nil, VirtualGarden)
	require.Error(t, err)
	assert.Contains(t, err.Error(), VirtualGardenInput)
}

// virtualGardenValues are VirtualGardenValues rendering one cluster's part.
func virtualGardenValues(host, cluster string) map[string]any {
	v := VirtualGardenValues(host)
	v["virtualGarden"].(map[string]any)["cluster"] = cluster
	return v
}

// The chart's virtualGarden values render what the kustomize overlay with
// the resource-size and virtual-garden Components builds (the CRDs aside by
// their seedwarden.io/cluster label: Helm installs crds/ untemplated), with
// the configuration's certificate section left out, as install.md has the
// overlay do.
func TestChartVirtualGardenMatchesComponent(t *testing.T) {
	const host = "seedwarden.garden.example.com:8443"
	helm, err := Normalize(renderChart(t, virtualGardenValues(host, "all")))
	require.NoError(t, err)
	comps := []string{"resource-size", VirtualGarden}
	built, err := RenderOverlay(root(t), ComponentInputs(comps, host), comps...)
	require.NoError(t, err)
	kust, err := Normalize(built)
	require.NoError(t, err)
	// The overlay replaces config.yaml with one without its certificate
	// section (install.md); the chart leaves it out itself.
	cfg := path(kust["ConfigMap/"+ReleaseNamespace+"/"+ConfigName], "data", ConfigFile)
	require.Contains(t, cfg, "certificate")
	delete(cfg, "certificate")
	for k, o := range kust {
		if Kind(o) == "CustomResourceDefinition" {
			assert.Equal(t, ClusterVirtualGarden, path(o, "metadata", "labels")[ClusterLabel], k)
			delete(path(o, "metadata", "labels"), ClusterLabel)
		}
	}
	compare(t, helm, withoutNamespace(t, kust))
}

// virtualGarden.cluster renders one cluster's part: together the two parts
// are everything (the objects of both in each), and nothing is in the wrong
// one.
func TestChartVirtualGardenParts(t *testing.T) {
	const host = "seedwarden.seedwarden.svc"
	all, err := Normalize(renderChart(t, virtualGardenValues(host, "all")))
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, cluster := range []string{ClusterRuntime, ClusterVirtualGarden} {
		part, err := Normalize(renderChart(t, virtualGardenValues(host, cluster)))
		require.NoError(t, err)
		for k, o := range part {
			seen[k] = true
			if Kind(o) == "CustomResourceDefinition" {
				continue // crds/: Helm installs them wherever the chart goes (--skip-crds)
			}
			got := path(o, "metadata", "labels")[ClusterLabel]
			assert.Contains(t, []any{cluster, ClusterBoth}, got, "%s rendered for %s", k, cluster)
		}
	}
	for k := range all {
		assert.True(t, seen[k], "%s is in neither part", k)
	}
	assert.Len(t, seen, len(all))
}
