package placement

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

func TestProfileValidate(t *testing.T) {
	ok := WeightedScorer{Name: ScoreLeastShoots, Weight: 1}
	tests := []struct {
		name    string
		profile Profile
		wantErr string // "" for valid
	}{
		{"one scorer", Profile{Scorers: []WeightedScorer{ok}}, ""},
		{"every scorer at the weight bounds", Profile{Scorers: []WeightedScorer{
			{ScoreRegionDistance, 1}, {ScoreLeastAllocated, 100}, {ScoreMostAllocated, 1}, {ScoreLeastShoots, 2}, {ScoreProjectSpread, 3},
		}, DefaultCapacity: 0}, ""},
		{"empty", Profile{}, "scoring.scorers: empty"},
		{"unknown name", Profile{Scorers: []WeightedScorer{ok, {"Nearest", 1}}}, `scoring.scorers[1].name: unknown scorer "Nearest" (want one of RegionDistance, LeastAllocated, MostAllocated, LeastShoots, ProjectSpread)`},
		{"names are case-sensitive", Profile{Scorers: []WeightedScorer{{"leastShoots", 1}}}, `scoring.scorers[0].name: unknown scorer "leastShoots"`},
		{"duplicate", Profile{Scorers: []WeightedScorer{ok, {ScoreMostAllocated, 1}, ok}}, `scoring.scorers[2].name: duplicate scorer "LeastShoots" (already scorers[0])`},
		{"weight zero", Profile{Scorers: []WeightedScorer{{ScoreMostAllocated, 0}}}, "scoring.scorers[0].weight: 0 for MostAllocated is out of range (want 1 to 100)"},
		{"weight negative", Profile{Scorers: []WeightedScorer{ok, {ScoreMostAllocated, -3}}}, "scoring.scorers[1].weight: -3 for MostAllocated"},
		{"weight above 100", Profile{Scorers: []WeightedScorer{{ScoreMostAllocated, 101}}}, "scoring.scorers[0].weight: 101 for MostAllocated"},
		{"negative default capacity", Profile{Scorers: []WeightedScorer{ok}, DefaultCapacity: -1}, "scoring.defaultCapacity: -1 must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.profile.Validate()
			opts := Options{Strategy: SameRegion, Scoring: &tt.profile}
			if tt.wantErr == "" {
				require.NoError(t, err)
				require.NoError(t, opts.Validate())
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
			require.ErrorContains(t, opts.Validate(), tt.wantErr, "Options.Validate checks the profile")
		})
	}
}

// An unvalidated bad profile never ranks seeds: the decision fails at
// StepScoring naming the problem, and Admits admits nothing.
func TestDecideRefusesInvalidProfile(t *testing.T) {
	snap := snapshotOf(nil, readySeed("a"))
	opts := Options{Strategy: SameRegion, Scoring: &Profile{Scorers: []WeightedScorer{{ScoreLeastShoots, 0}}}}
	d := Decide(snap, basicShoot(), opts)
	require.False(t, d.Schedulable())
	assert.Equal(t, StepScoring, d.Step)
	assert.Contains(t, d.Message, "scoring.scorers[0].weight: 0")
	assert.Contains(t, d.Summary(), "scoring.scorers[0].weight: 0")
	assert.False(t, Admits(snap, basicShoot(), opts, "a"))
}

func TestAllocationScores(t *testing.T) {
	tests := []struct {
		name        string
		usage, capa int64
		least, most int64
	}{
		{"empty seed of 4", 0, 4, 75, 25},
		{"the last place", 3, 4, 0, 100},
		{"half after placing", 4, 10, 50, 50},
		{"rounded down both ways", 0, 3, 66, 33},
		{"unknown capacity", 5, 0, 0, 0},
		{"past a default capacity", 12, 10, 0, 100},
		{"negative usage counts as none", -5, 4, 75, 25},
		{"huge capacity does not overflow", 0, math.MaxInt64, 99, 0},
		{"huge usage does not overflow", math.MaxInt64 - 1, math.MaxInt64, 0, 100},
		{"maximal usage does not overflow", math.MaxInt64, 10, 0, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.least, leastAllocated(tt.usage, tt.capa), "LeastAllocated")
			assert.Equal(t, tt.most, mostAllocated(tt.usage, tt.capa), "MostAllocated")
		})
	}
}

func TestLowerIsBetter(t *testing.T) {
	tests := []struct {
		name        string
		costs, want []int64
	}{
		{"linear, rounded down", []int64{0, 5, 10, 3}, []int64{100, 50, 0, 70}},
		{"only the lowest get 100", []int64{0, 1, 1000000, 0}, []int64{100, 99, 0, 100}},
		{"all equal", []int64{7, 7}, []int64{100, 100}},
		{"one", []int64{42}, []int64{100}},
		{"unrated score 0 and do not bound", []int64{unrated, 10, 20}, []int64{0, 100, 0}},
		{"all unrated", []int64{unrated, unrated}, []int64{0, 0}},
		{"negative costs", []int64{-10, 0, 10}, []int64{100, 50, 0}},
		{"extreme range does not overflow", []int64{math.MinInt64, 0, math.MaxInt64 - 1}, []int64{100, 49, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lowerIsBetter(tt.costs)
			assert.Equal(t, tt.want, tt.costs)
		})
	}
}

// scoredBy decides with one scorer at weight 1 and returns each ranked
// seed's score (landscapes of up to ScoreRanks seeds, so all are listed).
func scoredBy(t *testing.T, snap *Snapshot, shoot *api.Shoot, name ScorerName, defaultCapacity int64) map[string]int {
	t.Helper()
	d := Decide(snap, shoot, Options{Strategy: SameRegion, Scoring: &Profile{
		Scorers: []WeightedScorer{{Name: name, Weight: 1}}, DefaultCapacity: defaultCapacity,
	}})
	require.True(t, d.Schedulable(), d.Summary())
	out := map[string]int{}
	for _, s := range d.Scores {
		require.Len(t, s.Parts, 1)
		out[s.Seed] = s.Parts[0].Score
	}
	require.Len(t, out, d.Scored, "every ranked seed is in the breakdown")
	return out
}

func TestAllocationScorers(t *testing.T) {
	tests := []struct {
		name            string
		seeds           []*api.Seed
		usage           map[string]int64
		defaultCapacity int64
		least, most     map[string]int
	}{
		{
			name:  "by allocatable after placing",
			seeds: []*api.Seed{readySeed("a", withAllocatable(4)), readySeed("b", withAllocatable(10)), readySeed("c", withAllocatable(100))},
			usage: map[string]int64{"a": 3, "b": 4, "c": 0},
			least: map[string]int{"a": 0, "b": 50, "c": 99},
			most:  map[string]int{"a": 100, "b": 50, "c": 1},
		},
		{
			name:            "missing allocatable uses the default capacity",
			seeds:           []*api.Seed{readySeed("a"), readySeed("b", withAllocatable(10))},
			usage:           map[string]int64{"a": 4, "b": 4},
			defaultCapacity: 20,
			least:           map[string]int{"a": 75, "b": 50},
			most:            map[string]int{"a": 25, "b": 50},
		},
		{
			name:  "missing allocatable without a default: unknown, 0 both ways",
			seeds: []*api.Seed{readySeed("a"), readySeed("b", withAllocatable(10))},
			usage: map[string]int64{"a": 0, "b": 4},
			least: map[string]int{"a": 0, "b": 50},
			most:  map[string]int{"a": 0, "b": 50},
		},
		{
			name:  "a full seed is filtered, never scored",
			seeds: []*api.Seed{readySeed("a", withAllocatable(5)), readySeed("b", withAllocatable(10))},
			usage: map[string]int64{"a": 5, "b": 0},
			least: map[string]int{"b": 90},
			most:  map[string]int{"b": 10},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := snapshotOf(tt.usage, tt.seeds...)
			assert.Equal(t, tt.least, scoredBy(t, snap, basicShoot(), ScoreLeastAllocated, tt.defaultCapacity), "LeastAllocated")
			assert.Equal(t, tt.most, scoredBy(t, snap, basicShoot(), ScoreMostAllocated, tt.defaultCapacity), "MostAllocated")
		})
	}
}

func TestLeastShootsScorer(t *testing.T) {
	tests := []struct {
		name  string
		usage map[string]int64
		want  map[string]int
	}{
		{"least used only get 100", map[string]int64{"a": 3, "b": 1, "c": 1}, map[string]int{"a": 0, "b": 100, "c": 100}},
		{"linear between", map[string]int64{"a": 0, "b": 2, "c": 3}, map[string]int{"a": 100, "b": 33, "c": 0}},
		{"all equal", map[string]int64{"a": 7, "b": 7, "c": 7}, map[string]int{"a": 100, "b": 100, "c": 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := snapshotOf(tt.usage, readySeed("a"), readySeed("b"), readySeed("c"))
			assert.Equal(t, tt.want, scoredBy(t, snap, basicShoot(), ScoreLeastShoots, 0))
		})
	}
}

func TestProjectSpreadScorer(t *testing.T) {
	snap := snapshotOf(nil, readySeed("a"), readySeed("b"), readySeed("c"))
	assert.Equal(t, map[string]int{"a": 100, "b": 100, "c": 100}, scoredBy(t, snap, basicShoot(), ScoreProjectSpread, 0),
		"without Snapshot.ProjectShoots every seed is alike")

	counts := map[string]map[string]int64{"garden-proj": {"a": 2, "c": 1}, "garden-other": {"b": 50}}
	snap.ProjectShoots = func(ns string) map[string]int64 { return counts[ns] }
	assert.Equal(t, map[string]int{"a": 0, "b": 100, "c": 50}, scoredBy(t, snap, basicShoot(), ScoreProjectSpread, 0),
		"counted for the Shoot's own namespace only")

	// A project on more seeds than are ranked is read seed by seed: the
	// same scores.
	counts["garden-proj"] = map[string]int64{"a": 2, "c": 1, "x": 9, "y": 0, "z": 4}
	assert.Equal(t, map[string]int{"a": 0, "b": 100, "c": 50}, scoredBy(t, snap, basicShoot(), ScoreProjectSpread, 0),
		"seeds not ranked play no part")
}

func TestRegionDistanceScorer(t *testing.T) {
	seeds := []*api.Seed{
		readySeed("a"), // eu-west-1
		readySeed("b", withRegion("aws", "us-east-1")),
		readySeed("c", withRegion("aws", "eu-central-1")),
	}
	tests := []struct {
		name    string
		configs []*corev1.ConfigMap
		seeds   []*api.Seed
		shoot   *api.Shoot
		want    map[string]int
	}{
		{
			name:    "by the region config table; own region 0 unless listed",
			configs: []*corev1.ConfigMap{regionConfigMap("rc", "aws", map[string]string{"eu-west-1": "us-east-1: 40\neu-central-1: 10\n"})},
			seeds:   seeds, shoot: basicShoot(),
			want: map[string]int{"a": 100, "b": 0, "c": 75},
		},
		{
			name:    "a seed the table does not list scores 0",
			configs: []*corev1.ConfigMap{regionConfigMap("rc", "aws", map[string]string{"eu-west-1": "eu-west-1: 5\neu-central-1: 10\n"})},
			seeds:   seeds, shoot: basicShoot(),
			want: map[string]int{"a": 100, "b": 0, "c": 0},
		},
		{
			name:  "without a table: name distance, two more for another provider type",
			seeds: []*api.Seed{readySeed("a"), readySeed("b", withRegion("aws", "eu-west-3")), readySeed("c", withRegion("gcp", "eu-west-2"))},
			shoot: basicShoot(),
			// name distances 0, 2 and 2+2
			want: map[string]int{"a": 100, "b": 50, "c": 0},
		},
		{
			name:    "a table listing no seed (nor one in the shoot's region) falls back to name distance",
			configs: []*corev1.ConfigMap{regionConfigMap("rc", "aws", map[string]string{"eu-west-1": "mars-1: 0\n"})},
			seeds:   []*api.Seed{readySeed("a", withRegion("aws", "eu-west-2")), readySeed("b", withRegion("aws", "eu-west-3")), readySeed("c", withRegion("gcp", "eu-west-2"))},
			shoot:   basicShoot(),
			want:    map[string]int{"a": 100, "b": 100, "c": 0},
		},
		{
			name:    "a config for another cloud profile is not read",
			configs: []*corev1.ConfigMap{regionConfigMap("rc", "gcp", map[string]string{"eu-west-1": "eu-west-3: 0\neu-west-1: 9\n"})},
			seeds:   []*api.Seed{readySeed("a"), readySeed("b", withRegion("aws", "eu-west-3"))},
			shoot:   basicShoot(),
			want:    map[string]int{"a": 100, "b": 0},
		},
		{
			name:  "testing shoots keep their provider type, and are ranked by distance",
			seeds: []*api.Seed{readySeed("a", withRegion("gcp", "eu-west-1")), readySeed("b", withRegion("aws", "eu-west-3")), readySeed("c", withRegion("aws", "eu-west-1"))},
			shoot: basicShoot(func(s *api.Shoot) { s.Spec.Purpose = ptr.To(api.PurposeTesting) }),
			want:  map[string]int{"b": 0, "c": 100},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := snapshotOf(nil, tt.seeds...)
			snap.CloudProfiles["aws"] = NewCloudProfile("aws", &api.CloudProfileSpec{Type: "aws", SeedSelector: &api.SeedSelector{ProviderTypes: []string{"aws", "gcp"}}})
			for _, cm := range tt.configs {
				snap.RegionConfigs = append(snap.RegionConfigs, NewRegionConfig(cm))
			}
			assert.Equal(t, tt.want, scoredBy(t, snap, tt.shoot, ScoreRegionDistance, 0))
		})
	}
}

// With RegionDistance the region strategy is a preference, not a cut;
// without it the strategy still cuts; a broken table fails either way it
// is read.
func TestRegionDistanceReplacesStrategy(t *testing.T) {
	snap := snapshotOf(map[string]int64{"near": 9, "far": 0},
		readySeed("near", withAllocatable(10)), readySeed("far", withRegion("aws", "us-east-1"), withAllocatable(10)))
	shoot := basicShoot()
	leastAllocated := &Profile{Scorers: []WeightedScorer{{ScoreLeastAllocated, 1}}}
	withDistance := &Profile{Scorers: []WeightedScorer{{ScoreLeastAllocated, 1}, {ScoreRegionDistance, 1}}}

	for _, strategy := range []Strategy{SameRegion, MinimalDistance} {
		d := Decide(snap, shoot, Options{Strategy: strategy, Scoring: leastAllocated})
		assert.Equal(t, "near", d.Seed, "%s still cuts without RegionDistance", strategy)
		assert.Equal(t, 1, d.Scored)
		assert.False(t, Admits(snap, shoot, Options{Strategy: strategy, Scoring: leastAllocated}, "far"))

		// near: 0 + 100; far: 90 + 0.
		d = Decide(snap, shoot, Options{Strategy: strategy, Scoring: withDistance})
		assert.Equal(t, "near", d.Seed, strategy)
		assert.Equal(t, 2, d.Scored, "%s is no cut with RegionDistance", strategy)
		assert.True(t, Admits(snap, shoot, Options{Strategy: strategy, Scoring: withDistance}, "far"))
	}

	snap.RegionConfigs = []*RegionConfig{NewRegionConfig(regionConfigMap("rc", "aws", map[string]string{"eu-west-1": "not: [a, map"}))}
	d := Decide(snap, shoot, Options{Strategy: SameRegion, Scoring: withDistance})
	require.False(t, d.Schedulable())
	assert.Equal(t, StepStrategy, d.Step)
	assert.Contains(t, d.Message, `data["eu-west-1"] is not a map`)
	assert.Equal(t, "near", Decide(snap, shoot, Options{Strategy: SameRegion, Scoring: leastAllocated}).Seed,
		"SameRegion without RegionDistance never reads the table")
}
