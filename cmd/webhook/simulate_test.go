package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/placement"
)

func TestSimulateDirectory(t *testing.T) {
	code, out, errOut := runCmd(t, "simulate", "-f", "testdata/scenarios")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, `{"name":"least-usage","seed":"seed-b"}
{"name":"no-strategy","unschedulable":true,"step":"Strategy","message":"no matching seed candidate found for Configuration (Cloud Profile 'aws', Region 'eu-west-1', SeedDeterminationStrategy 'SameRegion')","reasons":{"seed-a":"SameRegion: provider type or region differs from the shoot's"},"codes":{"seed-a":"RegionMismatch"},"counts":{"RegionMismatch":1},"seeds":1}
{"name":"tainted","unschedulable":true,"step":"Candidates","message":"0/2 seed cluster candidate(s) are eligible for scheduling","reasons":{"seed-a":"shoot does not tolerate the seed's taints","seed-b":"shoot does not tolerate the seed's taints"},"codes":{"seed-a":"TaintNotTolerated","seed-b":"TaintNotTolerated"},"counts":{"TaintNotTolerated":2},"seeds":2}
`, out)
}

// Files and directories mix, -f repeats, and further arguments are files too.
func TestSimulateFileArguments(t *testing.T) {
	code, out, _ := runCmd(t, "simulate", "-f", "testdata/scenarios/tainted.json", "-f", "testdata/scenarios/least-usage.json", "testdata/scenarios/no-strategy.json")
	require.Equal(t, exitOK, code)
	assert.Equal(t, []string{"tainted", "least-usage", "no-strategy"}, names(t, out))
}

// A scenario that cannot be decided gives an error line naming the file; the
// others are still decided, and the exit code is 1.
func TestSimulateKeepsGoing(t *testing.T) {
	code, out, _ := runCmd(t, "simulate", "-f", "testdata/broken", "-f", "testdata/scenarios/least-usage.json", "-f", "testdata/missing.json")
	assert.Equal(t, exitError, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 5, out)
	assert.Equal(t, `{"name":"testdata/missing.json","error":"stat testdata/missing.json: no such file or directory"}`, lines[0])
	assert.Equal(t, `{"name":"testdata/broken/bad-strategy.json","error":"strategy: unsupported value \"Nearest\" (want \"SameRegion\" or \"MinimalDistance\")"}`, lines[1])
	assert.Equal(t, `{"name":"testdata/broken/no-shoot.json","error":"shoot: missing"}`, lines[2])
	assert.Contains(t, lines[3], `{"name":"testdata/broken/not-json.json","error":"not a scenario: `)
	assert.Equal(t, `{"name":"least-usage","seed":"seed-b"}`, lines[4])
}

// The configuration's strategy applies unless the scenario names one.
func TestSimulateStrategyPrecedence(t *testing.T) {
	sameRegion := writeFile(t, "config.yaml", configHeader+"strategy: SameRegion\n")
	code, out, _ := runCmd(t, "simulate", "--config", sameRegion, "-f", "testdata/scenarios/no-strategy.json")
	require.Equal(t, exitOK, code)
	r := decodeResults(t, out)[0]
	assert.True(t, r.Unschedulable)
	assert.Equal(t, "Strategy", string(r.Step))

	data, err := os.ReadFile("testdata/scenarios/no-strategy.json")
	require.NoError(t, err)
	var sc map[string]any
	require.NoError(t, json.Unmarshal(data, &sc))
	sc["strategy"] = "MinimalDistance"
	data, err = json.Marshal(sc)
	require.NoError(t, err)
	override := filepath.Join(t.TempDir(), "override.json")
	require.NoError(t, os.WriteFile(override, data, 0o600))
	code, out, _ = runCmd(t, "simulate", "--config", sameRegion, "-f", override)
	require.Equal(t, exitOK, code)
	assert.Equal(t, `{"name":"override","seed":"seed-a"}`+"\n", out)
}

// Region configs are read from the configured garden namespace.
func TestSimulateGardenNamespace(t *testing.T) {
	scenario := map[string]any{
		"strategy": "MinimalDistance",
		"objects": []any{
			map[string]any{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile", "metadata": map[string]any{"name": "aws"}, "spec": map[string]any{"type": "aws"}},
			map[string]any{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project", "metadata": map[string]any{"name": "proj"}, "spec": map[string]any{"namespace": "garden-proj"}},
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{
				"name": "regions", "namespace": "garden-ops",
				"labels":      map[string]any{"scheduling.gardener.cloud/purpose": "region-config"},
				"annotations": map[string]any{"scheduling.gardener.cloud/cloudprofiles": "aws"},
			}, "data": map[string]any{"eu-west-1": "us-east-1: 1\neu-west-2: 50\n"}},
			readySeed("seed-eu", "eu-west-2"),
			readySeed("seed-us", "us-east-1"),
		},
		"shoot": map[string]any{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
			"metadata": map[string]any{"name": "new", "namespace": "garden-proj"},
			"spec":     map[string]any{"cloudProfileName": "aws", "region": "eu-west-1", "provider": map[string]any{"type": "aws"}}},
	}
	data, err := json.Marshal(scenario)
	require.NoError(t, err)
	path := writeFile(t, "ns.json", string(data))

	// In "garden" (the default) there is no region config: name distance
	// makes eu-west-2 nearest.
	_, out, _ := runCmd(t, "simulate", "-f", path)
	assert.Equal(t, `{"name":"ns","seed":"seed-eu"}`+"\n", out)
	// With gardenNamespace garden-ops the region config sends it to us-east-1.
	cfg := writeFile(t, "config.yaml", configHeader+"gardenNamespace: garden-ops\n")
	_, out, _ = runCmd(t, "simulate", "--config", cfg, "-f", path)
	assert.Equal(t, `{"name":"ns","seed":"seed-us"}`+"\n", out)
}

func readySeed(name, region string) map[string]any {
	return map[string]any{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"provider": map[string]any{"type": "aws", "region": region},
			"networks": map[string]any{"pods": "10.112.0.0/12", "services": "10.104.0.0/13"}},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "GardenletReady", "status": "True"}},
			"lastOperation": map[string]any{"type": "Reconcile", "state": "Succeeded"}}}
}

func TestSimulateLandscape(t *testing.T) {
	code, out, errOut := runCmd(t, "simulate", "--landscape", "../../examples/landscape.yaml", "--shoot", "../../examples/shoot.yaml")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, `{"name":"webshop","seed":"aws-eu2"}`+"\n", out)

	code, out, _ = runCmd(t, "simulate", "--landscape", "../../examples/landscape.yaml", "--shoot", "../../examples/shoot-unschedulable.yaml")
	require.Equal(t, exitOK, code)
	r := decodeResults(t, out)[0]
	assert.Equal(t, "ledger", r.Name)
	assert.True(t, r.Unschedulable)
	assert.Equal(t, "Candidates", string(r.Step))
	assert.Equal(t, "shoot does not tolerate the seed's taints", r.Reasons["aws-eu-restricted"])
	assert.Len(t, r.Reasons, 6)
	assert.Equal(t, placement.TaintNotTolerated, r.Codes["aws-eu-restricted"])
	assert.Len(t, r.Codes, 6)

	// Scenarios and a landscape in one run: scenarios first.
	code, out, _ = runCmd(t, "simulate", "-f", "testdata/scenarios/least-usage.json", "--landscape", "../../examples/landscape.yaml", "--shoot", "../../examples/shoot.yaml")
	require.Equal(t, exitOK, code)
	assert.Equal(t, []string{"least-usage", "webshop"}, names(t, out))

}

func decodeResults(t *testing.T, out string) []result {
	t.Helper()
	var rs []result
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var r result
		require.NoError(t, dec.Decode(&r))
		rs = append(rs, r)
	}
	return rs
}

func names(t *testing.T, out string) []string {
	var ns []string
	for _, r := range decodeResults(t, out) {
		ns = append(ns, r.Name)
	}
	return ns
}

// A Seed with a deletionTimestamp is never chosen, even when it would win the
// tie by name; with nothing else left the reason says it is being deleted.
func TestSimulateSkipsDeletingSeeds(t *testing.T) {
	deletingSeed := readySeed("seed-a", "eu-west-1")
	deletingSeed["metadata"] = map[string]any{"name": "seed-a", "deletionTimestamp": "2026-01-01T00:00:00Z"}
	profile := map[string]any{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile", "metadata": map[string]any{"name": "aws"}, "spec": map[string]any{"type": "aws"}}
	shoot := map[string]any{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
		"metadata": map[string]any{"name": "new", "namespace": "garden-proj"},
		"spec":     map[string]any{"cloudProfileName": "aws", "region": "eu-west-1", "provider": map[string]any{"type": "aws"}}}
	tests := []struct {
		name  string
		seeds []any
		want  result
	}{
		{"another seed wins", []any{deletingSeed, readySeed("seed-b", "eu-west-1")}, result{Name: "s", Seed: "seed-b"}},
		{"only a deleting seed", []any{deletingSeed}, result{Name: "s", Unschedulable: true, Step: placement.StepUsable,
			Message: "none of the 1 seeds is valid for scheduling (not deleting, visible and ready)",
			Reasons: map[string]string{"seed-a": "seed is being deleted (metadata.deletionTimestamp is set)"},
			Codes:   map[string]placement.ReasonCode{"seed-a": placement.SeedDeleting}, Counts: map[placement.ReasonCode]int{placement.SeedDeleting: 1}, Seeds: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			project := map[string]any{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project", "metadata": map[string]any{"name": "proj"}, "spec": map[string]any{"namespace": "garden-proj"}}
			data, err := json.Marshal(map[string]any{"strategy": "SameRegion", "objects": append([]any{profile, project}, tt.seeds...), "shoot": shoot})
			require.NoError(t, err)
			code, out, errOut := runCmd(t, "simulate", "-f", writeFile(t, "s.json", string(data)))
			require.Equal(t, exitOK, code, errOut)
			assert.Equal(t, []result{tt.want}, decodeResults(t, out))
		})
	}
}

// A self-hosted Shoot (a worker pool with controlPlane) is not scheduled,
// and simulate says so.
func TestSimulateSelfHostedShoot(t *testing.T) {
	profile := map[string]any{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile", "metadata": map[string]any{"name": "aws"}, "spec": map[string]any{"type": "aws"}}
	shoot := map[string]any{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
		"metadata": map[string]any{"name": "new", "namespace": "garden-proj"},
		"spec": map[string]any{"cloudProfileName": "aws", "region": "eu-west-1", "provider": map[string]any{"type": "aws",
			"workers": []any{map[string]any{"name": "cp", "controlPlane": map[string]any{"backup": map[string]any{"provider": "aws"}}}}}}}
	data, err := json.Marshal(map[string]any{"strategy": "SameRegion", "objects": []any{profile, readySeed("seed-a", "eu-west-1")}, "shoot": shoot})
	require.NoError(t, err)
	code, out, errOut := runCmd(t, "simulate", "-f", writeFile(t, "s.json", string(data)))
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, []result{{Name: "s", Unschedulable: true, Step: placement.StepSelfHosted, Code: placement.ShootSelfHosted,
		Message: `shoot is self-hosted (worker pool "cp" has controlPlane): its control plane runs in its own cluster, it is not scheduled to a seed`}},
		decodeResults(t, out))
}

func TestSimulateTextOutput(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.json")
	tests := []struct {
		name string
		args []string
		code int
		want []string // lines, in order
	}{
		{"placed", []string{"--landscape", "../../examples/landscape.yaml", "--shoot", "../../examples/shoot.yaml"}, exitOK,
			[]string{"webshop: seed aws-eu2\n  2/6 seeds eligible; next, were aws-eu2 full: aws-eu1\n", `  gcp-eu1: provider "gcp" differs from the shoot's "aws"`}},
		{"unschedulable, every seed's reason", []string{"--landscape", "../../examples/landscape.yaml", "--shoot", "../../examples/shoot-unschedulable.yaml"}, exitOK,
			[]string{"ledger: unschedulable at step Candidates: 0/6 seeds eligible\n", "  aws-eu-restricted: shoot does not tolerate the seed's taints"}},
		{"error", []string{"-f", missing}, exitError, []string{missing + ": error: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, append([]string{"simulate", "-o", "text"}, tt.args...)...)
			require.Equal(t, tt.code, code, errOut)
			for _, w := range tt.want {
				assert.Contains(t, out, w)
			}
			assert.False(t, json.Valid([]byte(strings.SplitN(out, "\n", 2)[0])), "text, not JSON: %s", out)
		})
	}

	code, _, errOut := runCmd(t, "simulate", "-o", "yaml", "--landscape", "../../examples/landscape.yaml", "--shoot", "../../examples/shoot.yaml")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `-o: unsupported value "yaml" (want json or text)`)
}

// A Shoot the landscape already holds is decided without its own charge:
// analytics sits on gcp-us1, full at 3 of 3 with it, so counted twice it
// would find no seed.
func TestSimulateLandscapeLeavesTheShootItselfOut(t *testing.T) {
	shoot := writeFile(t, "analytics.yaml", `apiVersion: core.gardener.cloud/v1beta1
kind: Shoot
metadata: {name: analytics, namespace: garden-dev}
spec:
  cloudProfile: {kind: CloudProfile, name: gcp}
  region: us-central1
  provider: {type: gcp, workers: [{name: worker, zones: [us-central1-a]}]}
`)
	code, out, errOut := runCmd(t, "simulate", "--landscape", "../../examples/landscape.yaml", "--shoot", shoot)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, []result{{Name: "analytics", Seed: "gcp-us1"}}, decodeResults(t, out))

	data, err := os.ReadFile(shoot)
	require.NoError(t, err)
	renamed := strings.Replace(string(data), "name: analytics,", "name: analytics-2,", 1)
	code, out, errOut = runCmd(t, "simulate", "--landscape", "../../examples/landscape.yaml", "--shoot", writeFile(t, "analytics-2.yaml", renamed))
	require.Equal(t, exitOK, code, errOut)
	r := decodeResults(t, out)
	require.Len(t, r, 1)
	assert.True(t, r[0].Unschedulable, "another Shoot finds gcp-us1 full")
}
