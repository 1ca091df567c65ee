package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/api"
)

// disagreeing is a landscape where the strategies disagree, for an aws
// Shoot in eu-west-1 (region config: eu-central-1 at 10, us-east-1 at 50),
// every seed allocatable 10:
//
//	seed  region        usage  RegionDistance  LeastAllocated  MostAllocated  LeastShoots
//	near  eu-west-1     5      100             40              60             42
//	mid   eu-central-1  1      80              80              20             100
//	far   us-east-1     8      0               10              90             0
func disagreeing() *Snapshot {
	snap := snapshotOf(map[string]int64{"near": 5, "mid": 1, "far": 8},
		readySeed("near", withAllocatable(10)),
		readySeed("mid", withRegion("aws", "eu-central-1"), withAllocatable(10)),
		readySeed("far", withRegion("aws", "us-east-1"), withAllocatable(10)),
	)
	snap.RegionConfigs = []*RegionConfig{NewRegionConfig(regionConfigMap("rc", "aws",
		map[string]string{"eu-west-1": "eu-central-1: 10\nus-east-1: 50\n"}))}
	return snap
}

func TestWeightedProfileWinners(t *testing.T) {
	ws := func(pairs ...any) *Profile {
		p := &Profile{}
		for i := 0; i < len(pairs); i += 2 {
			p.Scorers = append(p.Scorers, WeightedScorer{Name: pairs[i].(ScorerName), Weight: pairs[i+1].(int)})
		}
		return p
	}
	tests := []struct {
		name    string
		profile *Profile
		want    string
		totals  []int // of the ranks, best first
		ranks   []string
	}{
		{"Gardener: MinimalDistance keeps near only", nil, "near", nil, nil},
		{"nearest-first: RegionDistance 10, LeastAllocated 1", ws(ScoreRegionDistance, 10, ScoreLeastAllocated, 1),
			"near", []int{1040, 880, 10}, []string{"near", "mid", "far"}},
		{"GEP-13 balanced: RegionDistance 1, LeastAllocated 1", ws(ScoreRegionDistance, 1, ScoreLeastAllocated, 1),
			"mid", []int{160, 140, 10}, []string{"mid", "near", "far"}},
		{"MostAllocated alone: the strategy still cuts, near is all that is ranked", ws(ScoreMostAllocated, 1),
			"near", []int{60}, []string{"near"}},
		{"bin-packing over all regions: MostAllocated 5, RegionDistance 1", ws(ScoreMostAllocated, 5, ScoreRegionDistance, 1),
			"far", []int{450, 400, 180}, []string{"far", "near", "mid"}},
		{"least shoots over all regions", ws(ScoreLeastShoots, 1, ScoreRegionDistance, 1),
			"mid", []int{180, 142, 0}, []string{"mid", "near", "far"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(disagreeing(), basicShoot(), Options{Strategy: MinimalDistance, Scoring: tt.profile})
			require.True(t, d.Schedulable(), d.Summary())
			assert.Equal(t, tt.want, d.Seed)
			if tt.profile == nil {
				assert.Nil(t, d.Scores, "no breakdown without a profile")
				return
			}
			var totals []int
			var ranks []string
			for _, s := range d.Scores {
				totals, ranks = append(totals, s.Total), append(ranks, s.Seed)
			}
			assert.Equal(t, tt.totals, totals)
			assert.Equal(t, tt.ranks, ranks)
		})
	}
}

func TestScoreBreakdownAndSummary(t *testing.T) {
	p := &Profile{Scorers: []WeightedScorer{{ScoreLeastAllocated, 5}, {ScoreRegionDistance, 1}}}
	d := Decide(disagreeing(), basicShoot(), Options{Strategy: SameRegion, Scoring: p})
	require.Equal(t, "mid", d.Seed)
	assert.Equal(t, []SeedScore{
		{Seed: "mid", Total: 480, Parts: []ScorePart{{ScoreLeastAllocated, 80, 5}, {ScoreRegionDistance, 80, 1}}},
		{Seed: "near", Total: 300, Parts: []ScorePart{{ScoreLeastAllocated, 40, 5}, {ScoreRegionDistance, 100, 1}}},
		{Seed: "far", Total: 50, Parts: []ScorePart{{ScoreLeastAllocated, 10, 5}, {ScoreRegionDistance, 0, 1}}},
	}, d.Scores)
	assert.Equal(t, []string{"mid"}, d.Tied)
	assert.Equal(t, int64(1), d.Usage)
	assert.Equal(t, 3, d.Scored)
	assert.Equal(t, 3, d.Total)
	assert.Equal(t, "mid 480 (LeastAllocated 80x5, RegionDistance 80x1) > near 300 (LeastAllocated 40x5, RegionDistance 100x1)"+
		" > far 50 (LeastAllocated 10x5, RegionDistance 0x1); 3 seeds scored", d.ScoreSummary())
	assert.Equal(t, `scheduled to seed "mid"`, d.Summary())

	nop := Decide(disagreeing(), basicShoot(), Options{Strategy: SameRegion})
	assert.Empty(t, nop.ScoreSummary(), "nothing to explain without a profile")
}

// Equal totals go by name, Tied lists them all, the summary shows "=",
// and the breakdown keeps to ScoreRanks seeds however many are ranked.
func TestScoreTiesAndRanks(t *testing.T) {
	var seeds []*api.Seed
	for _, n := range []string{"a", "b", "c", "d", "e"} { // a Snapshot lists seeds by name
		seeds = append(seeds, readySeed(n, withAllocatable(10)))
	}
	snap := snapshotOf(map[string]int64{"a": 4, "b": 1, "c": 1, "d": 1, "e": 0}, seeds...)
	p := &Profile{Scorers: []WeightedScorer{{ScoreMostAllocated, 1}}}
	d := Decide(snap, basicShoot(), Options{Strategy: SameRegion, Scoring: p})
	assert.Equal(t, "a", d.Seed)
	require.Len(t, d.Scores, ScoreRanks)
	assert.Equal(t, []string{"a", "b", "c"}, []string{d.Scores[0].Seed, d.Scores[1].Seed, d.Scores[2].Seed})
	assert.Equal(t, "a 50 (MostAllocated 50x1) > b 20 (MostAllocated 20x1) = c 20 (MostAllocated 20x1); 5 seeds scored", d.ScoreSummary())

	snap = snapshotOf(map[string]int64{"a": 4, "b": 1, "c": 4, "d": 4, "e": 0}, seeds...)
	d = Decide(snap, basicShoot(), Options{Strategy: SameRegion, Scoring: p})
	assert.Equal(t, "a", d.Seed)
	assert.Equal(t, []string{"a", "c", "d"}, d.Tied)
}

// The cross-replica reservation's next-best seed is the decision made
// again with the full seed in Options.Exclude: with a profile that is the
// best of the rest, ranked anew (here the runner-up), and an excluded seed
// is never chosen however it scores.
func TestScoredExcludeTakesTheRunnerUp(t *testing.T) {
	opts := Options{Strategy: MinimalDistance, Scoring: &Profile{Scorers: []WeightedScorer{{ScoreLeastAllocated, 1}, {ScoreRegionDistance, 1}}}}
	d := Decide(disagreeing(), basicShoot(), opts)
	require.Equal(t, "mid", d.Seed)
	require.Equal(t, "near", d.Scores[1].Seed)

	opts.Exclude = []string{"mid"}
	again := Decide(disagreeing(), basicShoot(), opts)
	assert.Equal(t, "near", again.Seed)
	assert.Equal(t, 2, again.Scored)

	opts.Exclude = []string{"mid", "near"}
	assert.Equal(t, "far", Decide(disagreeing(), basicShoot(), opts).Seed)

	opts.Exclude = []string{"mid", "near", "far"}
	none := Decide(disagreeing(), basicShoot(), opts)
	require.False(t, none.Schedulable())
	assert.Equal(t, StepCandidates, none.Step)
	assert.Equal(t, ExcludedReason, none.Reasons["far"])
}
