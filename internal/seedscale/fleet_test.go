package seedscale

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/plan"
)

// fleetSet is one set of a test fleet: n seeds named <name>-<i> in
// eu-west-1 with allocatable alloc, each holding used Shoots.
type fleetSet struct {
	name        string
	n           int
	alloc, used int64
	replicas    int32 // 0: n
	priority    int32
	failing     string
	spec        *autoscalingapi.SeedAutoscalerSpec
	region      string
	// notReady are the last seeds of the set registered and not ready,
	// holding nothing (used is for the others).
	notReady int
}

// fleet builds the garden's inputs: every set's seeds and Shoots in one
// snapshot, the pending Shoots shared.
func fleet(sets []fleetSet, pending []*api.Shoot, profiles map[string]*api.Shoot) []FleetSet {
	store := cache.NewStore(cache.Options{})
	objs := []client.Object{
		&api.CloudProfile{
			TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "CloudProfile"},
			ObjectMeta: metav1.ObjectMeta{Name: "aws", ResourceVersion: "1"},
			Spec:       api.CloudProfileSpec{Type: "aws"},
		},
		&api.Project{
			TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Project"},
			ObjectMeta: metav1.ObjectMeta{Name: "dev", ResourceVersion: "1"},
			Spec:       api.ProjectSpec{Namespace: ptr.To("garden-dev")},
		},
	}
	members := make([][]string, len(sets))
	for i, fs := range sets {
		for j := range fs.n {
			name := fmt.Sprintf("%s-%d", fs.name, j)
			members[i] = append(members[i], name)
			if j >= fs.n-fs.notReady {
				objs = append(objs, seed(name, regionOf(fs), fs.alloc, false, notReady))
				continue
			}
			objs = append(objs, seed(name, regionOf(fs), fs.alloc, false))
			for _, s := range shoots(name, regionOf(fs), name, int(fs.used)) {
				objs = append(objs, s)
			}
		}
	}
	store.Load(objs)
	snap := store.Snapshot()
	out := make([]FleetSet, len(sets))
	for i, fs := range sets {
		set := Set{
			Name: "garden/" + fs.name, Prefix: fs.name, NextOrdinal: int32(fs.n), Replicas: cmpOr(fs.replicas, int32(fs.n)),
			Seeds: members[i], Model: seed("model-"+fs.name, regionOf(fs), fs.alloc, false), ModelSource: "test", Failing: fs.failing,
		}
		out[i] = FleetSet{Autoscaler: "garden/" + fs.name, Priority: fs.priority, Input: Input{
			Snapshot: snap, Pending: pending, Set: set, Spec: fs.spec, Profiles: profiles,
			Options: placement.Options{Strategy: placement.SameRegion},
		}}
	}
	return out
}

func regionOf(fs fleetSet) string {
	if fs.region == "" {
		return "eu-west-1"
	}
	return fs.region
}

func cmpOr(a, b int32) int32 {
	if a != 0 {
		return a
	}
	return b
}

func desired(es []FleetEntry) []int32 {
	out := make([]int32, len(es))
	for i, e := range es {
		out[i] = e.Desired
	}
	return out
}

// Two sets in one region, 20 pending Shoots either could take: alone both
// grow by two; together exactly one grows, by the two seeds needed.
func TestDecideFleetOneSetGrows(t *testing.T) {
	sets := fleet([]fleetSet{
		{name: "a", n: 1, alloc: 10, used: 10, spec: spec(1, 10, utilization(100))},
		{name: "b", n: 1, alloc: 10, used: 10, spec: spec(1, 10, utilization(100))},
	}, shoots("new", "eu-west-1", "", 20), nil)
	es := DecideFleet(sets)
	require.NoError(t, es[0].Err)
	require.NoError(t, es[1].Err)
	assert.Equal(t, []int32{3, 3}, []int32{es[0].Alone.Desired, es[1].Alone.Desired}, "alone, both grow for the same Shoots")
	assert.Equal(t, []int32{3, 1}, desired(es))
	assert.Equal(t, 20, es[0].Takes)
	assert.Equal(t, 0, es[1].Takes)
	assert.Equal(t, ReasonSteady, es[1].Reason, es[1].Message)
}

// The expander: the set whose new seeds take more pending Shoots first,
// then the higher priority; a backed-off set last, not asked for more.
func TestDecideFleetExpanderOrder(t *testing.T) {
	pending := shoots("new", "eu-west-1", "", 8)
	u := func() *autoscalingapi.SeedAutoscalerSpec { return spec(1, 10, utilization(100)) }
	tests := []struct {
		name string
		sets []fleetSet
		want []int32
	}{
		{"bigger seeds take more", []fleetSet{
			{name: "a", n: 1, alloc: 4, used: 4, spec: u()},
			{name: "b", n: 1, alloc: 10, used: 10, spec: u()},
		}, []int32{1, 2}},
		{"priority among equals", []fleetSet{
			{name: "a", n: 1, alloc: 10, used: 10, spec: u()},
			{name: "b", n: 1, alloc: 10, used: 10, priority: 5, spec: u()},
		}, []int32{1, 2}},
		{"the name among equals", []fleetSet{
			{name: "b", n: 1, alloc: 10, used: 10, spec: u()},
			{name: "a", n: 1, alloc: 10, used: 10, spec: u()},
		}, []int32{1, 2}},
		// The failing replica is not needed once b takes the Shoots: a
		// may go back to 1 (as behavior's scale-down allows).
		{"a failing set is backed off, the next grows", []fleetSet{
			{name: "a", n: 1, alloc: 10, used: 10, priority: 9, failing: "ShootReconcileFailed", replicas: 2, spec: u()},
			{name: "b", n: 1, alloc: 10, used: 10, spec: u()},
		}, []int32{1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			es := DecideFleet(fleet(tc.sets, pending, nil))
			assert.Equal(t, tc.want, desired(es))
		})
	}
	// A dry-run set's growth on paper takes no Shoots from one that
	// writes, whatever its rank.
	dry := fleet([]fleetSet{
		{name: "a", n: 1, alloc: 10, used: 10, priority: 9, spec: u()},
		{name: "b", n: 1, alloc: 10, used: 10, spec: u()},
	}, pending, nil)
	dry[0].DryRun = true
	assert.Equal(t, []int32{1, 2}, desired(DecideFleet(dry)), "b grows; a, decided after it, sees the new seed of b")

	es := DecideFleet(fleet(tests[3].sets, pending, nil))
	assert.Equal(t, ReasonBackedOff, es[0].Reason)
	assert.Contains(t, es[0].Message, "ShootReconcileFailed")
	assert.Equal(t, 1, es[0].Order)
	assert.Equal(t, 8, es[1].Takes)
}

// A set whose replicas are on their way (registered, not ready yet) keeps
// the pending Shoots they will take: the other set does not grow for them,
// though its name comes first.
func TestDecideFleetStartingReplicasAreSeats(t *testing.T) {
	es := DecideFleet(fleet([]fleetSet{
		{name: "a", n: 1, alloc: 10, used: 10, spec: spec(1, 10, utilization(100))},
		{name: "b", n: 3, notReady: 2, alloc: 10, used: 10, spec: spec(1, 10, utilization(100))},
	}, shoots("new", "eu-west-1", "", 20), nil))
	assert.Equal(t, int32(3), es[0].Alone.Desired, "alone, a grows for the Shoots")
	assert.Equal(t, []int32{1, 3}, desired(es), "%s", es[0].Message)
	assert.Equal(t, 0, es[1].Order)
	assert.Equal(t, 20, es[1].Takes)
}

// Two sets with the same Headroom target: one grows; once its replica is
// on the way (asked, not registered) neither grows again.
func TestDecideFleetSharedHeadroomSettles(t *testing.T) {
	profiles := map[string]*api.Shoot{"small": shoot("small", "eu-west-1", "")}
	h := func() *autoscalingapi.SeedAutoscalerSpec { return spec(1, 10, headroom("small", 5)) }
	es := DecideFleet(fleet([]fleetSet{
		{name: "a", n: 1, alloc: 10, used: 10, spec: h()},
		{name: "b", n: 1, alloc: 10, used: 10, spec: h()},
	}, nil, profiles))
	assert.Equal(t, []int32{2, 1}, desired(es))

	// The next sync: a asked for its second replica, not registered yet.
	for range 3 {
		es = DecideFleet(fleet([]fleetSet{
			{name: "a", n: 1, alloc: 10, used: 10, replicas: 2, spec: h()},
			{name: "b", n: 1, alloc: 10, used: 10, spec: h()},
		}, nil, profiles))
		assert.Equal(t, []int32{2, 1}, desired(es), "settled: no flapping")
	}
}

// generatedFleet is 2-5 sets in one or two regions with 1-4 seeds of
// allocatable 5-15 each, partly used, and 0-40 pending Shoots in those
// regions.
func generatedFleet(r *rand.Rand) ([]fleetSet, []*api.Shoot) {
	regions := []string{"eu-west-1", "eu-central-1"}
	var sets []fleetSet
	for i := range 2 + r.IntN(4) {
		alloc := int64(5 + r.IntN(11))
		var m autoscalingapi.MetricSpec
		switch r.IntN(2) {
		case 0:
			m = utilization(int32(50 + r.IntN(51)))
		default:
			m = averageValue(int32(3 + r.IntN(10)))
		}
		sets = append(sets, fleetSet{
			name: fmt.Sprintf("s%d", i), n: 1 + r.IntN(4), alloc: alloc, used: int64(r.IntN(int(alloc) + 1)),
			priority: int32(r.IntN(3)), region: regions[r.IntN(2)], spec: spec(1, int32(4+r.IntN(8)), m),
		})
	}
	var pending []*api.Shoot
	for i := range r.IntN(41) {
		pending = append(pending, shoot(fmt.Sprintf("p-%03d", i), regions[r.IntN(2)], ""))
	}
	return sets, pending
}

// unplacedAt simulates the whole fleet with each set at its replicas and
// counts the pending Shoots without a seed.
func unplacedAt(t *testing.T, sets []FleetSet, replicas []int32) int {
	t.Helper()
	var added []*api.Seed
	for i, fs := range sets {
		for j := int32(len(fs.Input.Set.Seeds)); j < replicas[i]; j++ {
			model := fs.Input.Set.Model.DeepCopy()
			model.Name = fmt.Sprintf("%s-new-%d", fs.Input.Set.Prefix, j)
			added = append(added, model)
		}
	}
	ops := []plan.Operation{plan.AddSeeds{Seeds: added}, plan.PlaceShoots{Shoots: sets[0].Input.Pending}}
	report, _, err := plan.Simulate(sets[0].Input.Snapshot, nil, sets[0].Input.Options, ops)
	require.NoError(t, err)
	return len(report.Unplaced)
}

// On generated fleets the combined decision never asks for more seeds
// than the per-set decisions together, and never leaves more pending
// Shoots without a seed than they would.
func TestDecideFleetGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 2))
	fewer := 0
	for i := range 150 {
		specs, pending := generatedFleet(r)
		sets := fleet(specs, pending, nil)
		es := DecideFleet(sets)
		var combined, alone int32
		comb, each := make([]int32, len(es)), make([]int32, len(es))
		for j, e := range es {
			require.NoError(t, e.Err, "fleet %d", i)
			combined += e.Desired
			alone += e.Alone.Desired
			comb[j], each[j] = e.Desired, e.Alone.Desired
		}
		require.LessOrEqual(t, combined, alone, "fleet %d: combined %v, alone %v", i, comb, each)
		require.LessOrEqual(t, unplacedAt(t, sets, comb), unplacedAt(t, sets, each), "fleet %d: combined %v, alone %v", i, comb, each)
		if combined < alone {
			fewer++
		}
	}
	// The property must be exercised where it matters.
	assert.Greater(t, fewer, 10, "fleets where deciding together saves seeds")
}
