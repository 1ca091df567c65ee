package main

import (
	"encoding/json"
	"encoding/xml"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/placement"
)

const exampleSuite = "../../examples/test-suite.yaml"

// The shipped suite passes: every case PASS, exit code 0, and the JUnit
// file says the same.
func TestExampleSuitePasses(t *testing.T) {
	junit := filepath.Join(t.TempDir(), "suite.xml")
	code, out, errOut := runCmd(t, "test", exampleSuite, "--junit", junit)
	require.Equal(t, exitOK, code, "%s%s", out, errOut)
	assert.Empty(t, errOut)
	assert.Equal(t, 6, strings.Count(out, " PASS\n"), out)
	assert.NotContains(t, out, "FAIL")
	assert.Contains(t, out, "6 of 6 cases passed\n")
	for _, kind := range []string{kindShoot, kindSeedChange, kindSeedAutoscaler} {
		assert.Contains(t, out, " "+kind+" ", "the suite has a %s case", kind)
	}
	var doc junitSuites
	data, err := os.ReadFile(junit)
	require.NoError(t, err)
	require.NoError(t, xml.Unmarshal(data, &doc))
	assert.Equal(t, 6, doc.Tests)
	assert.Zero(t, doc.Failures)
}

// copyExamples copies examples/ into a temp dir (the suite names its files
// relative to itself) and applies edit to the named file.
func copyExamples(t *testing.T, file string, edit func(string) string) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir("../../examples")
	require.NoError(t, err)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("../../examples", e.Name()))
		require.NoError(t, err)
		s := string(data)
		if e.Name() == file {
			edited := edit(s)
			require.NotEqual(t, s, edited, "the mutation changes %s", file)
			s = edited
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), []byte(s), 0o600))
	}
	return filepath.Join(dir, "test-suite.yaml")
}

// A mutation of what decides makes the case that pins it fail, with exit
// code 1 and what was expected beside what was decided, in the table and
// in the JUnit file; the other cases still pass.
func TestSuiteMutationFailsNamedCase(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		edit       func(string) string
		failed     string
		diff       []string
	}{
		{"a scorer weight changed", "test-config.yaml",
			func(s string) string {
				s = strings.Replace(s, "{name: LeastAllocated, weight: 2}", "{name: LeastAllocated, weight: 1}", 1)
				return strings.Replace(s, "{name: MostAllocated, weight: 1}", "{name: MostAllocated, weight: 2}", 1)
			},
			"webshop goes to aws-eu2",
			[]string{"    expected: seed aws-eu2\n", "    actual:   seed aws-eu1\n"}},
		{"a toleration removed", "test-suite.yaml",
			func(s string) string {
				return strings.Replace(s, "      tolerations:\n      - key: seed.gardener.cloud/protected\n", "", 1)
			},
			"ledger with the toleration goes to aws-eu-restricted",
			[]string{"    expected: seed aws-eu-restricted\n", "    actual:   unschedulable ShootSelectorMismatch, TaintNotTolerated\n", "    why:      0/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			suite := copyExamples(t, tc.file, tc.edit)
			junit := filepath.Join(t.TempDir(), "suite.xml")
			code, out, errOut := runCmd(t, "test", suite, "--junit", junit)
			require.Equal(t, exitError, code, "%s%s", out, errOut)
			assert.Regexp(t, `\n\S+ +`+regexpQuote(tc.failed)+` +\S+ +FAIL\n`, out)
			assert.Equal(t, 1, strings.Count(out, " FAIL\n"), out)
			assert.Contains(t, out, "--- FAIL: "+tc.failed+" (")
			for _, d := range tc.diff {
				assert.Contains(t, out, d)
			}
			assert.Contains(t, out, "5 of 6 cases passed\n")
			data, err := os.ReadFile(junit)
			require.NoError(t, err)
			var doc junitSuites
			require.NoError(t, xml.Unmarshal(data, &doc))
			require.Equal(t, 1, doc.Failures)
			for _, c := range doc.Suites[0].Cases {
				if c.Name == tc.failed {
					require.NotNil(t, c.Failure, c.Name)
					assert.Contains(t, c.Failure.Text, strings.TrimSpace(tc.diff[0]))
				} else {
					assert.Nil(t, c.Failure, c.Name)
				}
			}
		})
	}
}

// A JUnit file that cannot be written is output that failed (exit code 1),
// after the table, with the flag and its value; nothing is left behind.
func TestSuiteJUnitNotWritten(t *testing.T) {
	junit := filepath.Join(t.TempDir(), "missing", "suite.xml")
	code, out, errOut := runCmd(t, "test", exampleSuite, "--junit", junit)
	assert.Equal(t, exitError, code)
	assert.Contains(t, out, "6 of 6 cases passed\n")
	assert.Contains(t, errOut, `webhook test: --junit "`+junit+`": `)
	assert.NoDirExists(t, filepath.Dir(junit))
}

// Bad input is exit code 2, nothing on stdout, no JUnit file, and each
// problem with the file's position, the field and its value.
func TestSuiteBadInput(t *testing.T) {
	const landscape = "landscape: EX/landscape.yaml\n"
	examples, err := filepath.Abs("../../examples")
	require.NoError(t, err)
	for _, tc := range []struct {
		name, suite string
		want        []string
	}{
		{"no cases", landscape, []string{"suite.yaml:1:1: cases: no case in the suite"}},
		{"empty file", "", []string{"suite.yaml: empty"}},
		{"not YAML", "cases: [", []string{"suite.yaml: "}},
		{"unknown field", landscape + "cases:\n- name: a\n  shoot: x.yaml\n  expct: {seed: x}\n",
			[]string{`suite.yaml:5: unknown field "expct"; did you mean "expect"?`}},
		{"unknown expectation", landscape + "cases:\n- name: a\n  shoot: EX/shoot.yaml\n  expect: {sed: x}\n",
			[]string{`suite.yaml:5: unknown field "sed"; did you mean "seed"?`}},
		{"two subjects", landscape + "cases:\n- name: a\n  shoot: x.yaml\n  seedAutoscaler: garden/x\n  expect: {seed: x}\n",
			[]string{`suite.yaml:3:9: cases[0].name: "a": want exactly one of shoot, seedChange and seedAutoscaler, found 2`}},
		{"name twice", landscape + "cases:\n- name: a\n  shoot: EX/shoot.yaml\n  expect: {seed: x}\n- name: a\n  shoot: EX/shoot.yaml\n  expect: {seed: x}\n",
			[]string{`suite.yaml:6:9: cases[1].name: "a" is given twice`}},
		{"missing Shoot file", landscape + "cases:\n- name: a\n  shoot: missing.yaml\n  expect: {seed: x}\n",
			[]string{`suite.yaml:4:10: cases[0].shoot: "missing.yaml": open `, "no such file"}},
		{"unknown reason code", landscape + "cases:\n- name: a\n  shoot: EX/shoot.yaml\n  expect:\n    unschedulable: [SeedFull, TaintNotToleratd]\n",
			[]string{`suite.yaml:6:31: cases[0].expect.unschedulable[1]: unknown reason code "TaintNotToleratd"`}},
		{"bad verdict", landscape + "cases:\n- name: a\n  seedChange: {shoot: garden-dev/billing, seed: aws-eu2}\n  expect: {binding: maybe}\n",
			[]string{`suite.yaml:5:21: cases[0].expect.binding: unsupported value "maybe" (want allowed or denied)`}},
		{"Shoot not in the landscape", landscape + "cases:\n- name: a\n  seedChange: {shoot: garden-dev/nope, seed: aws-eu2}\n  expect: {binding: denied}\n",
			[]string{`suite.yaml:4:15: cases[0].seedChange: shoot "garden-dev/nope": no such Shoot in the landscape`}},
		{"expectation of another kind", landscape + "cases:\n- name: a\n  shoot: EX/shoot.yaml\n  expect: {seed: aws-eu2, binding: denied, replicas: 1}\n",
			[]string{`suite.yaml:5:36: cases[0].expect.binding: a shoot case does not decide binding`,
				`suite.yaml:5:54: cases[0].expect.replicas: a shoot case does not decide replicas`}},
		{"no autoscalers file", landscape + "cases:\n- name: a\n  seedAutoscaler: garden/aws-eu\n  expect: {replicas: 1}\n",
			[]string{`suite.yaml:4:19: cases[0].seedAutoscaler: "garden/aws-eu": the suite names no autoscalers file`}},
		{"no landscape", "cases:\n- name: a\n  shoot: EX/shoot.yaml\n  expect: {seed: x}\n",
			[]string{"suite.yaml:1:1: landscape: no landscape: name a file, or give --kubeconfig PATH"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "suite.yaml")
			require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(tc.suite, "EX/", examples+"/")), 0o600))
			junit := filepath.Join(t.TempDir(), "suite.xml")
			code, out, errOut := runCmd(t, "test", path, "--junit", junit)
			assert.Equal(t, exitUsage, code, errOut)
			assert.Empty(t, out)
			for _, w := range tc.want {
				assert.Contains(t, errOut, w)
			}
			assert.NoFileExists(t, junit)
		})
	}
}

// The suite reader never panics, whatever the file holds; it refuses with
// bad input (a *suiteError, exit code 2) or returns a suite whose every case
// has one kind, its expectations and, for a shoot case, a decoded Shoot. The
// suite is read as examples/test-suite.yaml, so that its Shoot files resolve
// and the seed from that file is read to the end.
func FuzzReadSuite(f *testing.F) {
	data, err := os.ReadFile(exampleSuite)
	require.NoError(f, err)
	f.Add(data)
	f.Add([]byte("cases:\n- name: a\n  shoot: {kind: Shoot}\n  expect: {unschedulable: [x]}\n"))
	f.Add([]byte("cases: [{seedChange: {shoot: a/b}}]"))
	f.Add([]byte("cases: [{name: a, seedAutoscaler: x, expect: {replicas: 2}}]\nautoscalers: autoscaling.yaml\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ls, err := parseSuite(exampleSuite, data)
		if err != nil {
			var se *suiteError
			require.ErrorAs(t, err, &se)
			require.NotEmpty(t, se.msg)
			return
		}
		require.NotEmpty(t, ls.suite.Cases)
		for i, c := range ls.suite.Cases {
			require.NotEmpty(t, c.Name)
			require.Empty(t, c.Expect.foreign(c.kind()), "case %d", i)
			if c.kind() == kindShoot {
				require.NotNil(t, ls.shoots[i], "case %d", i)
			}
		}
	})
}

// The suite's JSON Schema (docs/test-suite.schema.json) names the fields
// the reader takes, the verdicts, and every reason code placement gives.
func TestSuiteSchemaMatchesReader(t *testing.T) {
	data, err := os.ReadFile("../../docs/test-suite.schema.json")
	require.NoError(t, err)
	type object struct {
		Properties           map[string]json.RawMessage `json:"properties"`
		AdditionalProperties *bool                      `json:"additionalProperties"`
		Enum                 []string                   `json:"enum"`
	}
	var schema struct {
		object
		Defs map[string]object `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(data, &schema))
	for typ, obj := range map[string]object{
		"suite": schema.object, "suiteCase": schema.Defs["case"],
		"suiteSeedChange": schema.Defs["seedChange"], "suiteExpect": schema.Defs["expect"],
	} {
		assert.ElementsMatch(t, suiteFields[typ], slices.Collect(maps.Keys(obj.Properties)), typ)
		require.NotNil(t, obj.AdditionalProperties, typ)
		assert.False(t, *obj.AdditionalProperties, "%s: unknown fields are refused, as the reader refuses them", typ)
	}
	assert.Equal(t, []string{verdictAllowed, verdictDenied}, schema.Defs["verdict"].Enum)
	var codes []string
	for _, c := range placement.ReasonCodes {
		codes = append(codes, string(c.Code))
	}
	assert.ElementsMatch(t, codes, schema.Defs["reasonCode"].Enum)
}
