package config

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// module is this repository's module path.
const module = "github.com/seedwarden/seedwarden"

// TestImportsNoSeedwardenPackage keeps config plain data: it imports no
// package of this module, so any package may read the configuration and
// cmd/webhook converts it into each package's options.
func TestImportsNoSeedwardenPackage(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		require.NoError(t, err)
		checked++
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			assert.False(t, path == module || strings.HasPrefix(path, module+"/"), "%s imports %s", name, path)
		}
	}
	require.NotZero(t, checked)
	mod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	require.NoError(t, err)
	assert.Contains(t, string(mod), "module "+module+"\n", "the module path this test looks for")
}
