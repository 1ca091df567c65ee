package chartcheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"sigs.k8s.io/yaml"
)

// What `helm lint` checks (Chart.yaml, values and schema, templates render
// and parse as YAML with Kubernetes' object metadata), with default values
// and with every option on; a warning fails too (`helm lint --strict`).
func TestChartLint(t *testing.T) {
	for name, values := range map[string]map[string]any{"defaults": nil, "options": OptionValues()} {
		t.Run(name, func(t *testing.T) {
			l := lint.All(filepath.Join(root(t), ChartDir), values, ReleaseNamespace, true)
			for _, m := range l.Messages {
				if m.Severity > support.InfoSev {
					t.Errorf("%s", m)
				} else {
					t.Logf("%s", m)
				}
			}
		})
	}
}

func index(t *testing.T, values map[string]any) map[string]Object {
	t.Helper()
	objs, err := Normalize(renderChart(t, values))
	require.NoError(t, err)
	return objs
}

// Every option reaches the objects it is for.
func TestChartOptionValues(t *testing.T) {
	objs := index(t, OptionValues())
	dep := objs["Deployment/seedwarden/seedwarden"]
	spec := path(dep, "spec", "template", "spec")
	c := spec["containers"].([]any)[0].(map[string]any)
	assert.Equal(t, "registry.example.com/seedwarden:v9.9.9", c["image"])
	assert.Equal(t, "Always", c["imagePullPolicy"])
	assert.EqualValues(t, 5, path(dep, "spec")["replicas"])
	assert.NotContains(t, spec, "priorityClassName", "an empty priorityClassName is left out")
	assert.Equal(t, map[string]any{"kubernetes.io/os": "linux"}, spec["nodeSelector"])
	assert.Len(t, spec["tolerations"], 1)
	assert.Equal(t, []any{map[string]any{"name": "regcred"}}, spec["imagePullSecrets"])
	assert.Equal(t, "false", path(dep, "spec", "template", "metadata", "annotations")["example.com/scrape"])

	cfg := path(objs["ConfigMap/seedwarden/seedwarden-config"], "data", ConfigFile)
	assert.Equal(t, "patch", path(cfg, "placement")["mode"])
	assert.Contains(t, path(cfg, "server"), "clientAuth")

	// An existing issuer: no CA chain of the chart's own.
	assert.NotContains(t, objs, "Issuer/seedwarden/seedwarden-ca")
	assert.NotContains(t, objs, "Issuer/seedwarden/seedwarden-selfsigned")
	assert.Equal(t, map[string]any{"group": "cert-manager.io", "kind": "ClusterIssuer", "name": "garden-ca"},
		path(objs["Certificate/seedwarden/seedwarden-webhook"], "spec", "issuerRef"))

	assert.Contains(t, objs, "NetworkPolicy/seedwarden/seedwarden")
	assert.EqualValues(t, 2, path(objs["PodDisruptionBudget/seedwarden/seedwarden"], "spec")["minAvailable"])
	sm := objs["ServiceMonitor/seedwarden/seedwarden"]
	assert.Equal(t, "kube-prometheus-stack", path(sm, "metadata", "labels")["release"])
	assert.Equal(t, "15s", path(sm, "spec")["endpoints"].([]any)[0].(map[string]any)["interval"])
	assert.Equal(t, "kube-prometheus-stack", path(objs["PrometheusRule/seedwarden/seedwarden"], "metadata", "labels")["release"])
	for k, o := range objs {
		if Kind(o) == "CustomResourceDefinition" {
			continue // crds/ is installed as it is: Helm renders no template there
		}
		assert.Equal(t, "gardener", path(o, "metadata", "labels")["team"], "%s: commonLabels", k)
	}

	hooks := map[string]map[string]any{}
	for _, cfgKind := range []string{"MutatingWebhookConfiguration//seedwarden", "ValidatingWebhookConfiguration//seedwarden",
		"ValidatingWebhookConfiguration//seedwarden-resource-size"} {
		for _, w := range objs[cfgKind]["webhooks"].([]any) {
			hooks[w.(map[string]any)["name"].(string)] = w.(map[string]any)
		}
	}
	require.Len(t, hooks, 9)
	// webhooks.binding no longer agrees with webhooks.capacity: the two
	// checks are registered apart, each with its own settings.
	assert.NotContains(t, hooks, "seed.shoots.seedwarden.io")
	assert.Equal(t, "Ignore", hooks["binding.shoots.seedwarden.io"]["failurePolicy"])
	assert.EqualValues(t, 10, hooks["binding.shoots.seedwarden.io"]["timeoutSeconds"])
	assert.Equal(t, "Fail", hooks["capacity.shoots.seedwarden.io"]["failurePolicy"])
	assert.EqualValues(t, 5, hooks["capacity.shoots.seedwarden.io"]["timeoutSeconds"])
	assert.Equal(t, map[string]any{"matchLabels": map[string]any{"size-limited": "true"}}, hooks["size.seedwarden.io"]["objectSelector"])
	exempt := []any{"seedwarden", "kube-system", "cert-manager", "istio-system"}
	for name, w := range hooks {
		if name == "size.seedwarden.io" || name == "size.shoots.seedwarden.io" {
			continue // project namespaces only, by its own selector
		}
		expr := path(w, "namespaceSelector")["matchExpressions"].([]any)[0].(map[string]any)
		assert.Equal(t, "kubernetes.io/metadata.name", expr["key"], name)
		assert.Equal(t, exempt, expr["values"], name)
	}
}

// Each part that can be switched off is gone when it is off, with what
// belongs to it.
func TestChartToggles(t *testing.T) {
	tests := []struct {
		values map[string]any
		gone   []string
	}{
		{map[string]any{"serviceMonitor": map[string]any{"enabled": false}}, []string{
			"ServiceMonitor/seedwarden/seedwarden", "ServiceAccount/seedwarden/seedwarden-metrics",
			"Secret/seedwarden/seedwarden-metrics-token", "ClusterRoleBinding//seedwarden-metrics-reader",
		}},
		{map[string]any{"prometheusRule": map[string]any{"enabled": false}}, []string{"PrometheusRule/seedwarden/seedwarden"}},
		{map[string]any{"grafanaDashboard": map[string]any{"enabled": false}}, []string{"ConfigMap/seedwarden/seedwarden-grafana-dashboard"}},
		{map[string]any{"podDisruptionBudget": map[string]any{"enabled": false}}, []string{"PodDisruptionBudget/seedwarden/seedwarden"}},
		{map[string]any{"clientAuth": map[string]any{"enabled": false}}, []string{
			"Issuer/seedwarden/seedwarden-client-selfsigned", "Certificate/seedwarden/seedwarden-client-ca",
			"Issuer/seedwarden/seedwarden-client-ca", "Certificate/seedwarden/seedwarden-client-gardener-apiserver",
			"Certificate/seedwarden/seedwarden-client-kube-apiserver",
		}},
	}
	all := index(t, nil)
	for _, tt := range tests {
		got := index(t, tt.values)
		for _, k := range tt.gone {
			assert.Contains(t, all, k)
			assert.NotContains(t, got, k, "%v", tt.values)
		}
		assert.Len(t, got, len(all)-len(tt.gone), "%v", tt.values)
	}
}

// Client authentication off (an API server that cannot present a client
// certificate): no server.clientAuth, and the client CA neither mounted nor
// issued.
func TestChartClientAuthOff(t *testing.T) {
	on, off := index(t, nil), index(t, map[string]any{"clientAuth": map[string]any{"enabled": false}})
	cfgKey := "ConfigMap/" + ReleaseNamespace + "/" + ConfigName
	assert.Contains(t, path(path(on[cfgKey], "data", ConfigFile), "server"), "clientAuth")
	assert.NotContains(t, path(path(off[cfgKey], "data", ConfigFile), "server"), "clientAuth")
	depKey := "Deployment/" + ReleaseNamespace + "/seedwarden"
	volumes := func(o Object) []string {
		var names []string
		for _, v := range path(o, "spec", "template", "spec")["volumes"].([]any) {
			names = append(names, v.(map[string]any)["name"].(string))
		}
		return names
	}
	assert.Contains(t, volumes(on[depKey]), "client-ca")
	assert.NotContains(t, volumes(off[depKey]), "client-ca")

	// Not enforced yet (an upgrade): everything issued and mounted, nothing
	// required.
	prepared := index(t, map[string]any{"clientAuth": map[string]any{"enforce": false}})
	assert.NotContains(t, path(path(prepared[cfgKey], "data", ConfigFile), "server"), "clientAuth")
	assert.Contains(t, volumes(prepared[depKey]), "client-ca")
	assert.Contains(t, prepared, "Certificate/seedwarden/seedwarden-client-gardener-apiserver")
}

// Bad values are refused with a message naming the value, before anything
// is rendered.
func TestChartRejectsBadValues(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"placement mode", map[string]any{"placementMode": "later"}, "placementMode"},
		{"failure policy", map[string]any{"webhooks": map[string]any{"binding": map[string]any{"failurePolicy": "Maybe"}}}, "failurePolicy"},
		{"timeout", map[string]any{"webhooks": map[string]any{"size": map[string]any{"timeoutSeconds": 31}}}, "timeoutSeconds"},
		{"no replicas", map[string]any{"replicas": 0}, "replicas"},
		{"misspelt key", map[string]any{"replica": 3}, "replica"},
		{"issuer kind", map[string]any{"certManager": map[string]any{"issuer": map[string]any{"name": "x", "kind": "Vault"}}}, "kind"},
		{"local capacity with replicas", map[string]any{"config": map[string]any{"capacity": map[string]any{"coordination": "local"}}}, "config.capacity.coordination"},
	}
	ch, err := LoadChart(filepath.Join(root(t), ChartDir))
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := RenderChart(ch, tt.values)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// The chart's appVersion is the image tag the kustomize base pins (its
// images: entry and deployment.yaml), and the chart's version is the same
// release: `make set-version` writes all of them.
func TestVersionsAgree(t *testing.T) {
	r := root(t)
	var chartYAML struct{ Version, AppVersion string }
	readYAML(t, filepath.Join(r, ChartDir, "Chart.yaml"), &chartYAML)
	var kust struct {
		Images []struct{ Name, NewTag string } `json:"images"`
	}
	readYAML(t, filepath.Join(r, ManifestsDir, "kustomization.yaml"), &kust)
	require.Len(t, kust.Images, 1)
	assert.Equal(t, chartYAML.AppVersion, kust.Images[0].NewTag, "kustomization.yaml images[0].newTag")
	assert.Equal(t, "v"+chartYAML.Version, chartYAML.AppVersion, "Chart.yaml version and appVersion")
	assert.Regexp(t, regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`), chartYAML.AppVersion)
	dep, err := os.ReadFile(filepath.Join(r, ManifestsDir, "deployment.yaml"))
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(dep), "image: "+kust.Images[0].Name+":"+chartYAML.AppVersion+"\n"),
		"deployment.yaml's image is not %s:%s", kust.Images[0].Name, chartYAML.AppVersion)
}

func readYAML(t *testing.T, file string, into any) {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, into), file)
}

// The health port is for the kubelet's probes: no Service exposes it, with
// default values or with every option.
func TestServiceLeavesHealthPortOut(t *testing.T) {
	for name, values := range map[string]map[string]any{"defaults": nil, "options": OptionValues()} {
		objs := index(t, values)
		var health any
		c := path(objs["Deployment/seedwarden/seedwarden"], "spec", "template", "spec")["containers"].([]any)[0].(map[string]any)
		for _, p := range c["ports"].([]any) {
			if p.(map[string]any)["name"] == "health" {
				health = p.(map[string]any)["containerPort"]
			}
		}
		require.NotNil(t, health, "%s: no container port health", name)
		for k, o := range objs {
			if Kind(o) != "Service" {
				continue
			}
			for _, p := range path(o, "spec")["ports"].([]any) {
				p := p.(map[string]any)
				assert.NotEqual(t, "health", p["targetPort"], "%s: %s", name, k)
				assert.NotEqual(t, health, p["targetPort"], "%s: %s", name, k)
				assert.NotEqual(t, health, p["port"], "%s: %s", name, k)
			}
		}
	}
}

// In another namespace, everything that names the release namespace follows
// it: the objects, the certificate's DNS names, the CA injection, the
// webhooks' Service and exclusions, the configuration.
func TestChartInAnotherNamespace(t *testing.T) {
	const ns = "garden-seedwarden"
	ch, err := LoadChart(filepath.Join(root(t), ChartDir))
	require.NoError(t, err)
	rendered, err := RenderChartIn(ch, ns, nil)
	require.NoError(t, err)
	objs, err := Normalize(rendered)
	require.NoError(t, err)
	for k, o := range objs {
		if Namespace(o) != "" && Namespace(o) != "garden" {
			assert.Equal(t, ns, Namespace(o), k)
		}
		data, err := yaml.Marshal(o)
		require.NoError(t, err)
		assert.NotRegexp(t, `namespace: ["']?seedwarden["']?\n|inject-ca-from: seedwarden/|seedwarden\.seedwarden\.svc`, string(data), k)
	}
	cert := objs["Certificate/"+ns+"/seedwarden-webhook"]
	assert.Equal(t, []any{"seedwarden." + ns + ".svc", "seedwarden." + ns + ".svc.cluster.local"}, path(cert, "spec")["dnsNames"])
	cfg := path(objs["ConfigMap/"+ns+"/"+ConfigName], "data", ConfigFile)
	assert.Equal(t, ns, path(cfg, "certificate")["namespace"])
	assert.Equal(t, ns, path(cfg, "capacity")["reservationNamespace"])
	vwc := objs["ValidatingWebhookConfiguration//seedwarden"]
	assert.Equal(t, ns+"/seedwarden-webhook", path(vwc, "metadata", "annotations")["cert-manager.io/inject-ca-from"])
	for _, w := range vwc["webhooks"].([]any) {
		w := w.(map[string]any)
		assert.Equal(t, ns, path(w, "clientConfig", "service")["namespace"], w["name"])
		if w["name"] != "size.seedwarden.io" && w["name"] != "size.shoots.seedwarden.io" {
			expr := path(w, "namespaceSelector")["matchExpressions"].([]any)[0].(map[string]any)
			assert.Contains(t, expr["values"], ns, w["name"])
		}
	}
}
