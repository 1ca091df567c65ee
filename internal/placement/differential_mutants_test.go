package placement_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/difftest"
)

// The environment of TestDifferentialMutants (the generator seed is
// SEEDWARDEN_DIFFTEST_SEED, as for TestDifferential).
const (
	envMutants     = "SEEDWARDEN_DIFFTEST_MUTANTS" // how many mutants to compare
	defaultMutants = 400                           // make test's sample; make difftest runs 8,000
)

// TestDifferentialMutants is the mutation search: each mutant is a recorded
// scenario (the public corpus and the kept disagreements) with one string
// changed to an edge value (difftest.Mutate), decided by Gardener's
// scheduler and by seedwarden. Disagreements are written with Gardener's
// answer to a temporary folder the failure names, with the generator seed;
// kept in testdata/differential, TestDifferentialRecorded replays them.
// Mutant i depends on the seed and the recorded files, so a kept file
// changes which scenario later numbers mutate.
func TestDifferentialMutants(t *testing.T) {
	bin := oracleBin(t)
	n := envInt(t, envMutants, defaultMutants)
	seed := uint64(envInt(t, envDifftestRNG, difftest.DefaultSeed))

	bases := append(corpusAsScenarios(t), recordedScenarios(t)...)
	mutants := make([]difftest.Mutant, n)
	scenarios := make([]difftest.Scenario, n)
	for i := range n {
		m, err := difftest.Mutate(bases, seed, i)
		require.NoError(t, err)
		mutants[i], scenarios[i] = m, m.Scenario
	}
	ctx, cancel := context.WithTimeout(context.Background(), oracleTimeout)
	defer cancel()
	answers, err := difftest.Oracle{BinDir: bin}.Decide(ctx, scenarios)
	require.NoError(t, err, "generator seed %d", seed)

	var disagree []difftest.Scenario
	agreed, unread, refused, failed, changed := 0, 0, 0, 0, 0
	for _, m := range mutants {
		a := answers[m.Name]
		d, readErr := decideScenario(m.Scenario)
		switch {
		case a.Error != "" && readErr != nil:
			// Neither side reads the mutant (a string where a quantity or a
			// CIDR must parse, say): an object the API server refuses.
			unread++
			continue
		case a.Error != "":
			// The oracle's reader refuses what the API server refuses too
			// (an object without a name): no decision of Gardener's.
			refused++
			t.Logf("%s (%s): the oracle refused the scenario (%s)", m.Name, m.Change, a.Error)
			continue
		case a.Failed():
			failed++ // Gardener crashed: nothing to agree with
			t.Logf("%s (%s): Gardener gave no decision (%s)", m.Name, m.Change, a.Problem())
			continue
		case readErr != nil:
			kept := m.Scenario
			kept.Expect = a.Expect
			disagree = append(disagree, kept)
			t.Errorf("%s (%s): Gardener decided %+v, seedwarden cannot read the scenario: %v", m.Name, m.Change, *a.Expect, readErr)
			continue
		}
		if m.Base != nil && !sameOutcome(*m.Base, *a.Expect) {
			changed++
		}
		if why := disagreement(*a.Expect, d); why != "" {
			kept := m.Scenario
			kept.Expect = a.Expect
			disagree = append(disagree, kept)
			t.Errorf("%s (%s): %s", m.Name, m.Change, why)
			continue
		}
		agreed++
	}
	if len(disagree) > 0 {
		t.Errorf("%d disagreements (generator seed %d) written with Gardener's answer to %s: keep them in %s (its README)",
			len(disagree), seed, writeScenarios(t, disagree), recordedDir)
	}
	require.Greater(t, agreed, n*3/4, "mutants decided by both Gardener and seedwarden")
	// Printed, not only logged: make test greps the count from -v output.
	fmt.Printf("differential: %d/%d mutants agree with Gardener (generator seed %d, %d mutants of %d recorded scenarios, %d of them changed Gardener's decision; %d read by neither side, %d refused by the oracle's reader, Gardener crashed on %d)\n",
		agreed, agreed+len(disagree), seed, n, len(bases), changed, unread, refused, failed)
}

// recordedScenarios are the kept disagreements, with their answers.
func recordedScenarios(t *testing.T) []difftest.Scenario {
	t.Helper()
	files, err := filepath.Glob(recordedGlob)
	require.NoError(t, err)
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
