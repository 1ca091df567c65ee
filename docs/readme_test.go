package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxREADMELines keeps the README an entry page, so that a newcomer sees at
// once what seedwarden is, the two commands, where it sits, links.
// Everything else is in docs/.
const maxREADMELines = 150

// readme returns the repository's README.md.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	return string(b)
}

func TestREADMEIsShort(t *testing.T) {
	lines := strings.Count(readme(t), "\n")
	assert.LessOrEqual(t, lines, maxREADMELines, "README.md has %d lines; move detail into docs/", lines)
}

// Every page in docs/ is reachable from the README.
func TestREADMELinksEveryPage(t *testing.T) {
	linked := linkedDocs(readme(t))
	pages, err := filepath.Glob("*.md")
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	for _, page := range pages {
		assert.True(t, linked[page], "README.md does not link docs/%s", page)
	}
}

// linkedDocs returns the docs pages a Markdown text links to, by file name.
func linkedDocs(md string) map[string]bool {
	link := regexp.MustCompile(`\]\(docs/([^)#\s/]+\.md)(#[^)]*)?\)`)
	out := map[string]bool{}
	for _, m := range link.FindAllStringSubmatch(md, -1) {
		out[m[1]] = true
	}
	return out
}

func TestLinkedDocs(t *testing.T) {
	got := linkedDocs("[a](docs/a.md) [b](docs/b.md#x) [c](../docs/c.md) `docs/d.md` [e](docs/sub/e.md)")
	assert.Equal(t, map[string]bool{"a.md": true, "b.md": true}, got)
}

// The two commands for a fresh machine stay at the top, spelled as CI
// (.ci/run) and reviewers use them.
func TestREADMEQuickStartCommands(t *testing.T) {
	md := readme(t)
	quick := strings.Index(md, "## Quick start")
	require.GreaterOrEqual(t, quick, 0, "README.md has no Quick start section")
	for _, cmd := range []string{"\nmake demo ", "\nmake test "} {
		at := strings.Index(md, cmd)
		assert.Greater(t, at, quick, "README.md's Quick start does not show %q", strings.TrimSpace(cmd))
		assert.Less(t, strings.Count(md[:max(at, 0)], "\n"), 40, "%q is not near the top", strings.TrimSpace(cmd))
	}
}
