package chartcheck

import (
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// root is the repository root, two levels up from this module.
func root(t *testing.T) string {
	t.Helper()
	r, err := RepoRoot()
	require.NoError(t, err)
	return r
}

func renderChart(t *testing.T, values map[string]any) []Object {
	t.Helper()
	ch, err := LoadChart(filepath.Join(root(t), ChartDir))
	require.NoError(t, err)
	objs, err := RenderChart(ch, values)
	require.NoError(t, err)
	return objs
}

// kustomizeOverlay builds the base with the given components (directories
// under deploy/), from an overlay in a temporary directory.
func kustomizeOverlay(t *testing.T, components ...string) []Object {
	t.Helper()
	objs, err := RenderOverlay(root(t), nil, components...)
	require.NoError(t, err)
	return objs
}

// compare reports every object only one side has and every difference.
func compare(t *testing.T, helm, kustomize map[string]Object) {
	t.Helper()
	var keys []string
	for k := range kustomize {
		keys = append(keys, k)
	}
	for k := range helm {
		if _, ok := kustomize[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		h, inHelm := helm[k]
		c, inKustomize := kustomize[k]
		switch {
		case !inHelm:
			t.Errorf("%s: rendered by kustomize only", k)
		case !inKustomize:
			t.Errorf("%s: rendered by the chart only", k)
		default:
			if d := cmp.Diff(c, h); d != "" {
				t.Errorf("%s differs (-kustomize +chart):\n%s", k, d)
			}
		}
	}
}

// The kustomize base creates the namespace; a chart installs into one that
// exists (helm install -n), so it is the one object only the base has.
func withoutNamespace(t *testing.T, objs map[string]Object) map[string]Object {
	t.Helper()
	k := "Namespace//" + ReleaseNamespace
	require.Contains(t, objs, k, "the kustomize base no longer creates its namespace")
	delete(objs, k)
	return objs
}

// With default values the chart renders exactly the objects of the kustomize
// base: the same names, labels, webhooks, configuration (client
// authentication on), rules, dashboard.
func TestChartDefaultsMatchKustomizeBase(t *testing.T) {
	chartObjs := renderChart(t, nil)
	for _, o := range chartObjs {
		require.NotEqual(t, "Namespace", Kind(o), "the chart must not create its release namespace")
	}
	helm, err := Normalize(chartObjs)
	require.NoError(t, err)
	base, err := RenderKustomize(filepath.Join(root(t), ManifestsDir))
	require.NoError(t, err)
	kust, err := Normalize(base)
	require.NoError(t, err)
	require.Len(t, kust, len(base))
	compare(t, helm, withoutNamespace(t, kust))
}

// The opt-in parts match their kustomize Components: the NetworkPolicy and
// the resource-size webhooks. (Client authentication is on in both by
// default.)
func TestChartOptionsMatchKustomizeComponents(t *testing.T) {
	helm, err := Normalize(renderChart(t, map[string]any{
		"networkPolicy":        map[string]any{"enabled": true},
		"resourceSizeWebhooks": map[string]any{"enabled": true},
	}))
	require.NoError(t, err)
	kust, err := Normalize(kustomizeOverlay(t, "networkpolicy", "resource-size"))
	require.NoError(t, err)
	require.Contains(t, kust, "NetworkPolicy/"+ReleaseNamespace+"/seedwarden")
	require.Contains(t, kust, "ValidatingWebhookConfiguration//seedwarden-resource-size")
	compare(t, helm, withoutNamespace(t, kust))
}
