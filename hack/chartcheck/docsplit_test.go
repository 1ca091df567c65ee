package chartcheck

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/labels"
)

// virtualGardenApply finds install.md's applies of the virtual-garden overlay:
// the context and the label selector.
var virtualGardenApply = regexp.MustCompile(`kubectl --context (\S+) apply -k overlays/virtual-garden(?: \\\n\s+)? -l '([^']+)'`)

// The applies docs/install.md shows for a virtual garden put every object of
// the overlay into the cluster its seedwarden.io/cluster label names (both:
// into each), each object once per cluster, and the webhook configurations
// last (in an apply of their own, after the runtime cluster's).
func TestVirtualGardenDocumentedApplies(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root(t), "docs", "install.md"))
	require.NoError(t, err)
	m := virtualGardenApply.FindAllStringSubmatch(string(data), -1)
	require.Len(t, m, 3, "install.md: the virtual garden's part, the runtime cluster's, the webhook configurations")
	comps, err := Components(root(t))
	require.NoError(t, err)
	built, err := RenderOverlay(root(t), ComponentInputs(comps, DefaultWebhookHost), comps...)
	require.NoError(t, err)

	applied := map[string]map[string]int{} // context -> object -> how often
	lastHooks := -1
	for i, cmd := range m {
		sel, err := labels.Parse(cmd[2])
		require.NoError(t, err, cmd[2])
		if applied[cmd[1]] == nil {
			applied[cmd[1]] = map[string]int{}
		}
		for _, o := range built {
			md := o["metadata"].(map[string]any)
			ls := labels.Set{}
			for k, v := range md["labels"].(map[string]any) {
				ls[k] = v.(string)
			}
			if !sel.Matches(ls) {
				continue
			}
			applied[cmd[1]][Key(o)]++
			if Kind(o) == "MutatingWebhookConfiguration" || Kind(o) == "ValidatingWebhookConfiguration" {
				lastHooks = max(lastHooks, i)
				assert.Equal(t, len(m)-1, i, "%s applied by %q, before the last step", Key(o), cmd[2])
			}
		}
	}
	require.Equal(t, len(m)-1, lastHooks, "no step applies the webhook configurations")
	want := map[string][]string{
		ClusterVirtualGarden: {ClusterVirtualGarden, ClusterBoth},
		ClusterRuntime:       {ClusterRuntime, ClusterBoth},
	}
	require.Len(t, applied, 2, "install.md's applies name the contexts %v", applied)
	for _, o := range built {
		cluster := path(o, "metadata", "labels")[ClusterLabel].(string)
		for ctx, clusters := range want {
			n := applied[ctx][Key(o)]
			if cluster == clusters[0] || cluster == clusters[1] {
				assert.Equal(t, 1, n, "%s (%s) applied %d times to %s", Key(o), cluster, n, ctx)
			} else {
				assert.Zero(t, n, "%s (%s) applied to %s", Key(o), cluster, ctx)
			}
		}
	}
}
