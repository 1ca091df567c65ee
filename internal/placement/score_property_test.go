package placement_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/landscapegen"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// leastShoots is Gardener's rule written as a profile.
var leastShoots = &placement.Profile{Scorers: []placement.WeightedScorer{{Name: placement.ScoreLeastShoots, Weight: 1}}}

// TestLeastShootsProfileIsGardener: the profile {LeastShoots: 1}, with the
// strategy filter (no RegionDistance), decides exactly as no profile does:
// the same seed, ties, usage, and for an unschedulable Shoot the same
// step, message and reasons. Decided again without the winner (the
// cross-replica retry), still the same. Every way of the fast path agrees
// with the plain filters under the profile too. Over the conformance corpus
// (both strategies, every network mode) and generated landscapes.
func TestLeastShootsProfileIsGardener(t *testing.T) {
	var st profileStats
	t.Run("conformance", func(t *testing.T) {
		for _, ls := range loadScenarios(t) {
			for _, strategy := range []placement.Strategy{placement.SameRegion, placement.MinimalDistance} {
				for _, mode := range []placement.NetworkMode{placement.Disjoint, placement.AllowIPv4, ""} {
					st.check(t, ls.Name, ls.store.Snapshot(), &ls.Shoot, placement.Options{Strategy: strategy, NetworkMode: mode})
				}
			}
		}
	})
	t.Run("generated", func(t *testing.T) {
		landscapes := 80
		if testing.Short() {
			landscapes = 20
		}
		r := rand.New(rand.NewPCG(3, 4))
		sizes := []int{1, 2, 5, 30, placement.MinIndexed, 300}
		for l := range landscapes {
			n := sizes[l%len(sizes)]
			snap, _ := genSnapshot(r, n)
			for i := range 10 {
				shoot := genShoot(r)
				for _, strategy := range []placement.Strategy{placement.SameRegion, placement.MinimalDistance} {
					opts := placement.Options{Strategy: strategy, NetworkMode: placement.Disjoint}
					st.check(t, fmt.Sprintf("landscape %d (%d seeds), shoot %d, %s", l, n, i, strategy), snap, shoot, opts)
				}
			}
		}
	})
	t.Logf("compared %d schedulable (%d with ties of several seeds), %d unschedulable", st.scheduled, st.tied, st.unschedulable)
	require.Greater(t, st.scheduled, 3000, "too few schedulable cases")
	require.Greater(t, st.tied, 300, "too few cases where the tie-break by name decides")
	require.Greater(t, st.unschedulable, 500, "too few unschedulable cases")
}

type profileStats struct{ scheduled, tied, unschedulable int }

func (st *profileStats) check(t *testing.T, name string, snap *placement.Snapshot, shoot *api.Shoot, opts placement.Options) {
	t.Helper()
	for range 2 {
		want := placement.Decide(snap, shoot, opts)
		scored := opts
		scored.Scoring = leastShoots
		got := placement.Decide(snap, shoot, scored)
		if got.Schedulable() {
			require.Len(t, got.Scores, min(got.Scored, placement.ScoreRanks), name)
			require.Equal(t, 100, got.Scores[0].Total, name)
		}
		plain := placement.Plain.Run(snap, shoot, scored)
		for _, v := range placement.FastVariants {
			require.Equal(t, plain, v.Run(snap, shoot, scored), "%s: fast path (%s) differs from the plain filters under a profile", name, v.Name)
		}
		got.Scores, got.Scored = nil, 0
		require.Equal(t, want, got, "%s: {LeastShoots: 1} differs from Gardener's rule (excluding %v)", name, opts.Exclude)
		if !want.Schedulable() {
			st.unschedulable++
			return
		}
		st.scheduled++
		if len(want.Tied) > 1 {
			st.tied++
		}
		opts.Exclude = append(slices.Clone(opts.Exclude), want.Seed)
	}
}

// Utilisation counts what Snapshot.Usage counts: a migrating Shoot on both
// its seeds, and reservations. Through the Store, as the webhook decides.
func TestScoringCountsMigrationsAndReservations(t *testing.T) {
	objs := []client.Object{landscapegen.CloudProfile(), landscapegen.Project()}
	for _, name := range []string{"a", "b", "c"} {
		s := landscapegen.Seed(1) // aws, eu-west-1, untainted
		s.Spec.Provider.Type = "aws"
		s.Name = name
		s.Status.Allocatable[api.ResourceShoots] = *resource.NewQuantity(10, resource.DecimalSI)
		objs = append(objs, s)
	}
	shoot := func(name, spec, status string) *api.Shoot {
		sh := landscapegen.NewShoot(name)
		sh.ResourceVersion = "1"
		sh.Spec.SeedName = ptr.To(spec)
		if status != "" {
			sh.Status.SeedName = ptr.To(status)
		}
		return sh
	}
	// a: one Shoot and one migrating away; b: the migrating one arriving;
	// c: one Shoot.
	objs = append(objs, shoot("on-a", "a", ""), shoot("moving", "b", "a"), shoot("on-c", "c", ""))
	store := cache.NewStore(cache.Options{GardenNamespace: "garden"})
	store.Load(objs)
	opts := placement.Options{Strategy: placement.SameRegion, NetworkMode: placement.Disjoint, Scoring: &placement.Profile{
		Scorers: []placement.WeightedScorer{{Name: placement.ScoreLeastAllocated, Weight: 1}, {Name: placement.ScoreLeastShoots, Weight: 1}},
	}}
	scores := func() map[string][]int {
		d := store.Place(landscapegen.NewShoot("new"), opts, "")
		require.True(t, d.Schedulable(), d.Summary())
		out := map[string][]int{}
		for _, s := range d.Scores {
			out[s.Seed] = []int{s.Parts[0].Score, s.Parts[1].Score}
		}
		return out
	}
	// usage a 2, b 1, c 1: LeastAllocated 100*(10-3)/10, 100*(10-2)/10.
	assert.Equal(t, map[string][]int{"a": {70, 0}, "b": {80, 100}, "c": {80, 100}}, scores())

	require.NoError(t, store.Reserve("b", cache.Claim{Key: "in-flight", Namespace: "garden-dev"}))
	// usage a 2, b 2, c 1.
	assert.Equal(t, map[string][]int{"a": {70, 0}, "b": {70, 0}, "c": {80, 100}}, scores())
}
