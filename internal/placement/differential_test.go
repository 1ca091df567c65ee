package placement_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/difftest"
	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// The environment of TestDifferential.
const (
	envGardenerBin = "SEEDWARDEN_GARDENER_BIN"  // the oracle binaries' directory
	envDifftestN   = "SEEDWARDEN_DIFFTEST_N"    // how many scenarios to generate
	envDifftestRNG = "SEEDWARDEN_DIFFTEST_SEED" // the generator seed
	defaultDiffN   = 2000                       // generated scenarios by default
	oracleTimeout  = 10 * time.Minute           // for the oracle's whole batch
	recordedDir    = "testdata/differential"    // the kept disagreements
	recordedGlob   = recordedDir + "/*.json"
)

// TestDifferential generates scenarios (internal/difftest), adds the public
// corpus, has Gardener's scheduler decide every one and requires seedwarden
// (the same entry point as TestConformance) to decide each the same way.
// Disagreements are written, with Gardener's answer, to a temporary folder
// the failure names; copy them into testdata/differential to keep them.
// Where Gardener itself errs or panics there is nothing to agree with: such
// scenarios are listed, and docs/placement.md says why each kind happens.
func TestDifferential(t *testing.T) {
	bin := oracleBin(t)
	n := envInt(t, envDifftestN, defaultDiffN)
	seed := uint64(envInt(t, envDifftestRNG, difftest.DefaultSeed))

	scenarios := difftest.Generate(seed, n)
	scenarios = append(scenarios, corpusAsScenarios(t)...)
	recorded := map[string]*difftest.Expect{}
	for _, sc := range scenarios {
		recorded[sc.Name] = sc.Expect
	}

	ctx, cancel := context.WithTimeout(context.Background(), oracleTimeout)
	defer cancel()
	answers, err := difftest.Oracle{BinDir: bin}.Decide(ctx, scenarios)
	require.NoError(t, err)

	var disagree []difftest.Scenario
	agreed, failed, undefined := 0, 0, 0
	problems := map[string]int{}
	for _, sc := range scenarios {
		a := answers[sc.Name]
		if a.Error != "" {
			// Not Gardener's answer: the oracle could not read what the
			// generator wrote, so the scenario tests nothing.
			t.Errorf("%s: the oracle could not read the scenario: %s", sc.Name, a.Error)
			continue
		}
		if a.Failed() {
			failed++
			problems[a.Problem()]++
			t.Logf("%s: Gardener gave no decision (%s)", sc.Name, a.Problem())
			continue
		}
		if a.Undefined != "" {
			// Compared in name order, the order seedwarden takes (cache.Store).
			undefined++
			t.Logf("%s: Gardener's answer depends on list order: %s", sc.Name, a.Undefined)
		}
		if want := recorded[sc.Name]; want != nil && !sameOutcome(*want, *a.Expect) {
			t.Errorf("%s: the oracle's answer %+v differs from the recorded corpus %+v", sc.Name, *a.Expect, *want)
		}
		d, err := decideScenario(sc)
		if err != nil {
			t.Errorf("%s: seedwarden cannot read the scenario: %v", sc.Name, err)
			continue
		}
		if why := disagreement(*a.Expect, d); why != "" {
			sc.Expect = a.Expect
			disagree = append(disagree, sc)
			t.Errorf("%s: %s", sc.Name, why)
			continue
		}
		agreed++
	}
	// Only Gardener's panics go uncounted, and the generator gives a crashing
	// input to about 3% of scenarios: a run where most went uncounted
	// compared nothing.
	assert.Greater(t, agreed+len(disagree), len(scenarios)*9/10, "scenarios decided by both Gardener and seedwarden")
	if len(disagree) > 0 {
		t.Errorf("%d disagreements written with Gardener's answer to %s", len(disagree), writeScenarios(t, disagree))
	}
	// Printed, not only logged: make test greps the count from -v output.
	fmt.Printf("differential: %d/%d scenarios agree with Gardener (generator seed %d, %d generated + %d corpus; Gardener failed on %d, listed with -v; %d answers depend on list order, compared in name order)\n",
		agreed, len(scenarios)-failed, seed, n, len(scenarios)-n, failed, undefined)
	for _, p := range slices.Sorted(maps.Keys(problems)) {
		fmt.Printf("differential: Gardener gave no decision %d times: %s (docs/placement.md, \"Where Gardener itself crashes\")\n", problems[p], p)
	}
}

// TestDifferentialRecorded runs the disagreements found so far, each kept
// with Gardener's answer in testdata/differential, without the oracle.
func TestDifferentialRecorded(t *testing.T) {
	files, err := filepath.Glob(recordedGlob)
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var sc difftest.Scenario
		require.NoError(t, json.Unmarshal(raw, &sc), f)
		require.NotNil(t, sc.Expect, "%s: no expect", f)
		d, err := decideScenario(sc)
		require.NoError(t, err, f)
		if why := disagreement(*sc.Expect, d); why != "" {
			t.Errorf("%s: %s", f, why)
		}
	}
}

// decideScenario decides a scenario as TestConformance does: a Store loaded
// with the landscape, then Store.Place.
func decideScenario(sc difftest.Scenario) (placement.Decision, error) {
	all, err := json.Marshal(sc.Objects)
	if err != nil {
		return placement.Decision{}, err
	}
	objs, err := landscape.Decode(all)
	if err != nil {
		return placement.Decision{}, err
	}
	var shoot api.Shoot
	if err := json.Unmarshal(sc.Shoot, &shoot); err != nil {
		return placement.Decision{}, fmt.Errorf("shoot: %w", err)
	}
	store := cache.NewStore(cache.Options{GardenNamespace: "garden"})
	store.Load(objs)
	opts := placement.Options{Strategy: placement.Strategy(sc.Strategy), NetworkMode: placement.NetworkMode(sc.NetworkOverlap)}
	return store.Place(&shoot, opts, ""), nil
}

// disagreement says how seedwarden's decision differs from Gardener's; ""
// when it does not (a seed among the tied ones counts as the same).
func disagreement(want difftest.Expect, d placement.Decision) string {
	switch {
	case want.Unschedulable && d.Schedulable():
		return fmt.Sprintf("Gardener found no seed (%s), seedwarden chose %q", want.ReferenceError, d.Seed)
	case !want.Unschedulable && !d.Schedulable():
		return fmt.Sprintf("Gardener chose %q, seedwarden found none: %s", want.Seed, d.Summary())
	case !want.Unschedulable && d.Seed != want.Seed && !slices.Contains(want.Tied, d.Seed):
		return fmt.Sprintf("Gardener chose %q (tied %v), seedwarden chose %q (tied %v)", want.Seed, want.Tied, d.Seed, d.Tied)
	case !want.Unschedulable && !slices.Equal(want.Tied, d.Tied):
		// The same pick from different final candidates: a rule differs
		// even though name order happened to hide it.
		return fmt.Sprintf("Gardener's least-used candidates %v, seedwarden's %v (both chose %q)", want.Tied, d.Tied, d.Seed)
	}
	return ""
}

// sameOutcome compares two answers of the reference: the same seed (or one
// of the other's tied ones), or both unschedulable.
func sameOutcome(a, b difftest.Expect) bool {
	if a.Unschedulable || b.Unschedulable {
		return a.Unschedulable == b.Unschedulable
	}
	return a.Seed == b.Seed || slices.Contains(a.Tied, b.Seed) || slices.Contains(b.Tied, a.Seed)
}

// corpusAsScenarios reads the public corpus, its recorded answers kept.
func corpusAsScenarios(t *testing.T) []difftest.Scenario {
	t.Helper()
	files, err := filepath.Glob("testdata/conformance/*.json")
	require.NoError(t, err)
	require.Len(t, files, corpusSize)
	out := make([]difftest.Scenario, 0, len(files))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var sc difftest.Scenario
		require.NoError(t, json.Unmarshal(raw, &sc), f)
		out = append(out, sc)
	}
	return out
}

// writeScenarios writes scenarios as corpus files into a new temporary
// folder (kept after the test, so they can be read and recorded).
func writeScenarios(t *testing.T, scenarios []difftest.Scenario) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "seedwarden-difftest-")
	require.NoError(t, err)
	for _, sc := range scenarios {
		raw, err := json.Marshal(sc)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, sc.Name+".json"), append(raw, '\n'), 0o644))
	}
	return dir
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "%s: not an integer: %q", name, v)
	require.Positive(t, n, "%s must be positive", name)
	return n
}

// oracleBin is the directory of Gardener's scheduler binaries; without it
// the test skips (make test always sets it).
func oracleBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(envGardenerBin)
	if bin == "" {
		t.Skipf("%s is not set: build the oracle with `bash hack/gardener-bins.sh` and run with %s=<its bin dir> (make test sets it)", envGardenerBin, envGardenerBin)
	}
	return bin
}
