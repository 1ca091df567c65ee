package placement_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// corpusSize is the number of scenarios in testdata/conformance (corpus v2).
const corpusSize = 1229

// TestConformanceCorpusUnchanged recomputes testdata/conformance.sha256 (what
// `sha256sum` prints for every file of testdata/conformance, sorted by name)
// and requires it to equal the committed manifest, so that an edited, added
// or removed scenario fails here rather than silently changing the contract.
// The corpus is copied whole from the shared recording and never edited; the
// manifest changes only with a new recording.
func TestConformanceCorpusUnchanged(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "conformance.sha256"))
	require.NoError(t, err)

	entries, err := os.ReadDir(filepath.Join("testdata", "conformance"))
	require.NoError(t, err)
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		require.False(t, e.IsDir(), "testdata/conformance holds only scenario files, not %s/", e.Name())
		names = append(names, e.Name())
	}
	slices.Sort(names)
	var got strings.Builder
	for _, name := range names {
		raw, err := os.ReadFile(filepath.Join("testdata", "conformance", name))
		require.NoError(t, err)
		sum := sha256.Sum256(raw)
		got.WriteString(hex.EncodeToString(sum[:]) + "  " + name + "\n")
	}
	require.Equal(t, string(want), got.String(), "testdata/conformance differs from the recorded corpus (testdata/conformance.sha256)")
	require.Len(t, names, corpusSize)
}
