// Package docs holds seedwarden's documentation. Its tests keep the pages in
// step with the code: the design's package table, the configuration and
// metrics references, the README's length and links, every relative link.
package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every directory of the module with Go files must be a row of the table in
// design.md, and every row a directory with Go files.
func TestDesignListsEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("design.md")
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")
	var listed []string
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		listed = append(listed, m[1])
	}

	var packages []string
	root := ".."
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "docs") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		if !slices.Contains(packages, filepath.ToSlash(dir)) {
			packages = append(packages, filepath.ToSlash(dir))
		}
		return nil
	})
	require.NoError(t, err)
	slices.Sort(packages)
	slices.Sort(listed)
	assert.Equal(t, packages, listed, "docs/design.md's package table")
}
