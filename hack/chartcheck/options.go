package chartcheck

// OptionValues turn on every optional part of the chart and change the
// defaults a user is most likely to change, so that a test renders every
// template branch (and the e2e suite sends the result to an API server).
func OptionValues() map[string]any {
	return map[string]any{
		"image":             map[string]any{"repository": "registry.example.com/seedwarden", "tag": "v9.9.9", "pullPolicy": "Always"},
		"replicas":          5,
		"priorityClassName": "",
		"placementMode":     "patch",
		"exemptNamespaces":  []any{"kube-system", "cert-manager", "istio-system"},
		"commonLabels":      map[string]any{"team": "gardener"},
		"podAnnotations":    map[string]any{"example.com/scrape": "false"},
		"nodeSelector":      map[string]any{"kubernetes.io/os": "linux"},
		"tolerations":       []any{map[string]any{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}},
		"imagePullSecrets":  []any{map[string]any{"name": "regcred"}},
		"webhooks": map[string]any{
			"binding": map[string]any{"failurePolicy": "Ignore", "timeoutSeconds": 10},
			"size":    map[string]any{"objectSelector": map[string]any{"matchLabels": map[string]any{"size-limited": "true"}}},
		},
		"certManager":          map[string]any{"issuer": map[string]any{"name": "garden-ca", "kind": "ClusterIssuer"}},
		"clientAuth":           map[string]any{"enabled": true},
		"serviceMonitor":       map[string]any{"labels": map[string]any{"release": "kube-prometheus-stack"}, "interval": "15s"},
		"prometheusRule":       map[string]any{"labels": map[string]any{"release": "kube-prometheus-stack"}},
		"networkPolicy":        map[string]any{"enabled": true},
		"resourceSizeWebhooks": map[string]any{"enabled": true},
		"podDisruptionBudget":  map[string]any{"minAvailable": 2},
		"virtualGarden":        map[string]any{"enabled": true, "webhookHost": "seedwarden.garden.example.com"},
	}
}

// VirtualGardenValues are the values for gardener-operator's virtual garden
// with host as the webhook URLs' host, both clusters' parts, and the
// resource-size webhooks: the chart's counterpart of the kustomize base with
// the resource-size and virtual-garden Components.
func VirtualGardenValues(host string) map[string]any {
	return map[string]any{
		"virtualGarden":        map[string]any{"enabled": true, "webhookHost": host, "cluster": "all"},
		"resourceSizeWebhooks": map[string]any{"enabled": true},
	}
}
