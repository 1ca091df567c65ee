package placement_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// fuzzScorerNames are the names a fuzzed profile picks from: every scorer
// and one that does not exist.
var fuzzScorerNames = append(slices.Clone(placement.ScorerNames[:]), "Bogus")

// fuzzProfile reads a profile from raw: a byte of default capacity (signed),
// then per scorer a name byte and a weight byte (signed), so invalid
// profiles (unknown, duplicate, bad weight, negative capacity) come too.
func fuzzProfile(raw []byte) *placement.Profile {
	p := &placement.Profile{}
	if len(raw) > 0 {
		p.DefaultCapacity, raw = int64(int8(raw[0])), raw[1:]
	}
	for ; len(raw) >= 2 && len(p.Scorers) < 8; raw = raw[2:] {
		p.Scorers = append(p.Scorers, placement.WeightedScorer{
			Name:   fuzzScorerNames[int(raw[0])%len(fuzzScorerNames)],
			Weight: int(int8(raw[1])),
		})
	}
	return p
}

// FuzzScoring decides on random landscapes (genSnapshot, genShoot) with
// random profiles: no panic; an invalid profile ranks nothing; a chosen
// seed passes every hard filter (the filters themselves, the manual-choice
// checks, capacity, the exclusions, and the strategy unless RegionDistance
// replaced it, the testing rule always); the breakdown is ranked and sums
// to its totals; deciding again without the winner never picks it.
func FuzzScoring(f *testing.F) {
	f.Add(uint64(1), uint8(5), []byte{10, 0, 3, 1, 1, 2, 5, 3, 1})
	f.Add(uint64(2), uint8(80), []byte{0, 0, 1, 2, 100, 4, 7})
	f.Add(uint64(3), uint8(200), []byte{255, 3, 0})
	f.Add(uint64(4), uint8(64), []byte{50, 0, 1, 0, 1})
	f.Fuzz(func(t *testing.T, seed uint64, size uint8, raw []byte) { scoringCase(t, seed, size, raw) })
}

// TestScoringCases runs FuzzScoring's checks on cases drawn at random, so
// plain `go test` covers them, and requires the cases to reach what they
// check: valid profiles choosing a seed, invalid ones, unschedulable Shoots.
func TestScoringCases(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	outcomes := map[caseOutcome]int{}
	for range 1500 {
		raw := []byte{byte(r.IntN(40))}
		for _, i := range r.Perm(len(placement.ScorerNames))[:1+r.IntN(4)] {
			raw = append(raw, byte(i), byte(1+r.IntN(100)))
		}
		if r.IntN(5) == 0 {
			raw = append(raw, byte(r.IntN(256)), byte(r.IntN(256))) // often invalid
		}
		outcomes[scoringCase(t, r.Uint64(), uint8(r.IntN(256)), raw)]++
	}
	t.Logf("outcomes: %v", outcomes)
	require.Greater(t, outcomes[caseScheduled], 150)
	require.Greater(t, outcomes[caseInvalid], 50)
	require.Greater(t, outcomes[caseUnschedulable], 50)
}

type caseOutcome string

const (
	caseInvalid       caseOutcome = "invalid profile"
	caseUnschedulable caseOutcome = "unschedulable"
	caseScheduled     caseOutcome = "scheduled"
)

func scoringCase(t *testing.T, seed uint64, size uint8, raw []byte) caseOutcome {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 15))
	snap, usage := genSnapshot(r, int(size)%130)
	if r.IntN(2) == 0 {
		counts := map[string]int64{}
		for _, s := range snap.Seeds {
			counts[s.Name] = int64(r.IntN(5)) - 1 // a negative count must not break anything either
		}
		snap.ProjectShoots = func(string) map[string]int64 { return counts }
	}
	shoot := genShoot(r)
	profile := fuzzProfile(raw)
	opts := placement.Options{
		Strategy:    []placement.Strategy{placement.SameRegion, placement.MinimalDistance}[r.IntN(2)],
		NetworkMode: []placement.NetworkMode{placement.Disjoint, placement.AllowIPv4}[r.IntN(2)],
		Scoring:     profile,
	}
	d := placement.Decide(snap, shoot, opts)
	if profile.Validate() != nil {
		require.False(t, d.Schedulable())
		require.Equal(t, placement.StepScoring, d.Step)
		return caseInvalid
	}
	plainOpts := opts
	plainOpts.Scoring = nil
	if !d.Schedulable() {
		// A profile only lifts the strategy's cut; what it adds is
		// reading the region table under SameRegion too.
		if plain := placement.Decide(snap, shoot, plainOpts); plain.Schedulable() {
			require.Equal(t, placement.StepStrategy, d.Step, d.Summary())
			require.Contains(t, d.Message, "region config")
		}
		return caseUnschedulable
	}
	checkHardFilters(t, snap, shoot, opts, d.Seed, usage[d.Seed])
	checkBreakdown(t, profile, d)

	opts.Exclude = []string{d.Seed}
	again := placement.Decide(snap, shoot, opts)
	require.NotEqual(t, d.Seed, again.Seed, "an excluded seed is never chosen")
	if again.Schedulable() {
		checkHardFilters(t, snap, shoot, opts, again.Seed, usage[again.Seed])
	}
	return caseScheduled
}

func checkHardFilters(t *testing.T, snap *placement.Snapshot, shoot *api.Shoot, opts placement.Options, name string, usage int64) {
	t.Helper()
	i := slices.IndexFunc(snap.Seeds, func(s *placement.Seed) bool { return s.Name == name })
	require.GreaterOrEqual(t, i, 0, "chosen seed %q is in the snapshot", name)
	seed := snap.Seeds[i]
	require.True(t, placement.Admits(snap, shoot, opts, name), "chosen seed %q passes the filters", name)
	require.Empty(t, placement.CheckSeedForShoot(snap, seed, shoot, opts.NetworkMode), "chosen seed %q", name)
	if alloc, ok := seed.Allocatable(); ok {
		require.Less(t, usage, alloc, "chosen seed %q has room", name)
	}
	require.NotContains(t, opts.Exclude, name)
	if ptr := shoot.Spec.Purpose; ptr != nil && *ptr == api.PurposeTesting {
		require.Equal(t, shoot.Spec.Provider.Type, seed.Object.Spec.Provider.Type, "a testing shoot keeps its provider type")
	}
	withDistance := slices.ContainsFunc(opts.Scoring.Scorers, func(ws placement.WeightedScorer) bool {
		return ws.Name == placement.ScoreRegionDistance
	})
	if !withDistance {
		plain := opts
		plain.Scoring = nil
		require.True(t, placement.Admits(snap, shoot, plain, name), "chosen seed %q passes the strategy", name)
	}
}

func checkBreakdown(t *testing.T, profile *placement.Profile, d placement.Decision) {
	t.Helper()
	require.Len(t, d.Scores, min(d.Scored, placement.ScoreRanks))
	require.Equal(t, d.Seed, d.Scores[0].Seed)
	require.Equal(t, d.Seed, d.Tied[0])
	for r, s := range d.Scores {
		require.Len(t, s.Parts, len(profile.Scorers))
		sum := 0
		for i, p := range s.Parts {
			require.Equal(t, profile.Scorers[i].Name, p.Scorer)
			require.Equal(t, profile.Scorers[i].Weight, p.Weight)
			require.True(t, p.Score >= 0 && p.Score <= 100, "score %d of %s", p.Score, p.Scorer)
			sum += p.Score * p.Weight
		}
		require.Equal(t, sum, s.Total, "the breakdown of %s sums to its total", s.Seed)
		if r > 0 {
			prev := d.Scores[r-1]
			require.True(t, prev.Total > s.Total || prev.Total == s.Total && prev.Seed < s.Seed, "ranked: %s", d.ScoreSummary())
		}
		if r > 0 && s.Total == d.Scores[0].Total {
			require.Contains(t, d.Tied, s.Seed)
		}
	}
	require.NotEmpty(t, d.ScoreSummary())
}
