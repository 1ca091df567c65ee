package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mdLink is a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// anchors returns the heading anchors GitHub gives doc: lower case, spaces
// to hyphens, punctuation other than hyphens and underscores dropped, a
// repeated anchor numbered. Headings inside code blocks do not count.
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for line := range strings.Lines(doc) {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		a := slug(strings.TrimLeft(strings.TrimSpace(line), "# "))
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// outside reports whether a link leaves the repository (or is a bare anchor
// handled by the caller).
func outside(target string) bool {
	return strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:")
}

// Every relative link in README.md and docs/*.md names a file of the
// repository and, for a Markdown file, a heading it has: moving a section
// cannot leave a link behind.
func TestLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	require.NoError(t, err)
	pages = append(pages, filepath.Join("..", "README.md"))
	for _, page := range pages {
		doc, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, m := range mdLink.FindAllStringSubmatch(string(doc), -1) {
			target := m[1]
			if outside(target) {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			body, err := os.ReadFile(path)
			if info, statErr := os.Stat(path); statErr == nil && info.IsDir() {
				continue
			}
			if !assert.NoError(t, err, "%s links to %s", page, target) {
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") {
				assert.True(t, anchors(string(body))[anchor], "%s links to %s: %s has no heading #%s", page, target, path, anchor)
			}
		}
	}
}

func TestAnchors(t *testing.T) {
	doc := "# Capacity: utilization and headroom\n## Binding (`/validate-shoot-binding`)\n```\n# not a heading\n```\n## Weighted scoring (GEP-13)\n## Notes\n## Notes\n"
	assert.Equal(t, map[string]bool{
		"capacity-utilization-and-headroom": true,
		"binding-validate-shoot-binding":    true,
		"weighted-scoring-gep-13":           true,
		"notes":                             true,
		"notes-1":                           true,
	}, anchors(doc))
}
