package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/autoscaleplan"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/operationsapi"
	"github.com/seedwarden/seedwarden/internal/plan"
	"github.com/seedwarden/seedwarden/internal/seedscale"
)

const (
	autoscaleDir       = "testdata/autoscale/"
	autoscaleLandscape = autoscaleDir + "landscape.yaml"
	autoscaleConfig    = autoscaleDir + "config.yaml"
)

// runAutoscale runs plan --autoscale on the test landscape and config.
func runAutoscale(t *testing.T, file string, extra ...string) (int, string, string) {
	t.Helper()
	args := append([]string{"plan", "--landscape", autoscaleLandscape, "--config", autoscaleConfig, "--autoscale", autoscaleDir + file}, extra...)
	return runCmd(t, args...)
}

const behaviorLine = "\nbehavior: not applied: offline there is no history of recommendations and scales, so no stabilization window or step limit bounds the change; the controller applies them\n"

// The documented example: the eu-central-1 set grows by one replica for
// the Headroom metric; the utilization alone would keep two.
func TestPlanAutoscaleExampleText(t *testing.T) {
	code, out, errOut := runCmd(t, "plan", "--landscape", "../../examples/landscape.yaml", "--autoscale", "../../examples/autoscaling.yaml")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "set garden/aws-eu: 2 -> 3, to keep 250 more Shoots like small-eu placeable (aws eu-central-1)\n"+
		"  SeedAutoscaler garden/aws-eu: 2 to 5 replicas, floor 2 (seeds holding Shoots or protected); reason ScaleUp\n"+
		"  METRIC             TARGET                                            CURRENT                    REPLICAS  MET\n"+
		"  Resource shoots    shoots utilization at most 80% of allocatable     3% (6 of 200 allocatable)  2         yes\n"+
		"  Headroom small-eu  at least 250 more Shoots like small-eu placeable  194 more Shoots placeable  3         yes\n"+
		"  pending Shoots at 3 replicas: 0 placed, 0 without a seed\n"+
		"  model of a new replica: the ManagedSeedSet's template (spec.template.spec.gardenlet.config.seedConfig)\n"+
		"  scale-in: none: the targets need 3 replicas\n"+
		behaviorLine, out)
}

// A set whose targets hold with one seed fewer, every seed holding Shoots:
// the report names the replica the controller would drain (the one with
// the fewest Shoots), where its Shoots go, and the replicas after.
func TestPlanAutoscaleScaleIn(t *testing.T) {
	args := []string{"plan", "--landscape", autoscaleDir + "scalein-landscape.yaml", "--autoscale", autoscaleDir + "scalein.yaml"}
	code, out, errOut := runCmd(t, args...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "reason Steady\n")
	assert.Contains(t, out, "  scale-in: drain spread-1 (1 Shoot), then 3 -> 2 replicas\n    garden-dev/one-0: spread-1 -> spread-2\n")

	code, out, errOut = runCmd(t, append(args, "-o", "json")...)
	require.Equal(t, exitOK, code, errOut)
	var r autoscaleplan.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Len(t, r.Autoscalers, 1)
	si := r.Autoscalers[0].ScaleIn
	require.NotNil(t, si.Plan, si.Why)
	assert.Equal(t, seedscale.ScaleInPlan{Replica: "spread-1", Shoots: 1, Replicas: 2,
		Moves: []plan.Placed{{Shoot: "garden-dev/one-0", From: "spread-1", To: "spread-2"}}}, *si.Plan)
	assert.Equal(t, []seedscale.ScaleInCandidate{{Replica: "spread-1", Shoots: 1}, {Replica: "spread-2", Shoots: 3}, {Replica: "spread-0", Shoots: 4}}, si.Candidates)
}

// A replica holding a Shoot that opted out of drains, or that a drain
// moved within the no-move window, is not chosen: the next one is.
func TestPlanAutoscaleScaleInRespectsHeldShoots(t *testing.T) {
	data, err := os.ReadFile(autoscaleDir + "scalein-landscape.yaml")
	require.NoError(t, err)
	moved := operationsapi.Move{Drain: "d", From: "spread-0", To: "spread-1", At: time.Now().Add(-time.Hour)}.Encode()
	tests := []struct{ name, annotation string }{
		{"opted out", operationsapi.AnnotationNoDrain + `: "true"`},
		{"moved an hour ago", operationsapi.AnnotationLastDrainMove + ": '" + moved + "'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "landscape.yaml")
			held := strings.Replace(string(data), "metadata: {name: one-0, namespace: garden-dev}",
				"metadata: {name: one-0, namespace: garden-dev, annotations: {"+tt.annotation+"}}", 1)
			require.NotEqual(t, string(data), held)
			require.NoError(t, os.WriteFile(file, []byte(held), 0o600))
			code, out, errOut := runCmd(t, "plan", "--landscape", file, "--autoscale", autoscaleDir+"scalein.yaml")
			require.Equal(t, exitOK, code, errOut)
			assert.Contains(t, out, "  scale-in: drain spread-2 (3 Shoots), then 3 -> 2 replicas\n")
			assert.Contains(t, out, "    not spread-1 (1 Shoot): Shoot garden-dev/one-0 cannot move: ")
		})
	}
}

// Pending Shoots are placed in the simulation, oldest first; the set's
// ManagedSeedSet comes with the landscape; the replica whose own Shoot is
// protected counts in the floor.
func TestPlanAutoscalePendingJSON(t *testing.T) {
	code, out, errOut := runAutoscale(t, "pool.yaml", "-o", "json")
	require.Equal(t, exitOK, code, errOut)
	var r autoscaleplan.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Equal(t, autoscaleplan.BehaviorNotApplied, r.Behavior)
	require.Len(t, r.Autoscalers, 1)
	assert.Equal(t, autoscaleplan.Entry{
		Autoscaler: "garden/pool", MinReplicas: 1, MaxReplicas: 6,
		Recommendation: seedscale.Recommendation{
			Set: "garden/pool", Current: 2, Desired: 3, Floor: 2,
			Metrics: []seedscale.MetricResult{{
				Type: "Resource", Name: "shoots", Target: "shoots utilization at most 100% of allocatable",
				Current: "75% (3 of 4 allocatable)", Replicas: 3, Met: true,
			}},
			PendingPlaced: 3, Reason: seedscale.ReasonScaleUp,
			Message:     "set garden/pool: 2 -> 3, to keep the shoots utilization at most 100% (aws eu-west-1); 2 pending Shoots would go to the new seeds",
			ModelSource: "the ManagedSeedSet's template (spec.template.spec.gardenlet.config.seedConfig)",
			ForPending:  3,
			NotReady:    seedscale.NotReady{Asked: 2, Registered: 2, Ready: 2, Timeout: metav1.Duration{Duration: 30 * time.Minute}},
		},
		ScaleIn: seedscale.ScaleInChoice{Why: "the targets need 3 replicas"},
	}, r.Autoscalers[0])
}

// Every list of the JSON is there, [] when empty: a file whose only
// SeedAutoscaler has its metrics, and the document's own list.
func TestPlanAutoscaleJSONShape(t *testing.T) {
	code, out, errOut := runAutoscale(t, "restricted.yaml", "-o", "json")
	require.Equal(t, exitIncomplete, code, errOut)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, []string{"autoscalers", "behavior"}, slices.Sorted(maps.Keys(doc)))
	entry := doc["autoscalers"].([]any)[0].(map[string]any)
	assert.Equal(t, "NewSeedsWouldNotHelp", entry["reason"])
	assert.Equal(t, "shoot does not tolerate the seed's taints", entry["metrics"].([]any)[0].(map[string]any)["wouldNotHelp"])
	assert.Equal(t, "TaintNotTolerated", entry["metrics"].([]any)[0].(map[string]any)["wouldNotHelpCode"])
	for _, k := range []string{"autoscaler", "minReplicas", "maxReplicas", "set", "current", "desired", "floor", "metrics",
		"pendingPlaced", "pendingUnplaced", "short", "reason", "message", "modelSource"} {
		assert.Contains(t, entry, k)
	}
}

// The sets that would not scale say why, and the exit code is 3: a
// target is not met and nothing the autoscaler may do meets it.
func TestPlanAutoscaleWouldNotScale(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"restricted.yaml", []string{
			"set garden/restricted: 1 -> 1: new seeds of the set would not take Shoots like small: shoot does not tolerate the seed's taints\n",
			"  SeedAutoscaler garden/restricted: 1 to 4 replicas, floor 0 (seeds holding Shoots or protected); reason NewSeedsWouldNotHelp\n",
			"  Headroom small  at least 20 more Shoots like small placeable  1 more Shoot placeable  0         no\n",
			"  Headroom small: more seeds would not help (TaintNotTolerated): shoot does not tolerate the seed's taints\n",
			"  pending Shoots at 1 replicas: 1 placed, 2 without a seed\n",
		}},
		{"short.yaml", []string{
			"set garden/pool: 2 -> 2 (maxReplicas) and still short: 2 pending Shoots that new seeds would take find no seed; " +
				"at most 2 Shoots per seed (now 1.5 Shoots per seed (3 on 2))\n",
			"  SeedAutoscaler garden/pool: 2 to 2 replicas, floor 2 (seeds holding Shoots or protected); reason AtMaxReplicas\n",
			"  Resource shoots  at most 2 Shoots per seed  1.5 Shoots per seed (3 on 2)  2         no\n",
			"  pending Shoots at 2 replicas: 1 placed, 2 without a seed\n",
		}},
		{"no-model.yaml", []string{
			"set garden/blank: 0 -> 0: short, and no new replica can be modelled: none: the template has no seedConfig and the set has no seed yet\n",
			"  SeedAutoscaler garden/blank: 0 to 3 replicas, floor 0 (seeds holding Shoots or protected); reason NoSeedModel\n",
			"  model of a new replica: none: the template has no seedConfig and the set has no seed yet\n",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			code, out, errOut := runAutoscale(t, tc.file)
			assert.Equal(t, exitIncomplete, code, errOut)
			assert.Empty(t, errOut)
			for _, want := range tc.want {
				assert.Contains(t, out, want)
			}
			assert.True(t, strings.HasSuffix(out, behaviorLine))
		})
	}
}

// Several SeedAutoscalers are reported in namespace/name order, each with
// its own set, and the exit code is the worst of them.
func TestPlanAutoscaleSeveral(t *testing.T) {
	both := writeFile(t, "both.yaml", readTestdata(t, autoscaleDir+"restricted.yaml")+"\n---\n"+readTestdata(t, autoscaleDir+"pool.yaml"))
	code, out, errOut := runCmd(t, "plan", "--landscape", autoscaleLandscape, "--config", autoscaleConfig, "--autoscale", both)
	assert.Equal(t, exitIncomplete, code, errOut)
	first, second := strings.Index(out, "set garden/pool: 2 -> 3"), strings.Index(out, "set garden/restricted: 1 -> 1")
	require.True(t, first >= 0 && second > first, out)
	assert.Equal(t, 1, strings.Count(out, "behavior: not applied"))
}

func readTestdata(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

// Bad usage and unreadable input exit 2 with a message naming the flag,
// and print nothing on stdout.
func TestPlanAutoscaleBadInput(t *testing.T) {
	sa := func(target, metric string) string {
		return "apiVersion: autoscaling.seedwarden.io/v1alpha1\nkind: SeedAutoscaler\nmetadata: {name: x, namespace: garden}\nspec:\n" +
			"  scaleTargetRef: {apiVersion: seedmanagement.gardener.cloud/v1alpha1, kind: ManagedSeedSet, name: " + target + "}\n" +
			"  maxReplicas: 3\n  metrics: [" + metric + "]\n"
	}
	const util = "{type: Resource, resource: {name: shoots, target: {type: Utilization, averageUtilization: 80}}}"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"with an operation", []string{"--autoscale", autoscaleDir + "pool.yaml", "--drain", "pool-0"},
			"webhook plan: --autoscale cannot be combined with --drain: the recommendation reads the landscape as it is"},
		{"missing file", []string{"--autoscale", autoscaleDir + "missing.yaml"},
			`webhook plan: --autoscale "testdata/autoscale/missing.yaml": open testdata/autoscale/missing.yaml: no such file or directory`},
		{"a landscape in place of the file", []string{"--autoscale", autoscaleLandscape},
			`webhook plan: --autoscale "testdata/autoscale/landscape.yaml": testdata/autoscale/landscape.yaml: line 13: item 0 (CloudProfile "aws"): core.gardener.cloud/v1beta1 CloudProfile is not autoscaling.seedwarden.io/v1alpha1 SeedAutoscaler or seedmanagement.gardener.cloud/v1alpha1 ManagedSeedSet`},
		{"empty file", []string{"--autoscale", writeFile(t, "empty.yaml", "# nothing\n")},
			"empty: no autoscaling.seedwarden.io/v1alpha1 SeedAutoscaler or seedmanagement.gardener.cloud/v1alpha1 ManagedSeedSet in it"},
		{"only a ManagedSeedSet", []string{"--autoscale", writeFile(t, "sets.yaml", "apiVersion: seedmanagement.gardener.cloud/v1alpha1\nkind: ManagedSeedSet\nmetadata: {name: s, namespace: garden}\nspec: {selector: {}}\n")},
			"sets.yaml\": no SeedAutoscaler in it"},
		{"misspelt field", []string{"--autoscale", writeFile(t, "typo.yaml", strings.Replace(sa("pool", util), "maxReplicas", "maxReplica", 1))},
			`line 6: item 0 (SeedAutoscaler "garden/x"): spec.maxReplica: unknown field; did you mean "maxReplicas"?`},
		{"invalid spec", []string{"--autoscale", writeFile(t, "min.yaml", strings.Replace(sa("pool", util), "maxReplicas: 3", "maxReplicas: 3\n  minReplicas: 4", 1))},
			`item 0 (SeedAutoscaler "garden/x"): spec.minReplicas: 4: must not exceed spec.maxReplicas (3)`},
		{"no such set", []string{"--autoscale", writeFile(t, "nope.yaml", sa("nope", util))},
			`nope.yaml": SeedAutoscaler garden/x: no ManagedSeedSet garden/nope`},
		{"unknown profile", []string{"--autoscale", writeFile(t, "profile.yaml", sa("pool", "{type: Headroom, headroom: {profile: large, minShoots: 3}}"))},
			`profile.yaml": SeedAutoscaler garden/x: spec.metrics[0].headroom.profile: "large" is not one of seedwarden's headroom profiles (headroom.profiles)`},
		{"unknown output", []string{"--autoscale", autoscaleDir + "pool.yaml", "-o", "yaml"},
			`webhook plan: -o: unsupported value "yaml" (want text or json)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, append([]string{"plan", "--landscape", autoscaleLandscape, "--config", autoscaleConfig}, tc.args...)...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tc.want)
		})
	}
}

// docs/cli.md shows the example's output as it is.
func TestPlanAutoscaleTranscriptAsDocumented(t *testing.T) {
	data, err := os.ReadFile(repoRoot + "docs/cli.md")
	require.NoError(t, err)
	const line = "plan --landscape examples/landscape.yaml --autoscale examples/autoscaling.yaml"
	_, doc, found := strings.Cut(string(data), "$ bin/webhook "+line+"\n")
	require.True(t, found, "docs/cli.md shows %q", line)
	doc, _, _ = strings.Cut(doc, "\n$ ")
	code, out, errOut := runDocumented(t, line)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, strings.TrimSuffix(out, "\n"), doc)
}

// Objects of the file without a namespace are in the garden namespace,
// where Gardener keeps ManagedSeedSets; one SeedAutoscaler given twice is
// refused.
func TestPlanAutoscaleNamespaces(t *testing.T) {
	pool := readTestdata(t, autoscaleDir+"pool.yaml")
	noNamespace := writeFile(t, "pool.yaml", strings.Replace(pool, "namespace: garden", "", 1))
	code, out, errOut := runCmd(t, "plan", "--landscape", autoscaleLandscape, "--autoscale", noNamespace)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "set garden/pool: 2 -> 3")
	assert.Contains(t, out, "SeedAutoscaler garden/pool: ")

	twice := writeFile(t, "twice.yaml", pool+"---\n"+pool)
	code, out, errOut = runCmd(t, "plan", "--landscape", autoscaleLandscape, "--autoscale", twice)
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, `twice.yaml: line 15: item 1 (SeedAutoscaler "garden/pool"): given twice, first as item 0 at line 3`)
}

// plan --autoscale holds a file to the SeedAutoscaler's bounds, as the
// API server and the webhook hold a stored one: more metrics than
// autoscalingapi.MaxMetrics are refused, naming the field.
func TestPlanAutoscaleRefusesSpecPastBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: autoscaling.seedwarden.io/v1alpha1\nkind: SeedAutoscaler\nmetadata: {name: pool, namespace: garden}\nspec:\n" +
		"  scaleTargetRef: {apiVersion: seedmanagement.gardener.cloud/v1alpha1, kind: ManagedSeedSet, name: pool}\n  maxReplicas: 6\n  metrics:\n")
	for range autoscalingapi.MaxMetrics + 1 {
		b.WriteString("  - {type: Resource, resource: {name: shoots, target: {type: Utilization, averageUtilization: 100}}}\n")
	}
	file := writeFile(t, "many.yaml", b.String())
	code, out, errOut := runCmd(t, "plan", "--landscape", autoscaleLandscape, "--config", autoscaleConfig, "--autoscale", file)
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, fmt.Sprintf("spec.metrics: %d metrics: at most %d", autoscalingapi.MaxMetrics+1, autoscalingapi.MaxMetrics))
}

// Every recommendation of plan --autoscale stops at its budget: one that
// is spent (here before it starts) or an interrupt ends the run with an
// error naming the SeedAutoscaler, never a partial report.
func TestPlanAutoscaleBudget(t *testing.T) {
	in := func(t *testing.T) autoscaleplan.Input {
		cfg, err := loadConfig(autoscaleConfig)
		require.NoError(t, err)
		objs, err := planSource(t.Context(), cfg, autoscaleLandscape, "", false)
		require.NoError(t, err)
		in, err := autoscaleInput(cfg, objs, autoscaleDir+"pool.yaml")
		require.NoError(t, err)
		return in
	}
	t.Run("spent", func(t *testing.T) {
		i := in(t)
		i.Budget = recommendationBudget(t.Context(), -time.Second)
		_, err := autoscaleplan.Run(i)
		require.Error(t, err)
		assert.Equal(t, "SeedAutoscaler garden/pool: stopped after 0 simulations and metric readings: the budget of -1s (autoscaler.syncBudget, as the controller's) is spent", err.Error())
	})
	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		i := in(t)
		i.Budget = recommendationBudget(ctx, time.Hour)
		_, err := autoscaleplan.Run(i)
		require.ErrorIs(t, err, context.Canceled)
	})
	t.Run("within", func(t *testing.T) {
		i := in(t)
		i.Budget = recommendationBudget(t.Context(), time.Hour)
		r, err := autoscaleplan.Run(i)
		require.NoError(t, err)
		require.Len(t, r.Autoscalers, 1)
		assert.Equal(t, int32(3), r.Autoscalers[0].Desired)
	})
}
