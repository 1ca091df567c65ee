package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A file named on the command line that cannot be read, or holds nothing to
// work on, is bad usage: exit code 2, nothing on stdout, and one line that
// names the command, the flag and the value, whichever command reads it.
func TestUnreadableFileNamesCommandAndFlag(t *testing.T) {
	const landscape, shoot = "../../examples/landscape.yaml", "../../examples/shoot.yaml"
	empty := writeFile(t, "empty.yaml", "")
	emptyErr := `landscape ` + empty + `: empty: no Seed, Shoot, CloudProfile, NamespacedCloudProfile, Project or ConfigMap in it` + "\n"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"simulate: missing landscape", []string{"simulate", "--landscape", "missing.yaml", "--shoot", shoot},
			`webhook simulate: --landscape "missing.yaml": open missing.yaml: no such file or directory` + "\n"},
		{"simulate: missing landscape, with scenarios", []string{"simulate", "-f", "testdata/scenarios/least-usage.json", "--landscape", "missing.yaml", "--shoot", shoot},
			`webhook simulate: --landscape "missing.yaml": open missing.yaml: no such file or directory` + "\n"},
		{"simulate: missing shoot", []string{"simulate", "--landscape", landscape, "--shoot", "missing.yaml"},
			`webhook simulate: --shoot "missing.yaml": open missing.yaml: no such file or directory` + "\n"},
		{"simulate: shoot file without a Shoot", []string{"simulate", "--landscape", landscape, "--shoot", planNewSeed},
			`webhook simulate: --shoot "` + planNewSeed + `": want a core.gardener.cloud/v1beta1 Shoot, found Seed "d"` + "\n"},
		{"simulate: empty landscape", []string{"simulate", "--landscape", empty, "--shoot", shoot},
			`webhook simulate: --landscape "` + empty + `": ` + emptyErr},
		{"simulate: missing config", []string{"simulate", "-f", "testdata/scenarios", "--config", "missing.yaml"},
			`webhook simulate: --config "missing.yaml": open missing.yaml: no such file or directory` + "\n"},
		{"plan: missing landscape", []string{"plan", "--landscape", "missing.yaml"},
			`webhook plan: --landscape "missing.yaml": open missing.yaml: no such file or directory` + "\n"},
		{"plan: empty landscape", []string{"plan", "--landscape", empty},
			`webhook plan: --landscape "` + empty + `": ` + emptyErr},
		{"plan: missing config", []string{"plan", "--landscape", landscape, "--config", "missing.yaml"},
			`webhook plan: --config "missing.yaml": open missing.yaml: no such file or directory` + "\n"},
		{"validate: missing config", []string{"validate", "--config", "missing.yaml"},
			`webhook validate: --config "missing.yaml": open missing.yaml: no such file or directory` + "\n"},
		{"check-config: missing config", []string{"check-config", "--config", "missing.yaml", "--mode", "landscape"},
			`webhook validate: --config "missing.yaml": open missing.yaml: no such file or directory` + "\n"},
		{"serve: missing config", []string{"serve", "--config", "missing.yaml"},
			`webhook serve: --config "missing.yaml": open missing.yaml: no such file or directory` + "\n"},
		{"serve: empty landscape", []string{"serve", "--landscape", empty},
			`webhook serve: --landscape "` + empty + `": ` + emptyErr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, tc.args...)
			assert.Equal(t, exitUsage, code, errOut)
			assert.Empty(t, out)
			assert.Equal(t, tc.want, errOut)
		})
	}
}

// The two sources of a landscape are mutually exclusive, and the message
// says so; naming neither asks for one.
func TestLandscapeSourcesMutuallyExclusive(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"plan: both", []string{"plan", "--landscape", planLandscape, "--kubeconfig", "kc"},
			"webhook plan: --landscape and --kubeconfig are mutually exclusive: give one of them\n"},
		{"plan: neither", []string{"plan", "--drain", "a"},
			"webhook plan: no landscape: give --landscape FILE or --kubeconfig PATH\n"},
		{"serve: both", []string{"serve", "--landscape", planLandscape, "--kubeconfig", "kc"},
			"webhook serve: --landscape and --kubeconfig are mutually exclusive: give one of them\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, tc.args...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, out)
			assert.Equal(t, tc.want, errOut)
		})
	}
}

// An unknown flag is reported like an unknown command: with the nearest of
// the command's flags when one is within two edits, then the synopsis.
func TestUnknownFlagSuggestsNearest(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"plan --landscpe", []string{"plan", "--landscpe", "x"}, `webhook plan: unknown flag "--landscpe"; did you mean "--landscape"?`},
		{"plan --remove-sed", []string{"plan", "--remove-sed", "a"}, `webhook plan: unknown flag "--remove-sed"; did you mean "--remove-seed"?`},
		{"one dash", []string{"validate", "-confg", "x"}, `webhook validate: unknown flag "--confg"; did you mean "--config"?`},
		{"with =value", []string{"simulate", "--shot=a.yaml"}, `webhook simulate: unknown flag "--shot"; did you mean "--shoot"?`},
		{"two edits", []string{"serve", "--kubecnofig", "x"}, `webhook serve: unknown flag "--kubecnofig"; did you mean "--kubeconfig"?`},
		{"serve by default", []string{"--confg", "x"}, `webhook serve: unknown flag "--confg"; did you mean "--config"?`},
		{"nothing near", []string{"plan", "--frobnicate"}, `webhook plan: unknown flag "--frobnicate"`},
		{"one letter", []string{"simulate", "-x"}, `webhook simulate: unknown flag "-x"`},
		{"a bad value keeps the flag package's words", []string{"plan", "--add-shoots", "many"},
			`webhook plan: invalid argument "many" for "--add-shoots" flag: must be a whole number of at least 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, tc.args...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, out)
			first, rest, _ := strings.Cut(errOut, "\n")
			assert.Equal(t, tc.want, first)
			assert.Contains(t, rest, "Usage:\n  webhook ")
		})
	}
}

// plan -o json writes [] for an empty list, never null.
func TestPlanJSONEmptyListsAreArrays(t *testing.T) {
	noSeeds := writeFile(t, "landscape.yaml", `apiVersion: core.gardener.cloud/v1beta1
kind: CloudProfile
metadata: {name: aws}
spec: {type: aws, regions: [{name: eu-west-1}]}
`)
	for _, tc := range []struct {
		name  string
		args  []string
		empty []string
	}{
		{"no operation", []string{"--landscape", planLandscape}, []string{"placed", "unplaced", "stranded"}},
		{"remove a seed", []string{"--landscape", planLandscape, "--remove-seed", "b"}, []string{"placed", "unplaced"}},
		{"no seed at all", []string{"--landscape", noSeeds}, []string{"seeds", "groups", "placed", "unplaced", "stranded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, out, errOut := runCmd(t, append(append([]string{"plan"}, tc.args...), "-o", "json")...)
			var doc map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(out), &doc), errOut)
			for _, list := range []string{"seeds", "groups", "placed", "unplaced", "stranded"} {
				require.Contains(t, doc, list)
				if slices.Contains(tc.empty, list) {
					assert.Equal(t, "[]", string(doc[list]), list)
				} else {
					assert.Regexp(t, `^\[\s*\{`, string(doc[list]), list)
				}
			}
		})
	}
}
