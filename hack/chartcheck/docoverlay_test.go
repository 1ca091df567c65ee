package chartcheck

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// docFile finds a YAML block of docs/install.md that starts with a comment
// naming its file: "# overlays/virtual-garden/<name>".
func docFile(t *testing.T, doc, name string) []byte {
	t.Helper()
	re := regexp.MustCompile("(?s)```yaml\n((?:[ \t]*)# overlays/virtual-garden/" + regexp.QuoteMeta(name) + "\n.*?)```")
	m := re.FindStringSubmatch(doc)
	require.NotNil(t, m, "install.md has no block for overlays/virtual-garden/%s", name)
	// The block is indented under a list item: take the indentation off.
	indent := regexp.MustCompile(`^[ \t]*`).FindString(m[1])
	return regexp.MustCompile(`(?m)^`+indent).ReplaceAll([]byte(m[1]), nil)
}

// The overlay docs/install.md shows for a virtual garden builds as written,
// in overlays/virtual-garden/ of the clone (the layout both pages use), with
// the base's config.yaml less its certificate section: every webhook by URL
// at the documented host, and a configuration that watches no Certificate.
func TestVirtualGardenDocumentedOverlayBuilds(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root(t), "docs", "install.md"))
	require.NoError(t, err)
	doc := string(data)
	// overlays/<name>/ below the root, as documented; removed at the end.
	require.NoError(t, os.MkdirAll(filepath.Join(root(t), "overlays"), 0o755))
	dir, err := os.MkdirTemp(filepath.Join(root(t), "overlays"), "chartcheck-")
	require.NoError(t, err)
	t.Cleanup(func() {
		os.RemoveAll(dir)
		os.Remove(filepath.Join(root(t), "overlays")) // only if empty
	})
	for _, name := range []string{"kustomization.yaml", "webhook-host.yaml"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), docFile(t, doc, name), 0o600))
	}
	var cfg map[string]any
	raw, err := os.ReadFile(filepath.Join(root(t), ManifestsDir, ConfigFile))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(raw, &cfg))
	delete(cfg, "certificate")
	out, err := yaml.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ConfigFile), out, 0o600))

	objs, err := RenderKustomize(dir)
	require.NoError(t, err)
	built, err := Normalize(objs)
	require.NoError(t, err)
	urls, services := webhookEndpoints(t, built)
	assert.Empty(t, services)
	assert.NotEmpty(t, urls)
	for name, u := range urls {
		assert.Regexp(t, `^https://`+regexp.QuoteMeta(DefaultWebhookHost)+`/`, u, name)
	}
	assert.NotContains(t, path(built["ConfigMap/"+ReleaseNamespace+"/"+ConfigName], "data", ConfigFile), "certificate")
}
