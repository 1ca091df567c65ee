package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// binPacking is docs/placement.md's bin-packing profile: the strategy filter stays,
// and among the seeds it keeps the fullest wins.
const binPacking = "scoring:\n  scorers:\n  - {name: MostAllocated, weight: 1}\n"

// TestScoringChecks: the names and weights scoring.scorers accept are
// placement's (config checks the rest: TestFieldRules), every problem is
// reported, and whatever passes is a profile placement accepts.
func TestScoringChecks(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string // problems, exactly; none: valid
	}{
		{"every scorer", "scoring: {scorers: [{name: RegionDistance, weight: 1}, {name: LeastAllocated, weight: 100}, {name: MostAllocated, weight: 2}, {name: LeastShoots, weight: 3}, {name: ProjectSpread, weight: 4}]}", nil},
		{"unknown name", "scoring: {scorers: [{name: SeedResourcesLeastAllocated, weight: 1}]}",
			[]string{`scoring.scorers[0].name: unknown scorer "SeedResourcesLeastAllocated" (want one of RegionDistance, LeastAllocated, MostAllocated, LeastShoots, ProjectSpread)`}},
		{"wrong case", "scoring: {scorers: [{name: leastallocated, weight: 1}]}",
			[]string{`scoring.scorers[0].name: unknown scorer "leastallocated" (want one of RegionDistance, LeastAllocated, MostAllocated, LeastShoots, ProjectSpread)`}},
		{"weight 0", "scoring: {scorers: [{name: LeastAllocated}]}",
			[]string{"scoring.scorers[0].weight: 0 for LeastAllocated is out of range (want 1 to 100)"}},
		{"weight 101 and negative, all reported", "scoring: {scorers: [{name: LeastAllocated, weight: 101}, {name: Nearest, weight: -1}]}", []string{
			"scoring.scorers[0].weight: 101 for LeastAllocated is out of range (want 1 to 100)",
			`scoring.scorers[1].name: unknown scorer "Nearest" (want one of RegionDistance, LeastAllocated, MostAllocated, LeastShoots, ProjectSpread)`,
			"scoring.scorers[1].weight: -1 for Nearest is out of range (want 1 to 100)",
		}},
		{"config's own rules with the checks'", "scoring: {scorers: [{name: LeastShoots, weight: 1}, {name: LeastShoots, weight: 0}], defaultCapacity: -5}", []string{
			`scoring.scorers[1].name: duplicate scorer "LeastShoots" (already scoring.scorers[0])`,
			"scoring.defaultCapacity: -5 must not be negative",
			"scoring.scorers[1].weight: 0 for LeastShoots is out of range (want 1 to 100)",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(configHeader+tc.yaml+"\n"), configChecks...)
			if tc.want == nil {
				require.NoError(t, err)
				assert.NoError(t, placementOptions(cfg).Validate())
				return
			}
			var cfgErr *config.Error
			require.ErrorAs(t, err, &cfgErr)
			assert.Equal(t, tc.want, cfgErr.Problems)
			// Without the checks placement would refuse what config let through.
			cfg, err = config.Parse([]byte(configHeader + tc.yaml + "\n"))
			if err == nil {
				assert.Error(t, placementOptions(cfg).Validate(), "placement refuses it too")
			}
		})
	}
}

// The scoring block reaches every placer's options: those placementOptions
// builds (mutating webhook, simulate) and the retry controller's.
func TestScoringReachesOptions(t *testing.T) {
	cfg, err := config.Parse([]byte(configHeader+`
strategy: MinimalDistance
scoring:
  scorers:
  - {name: LeastAllocated, weight: 5}
  - {name: RegionDistance, weight: 1}
  defaultCapacity: 100
`), configChecks...)
	require.NoError(t, err)
	want := placement.Options{Strategy: placement.MinimalDistance, NetworkMode: placement.Disjoint, Scoring: &placement.Profile{
		Scorers:         []placement.WeightedScorer{{Name: placement.ScoreLeastAllocated, Weight: 5}, {Name: placement.ScoreRegionDistance, Weight: 1}},
		DefaultCapacity: 100,
	}}
	assert.Equal(t, want, placementOptions(cfg))
	r := newPendingReconciler(cfg, cache.NewStore(cache.Options{}), nil, handlers.StalenessGuard{}, nil)
	assert.Equal(t, want, r.Options, "retry controller")

	assert.Nil(t, placementOptions(config.Default()).Scoring, "no block: Gardener's rule")
}

// simulate with docs/placement.md's bin-packing profile on examples/landscape.yaml:
// the strategy keeps both eu-central-1 seeds and the fuller aws-eu1 (4 of
// 100) wins, where Gardener's rule takes the emptier aws-eu2. The line
// carries the breakdown.
func TestSimulateScoringProfile(t *testing.T) {
	cfg := writeFile(t, "config.yaml", configHeader+binPacking)
	code, out, errOut := runCmd(t, "simulate", "--config", cfg, "--landscape", "../../examples/landscape.yaml", "--shoot", "../../examples/shoot.yaml")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, `{"name":"webshop","seed":"aws-eu1","scores":[`+
		`{"seed":"aws-eu1","total":5,"scores":[{"scorer":"MostAllocated","score":5,"weight":1}]},`+
		`{"seed":"aws-eu2","total":3,"scores":[{"scorer":"MostAllocated","score":3,"weight":1}]}],"scored":2}`+"\n", out)

	code, out, _ = runCmd(t, "simulate", "--landscape", "../../examples/landscape.yaml", "--shoot", "../../examples/shoot.yaml")
	require.Equal(t, exitOK, code)
	assert.Equal(t, `{"name":"webshop","seed":"aws-eu2"}`+"\n", out, "without a profile the line is as before")

	// -o json is the default; -o text gives the breakdown as the warning does.
	code, out, _ = runCmd(t, "simulate", "-o", "text", "--config", cfg, "--landscape", "../../examples/landscape.yaml", "--shoot", "../../examples/shoot.yaml")
	require.Equal(t, exitOK, code)
	assert.Equal(t, "webshop: seed aws-eu1\n  scores: aws-eu1 5 (MostAllocated 5x1) > aws-eu2 3 (MostAllocated 3x1); 2 seeds scored\n"+
		"  2/6 seeds eligible; next, were aws-eu1 full: aws-eu2\n"+
		"  aws-eu-restricted: shoot does not tolerate the seed's taints\n"+
		"  aws-us1: SameRegion: provider type or region differs from the shoot's\n"+
		"  gcp-eu1: provider \"gcp\" differs from the shoot's \"aws\"\n"+
		"  gcp-us1: provider \"gcp\" differs from the shoot's \"aws\"\n", out)

	// Scenario files are ranked with the profile too.
	code, out, _ = runCmd(t, "simulate", "--config", cfg, "-f", "testdata/scenarios/least-usage.json")
	require.Equal(t, exitOK, code)
	r := decodeResults(t, out)[0]
	require.NotEmpty(t, r.Scores)
	assert.Equal(t, r.Seed, r.Scores[0].Seed, "the winner comes first")
	assert.Equal(t, placement.ScoreMostAllocated, r.Scores[0].Parts[0].Scorer)
}

// The mutating webhook `serve` registers ranks with the configured profile
// and its warnings carry the breakdown.
func TestServeScoringWarning(t *testing.T) {
	certDir := devCertDir(t)
	port, healthPort := freePort(t), freePort(t)
	cfg := writeFile(t, "config.yaml", configHeader+binPacking+fmt.Sprintf(`
server: {port: %d, certDir: %s}
metrics: {bindAddress: "0"}
health: {bindAddress: "127.0.0.1:%d"}
`, port, certDir, healthPort))
	srv := startLandscape(t, cfg, healthPort)
	resp := admit(t, devClient(t, certDir), fmt.Sprintf("https://localhost:%d%s", port, handlers.MutateShootsPath), "../../examples/shoot.yaml")
	assert.True(t, resp.Allowed)
	assert.Equal(t, []string{
		`seedwarden: will be scheduled to seed "aws-eu1"`,
		handlers.ScoresWarningPrefix + "aws-eu1 5 (MostAllocated 5x1) > aws-eu2 3 (MostAllocated 3x1); 2 seeds scored",
	}, resp.Warnings)
	srv.stopAndWait(t, 30*time.Second)
}
