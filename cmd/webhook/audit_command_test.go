package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/landscape"
)

const exampleLandscape = "../../examples/landscape.yaml"

// taintedLandscape is the example landscape with a taint on seed.
func taintedLandscape(t *testing.T, seed string) string {
	t.Helper()
	data, err := os.ReadFile(exampleLandscape)
	require.NoError(t, err)
	text := string(data)
	i := strings.Index(text, "kind: Seed\nmetadata:\n  name: "+seed+"\n")
	require.GreaterOrEqual(t, i, 0)
	j := i + strings.Index(text[i:], "\nspec:\n") + len("\nspec:\n")
	text = text[:j] + "  taints:\n  - key: audit-test\n" + text[j:]
	path := filepath.Join(t.TempDir(), "landscape.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	return path
}

// The example landscape breaks no rule; tainted, exactly the Shoots on the
// tainted seed (that do not tolerate it and are not being deleted) do.
func TestAuditCommand(t *testing.T) {
	code, out, errOut := runCmd(t, "audit", "--landscape", exampleLandscape)
	assert.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `^0 of \d+ Shoots with a seed break a placement rule \(0 results\)\n$`, out)

	objs, err := landscape.ReadFile(exampleLandscape, nil)
	require.NoError(t, err)
	var want []string
	for _, o := range objs {
		if s, ok := o.(*api.Shoot); ok && ptr.Deref(s.Spec.SeedName, "") == "aws-eu1" && s.DeletionTimestamp == nil && len(s.Spec.Tolerations) == 0 {
			want = append(want, s.Namespace+"/"+s.Name)
		}
	}
	require.NotEmpty(t, want)

	path := taintedLandscape(t, "aws-eu1")
	code, out, errOut = runCmd(t, "audit", "--landscape", path, "-o", "json")
	assert.Equal(t, exitViolations, code, errOut)
	var got auditJSON
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	var shoots []string
	for _, r := range got.Results {
		assert.Equal(t, "TaintNotTolerated", r.Rule)
		assert.Equal(t, "aws-eu1", r.Seed)
		shoots = append(shoots, r.Namespace+"/"+r.Shoot)
	}
	slices.Sort(want)
	assert.Equal(t, want, shoots)
	assert.Equal(t, map[string]int{"TaintNotTolerated": len(want)}, got.ByRule)
	assert.Equal(t, len(want), got.Violating)

	code, out, _ = runCmd(t, "audit", "--landscape", path, "--seed", "aws-eu2")
	assert.Equal(t, exitOK, code, "only the Shoots of aws-eu2")
	assert.Contains(t, out, "0 of ")
	code, out, _ = runCmd(t, "audit", "--landscape", path, "--seed", "aws-eu1")
	assert.Equal(t, exitViolations, code)
	assert.Contains(t, out, want[0]+" on aws-eu1: TaintNotTolerated: spec.tolerations [] do not tolerate the taints [\"audit-test\"] of seed \"aws-eu1\"\n")
}

func TestAuditCommandBadInput(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no landscape", nil, "webhook audit: no landscape: give --landscape FILE or --kubeconfig PATH"},
		{"both", []string{"--landscape", exampleLandscape, "--kubeconfig", "x"}, "webhook audit: " + errLandscapeWithKubeconfig},
		{"unknown output", []string{"--landscape", exampleLandscape, "-o", "yaml"}, `webhook audit: -o: unsupported value "yaml" (want text or json)`},
		{"unknown seed", []string{"--landscape", exampleLandscape, "--seed", "nope"}, `webhook audit: --seed "nope": no such seed in the landscape`},
		{"missing file", []string{"--landscape", "testdata/missing.yaml"}, `webhook audit: --landscape "testdata/missing.yaml": `},
		{"stray argument", []string{"--landscape", exampleLandscape, "a"}, `webhook audit: unexpected argument "a"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, append([]string{"audit"}, tt.args...)...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tt.want)
		})
	}
}
