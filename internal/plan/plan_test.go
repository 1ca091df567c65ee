package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

func TestDrainMovesEachShootWhereThePlacementRulesSendIt(t *testing.T) {
	// a holds 5; b has room for 2 (3 of 5), c for 4 (1 of 5): least used
	// first, each move counted before the next.
	shoots := append(append(shootsOn("a", "a", 5), shootsOn("b", "b", 3)...), shootsOn("c", "c", 1)...)
	snap := landscape([]*api.Seed{seed("a", "eu-west-1", 10), seed("b", "eu-west-1", 5), seed("c", "eu-west-1", 5)}, shoots)

	r, err := Run(snap, shoots, sameRegion, []Operation{Drain{Seed: "a"}})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"garden-dev/a-00: a -> c", // c 1, b 3
		"garden-dev/a-01: a -> c", // c 2
		"garden-dev/a-02: a -> b", // b 3 = c 3: name order
		"garden-dev/a-03: a -> c", // b 4, c 3
		"garden-dev/a-04: a -> b", // b 4 = c 4
	}, moves(r.Placed))
	assert.Empty(t, r.Unplaced)
	assert.True(t, r.Complete())
	assert.Equal(t, []SeedRow{
		{Name: "a", Provider: "aws", Region: "eu-west-1", Before: 5, After: 0, Allocatable: ptrTo[int64](10), Utilization: ptrTo(0.0), State: StateDrained},
		{Name: "b", Provider: "aws", Region: "eu-west-1", Before: 3, After: 5, Allocatable: ptrTo[int64](5), Utilization: ptrTo(1.0)},
		{Name: "c", Provider: "aws", Region: "eu-west-1", Before: 1, After: 4, Allocatable: ptrTo[int64](5), Utilization: ptrTo(0.8)},
	}, r.Seeds)
	assert.Equal(t, []GroupRow{{Provider: "aws", Region: "eu-west-1", Seeds: 3, FreeBefore: 5 + 2 + 4, FreeAfter: 0 + 0 + 1}}, r.Groups)
}

func TestDrainReportsShootsThatCannotMove(t *testing.T) {
	// b has room for one; c needs a toleration; d has no backup; the
	// deleting Shoot and the one migrating in cannot move at all.
	deleting := shoot("a-deleting", "a")
	deleting.DeletionTimestamp = nowTime()
	migrating := shoot("a-migrating", "a")
	migrating.Status.SeedName = ptrTo("b")
	shoots := append(shootsOn("a", "a", 2), deleting, migrating)
	snap := landscape([]*api.Seed{
		seed("a", "eu-west-1", 10), seed("b", "eu-west-1", 2), seed("c", "eu-west-1", 10, tainted), seed("d", "eu-west-1", 10, noBackup),
	}, shoots)

	r, err := Run(snap, shoots, sameRegion, []Operation{Drain{Seed: "a"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"garden-dev/a-00: a -> b"}, moves(r.Placed), "b had 1 (the migrating Shoot) of 2")
	require.Len(t, r.Unplaced, 3)
	assert.Equal(t, Unplaced{Shoot: "garden-dev/a-01", From: "a", Step: StepMigration, // d would take it but has no backup
		Message: `no seed it could go to accepts a control plane migration from "a" (without the migration rules it would go to "d")`,
		Reasons: map[string]string{
			"a": DrainedReason,
			"b": "seed does not have available capacity for shoots (usage 2, allocatable 2)",
			"c": "shoot does not tolerate the seed's taints",
			"d": `cannot change seed name because backup is not configured for seed "d"`,
		},
		Code:   MigrationRefused,
		Codes:  map[string]placement.ReasonCode{"a": SeedDrainedByPlan, "b": placement.SeedFull, "c": placement.TaintNotTolerated, "d": MigrationSeedNoBackup},
		Counts: map[placement.ReasonCode]int{SeedDrainedByPlan: 1, placement.SeedFull: 1, placement.TaintNotTolerated: 1, MigrationSeedNoBackup: 1},
	}, r.Unplaced[0])
	assert.Equal(t, Unplaced{Shoot: "garden-dev/a-deleting", From: "a", Message: "the Shoot is being deleted (metadata.deletionTimestamp is set)", Code: ShootDeleting}, r.Unplaced[1])
	assert.Equal(t, Unplaced{Shoot: "garden-dev/a-migrating", From: "a", Message: `a control plane migration from seed "b" to "a" is under way (status.seedName is "b")`, Code: MigrationInProgress}, r.Unplaced[2])
	assert.False(t, r.Complete())
}

func TestAddShootsPlacesExactlyTheFreeEligibleSlots(t *testing.T) {
	// 37 free eligible slots: 10 + 20 + 7; the tainted seed, the other
	// region and the full seed offer none.
	existing := append(shootsOn("x", "x", 3), shootsOn("full", "full", 4)...)
	snap := landscape([]*api.Seed{
		seed("x", "eu-west-1", 13), seed("y", "eu-west-1", 20), seed("z", "eu-west-1", 7),
		seed("full", "eu-west-1", 4), seed("t", "eu-west-1", 100, tainted), seed("us", "us-east-1", 100),
	}, existing)

	r, err := Run(snap, existing, sameRegion, []Operation{AddShoots{Like: shoot("new", ""), Count: 50}})
	require.NoError(t, err)
	assert.Len(t, r.Placed, 37)
	require.Len(t, r.Unplaced, 13)
	assert.Equal(t, "garden-dev/new-38", r.Unplaced[0].Shoot)
	assert.Equal(t, placement.StepStrategy, r.Unplaced[0].Step, "only us-east-1 has room left, and SameRegion keeps to eu-west-1")
	after := map[string]int64{}
	for _, s := range r.Seeds {
		after[s.Name] = s.After
	}
	assert.Equal(t, map[string]int64{"x": 13, "y": 20, "z": 7, "full": 4, "t": 0, "us": 0}, after)

	n, err := Headroom(snap, shoot("new", ""), sameRegion, 1000)
	require.NoError(t, err)
	assert.Equal(t, 37, n, "headroom counts what add-shoots places")
}

func TestOperationsApplyInOrder(t *testing.T) {
	existing := shootsOn("a", "a", 3)
	snap := landscape([]*api.Seed{seed("a", "eu-west-1", 10), seed("b", "eu-west-1", 1)}, existing)
	r, err := Run(snap, existing, sameRegion, []Operation{
		AddSeeds{Seeds: []*api.Seed{seed("new", "eu-west-1", 2)}},
		Drain{Seed: "a"},
		RemoveSeed{Seed: "a"},
		AddShoots{Like: shoot("more", ""), Count: 1},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"garden-dev/a-00: a -> b", "garden-dev/a-01: a -> new", "garden-dev/a-02: a -> new"}, moves(r.Placed))
	require.Len(t, r.Unplaced, 1, "every seed full after the drain")
	assert.Equal(t, "garden-dev/more-1", r.Unplaced[0].Shoot)
	assert.Empty(t, r.Stranded)
	states := map[string]string{}
	for _, s := range r.Seeds {
		states[s.Name] = s.State
	}
	assert.Equal(t, map[string]string{"a": StateRemoved, "b": "", "new": StateAdded}, states)
}

// A removed seed strands the Shoots still on it (spec.seedName) and those
// whose control plane is still migrating away from it (status.seedName):
// no drain moves the latter, the seed can go only once they have left.
func TestRemoveSeedStrandsItsShoots(t *testing.T) {
	away := shoot("away", "b") // spec b, status a: migrating from a to b
	away.Status.SeedName = ptr.To("a")
	seeds := []*api.Seed{seed("a", "eu-west-1", 10), seed("b", "eu-west-1", 10)}
	tests := []struct {
		name   string
		shoots []*api.Shoot
		ops    []Operation
		want   []Stranded
		// wantRow is the removed seed's Stranded count.
		wantRow int64
	}{
		{"Shoots on it", shootsOn("a", "a", 2), []Operation{RemoveSeed{Seed: "a"}},
			[]Stranded{{Shoot: "garden-dev/a-00", Seed: "a"}, {Shoot: "garden-dev/a-01", Seed: "a"}}, 2},
		{"drained first", shootsOn("a", "a", 2), []Operation{Drain{Seed: "a"}, RemoveSeed{Seed: "a"}}, nil, 0},
		{"one migrating away, drained first", append(shootsOn("a", "a", 2), away), []Operation{Drain{Seed: "a"}, RemoveSeed{Seed: "a"}},
			[]Stranded{{Shoot: "garden-dev/away", Seed: "a", MigratingTo: "b"}}, 1},
		{"one migrating away and one on it", append(shootsOn("a", "a", 1), away), []Operation{RemoveSeed{Seed: "a"}},
			[]Stranded{{Shoot: "garden-dev/a-00", Seed: "a"}, {Shoot: "garden-dev/away", Seed: "a", MigratingTo: "b"}}, 2},
		{"the seed it migrates to", []*api.Shoot{away}, []Operation{RemoveSeed{Seed: "b"}},
			[]Stranded{{Shoot: "garden-dev/away", Seed: "b"}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Run(landscape(seeds, tt.shoots), tt.shoots, sameRegion, tt.ops)
			require.NoError(t, err)
			assert.Equal(t, tt.want, r.Stranded)
			assert.Equal(t, len(tt.want) == 0, r.Complete())
			for _, row := range r.Seeds {
				if row.State == StateRemoved {
					assert.Equal(t, tt.wantRow, row.Stranded, row.Name)
				} else {
					assert.Zero(t, row.Stranded, "only a removed seed strands: %s", row.Name)
				}
			}
		})
	}
}

func TestOperationErrorsNameTheValue(t *testing.T) {
	snap := landscape([]*api.Seed{seed("a", "eu-west-1", 10)}, nil)
	tests := []struct {
		name string
		op   Operation
		want string
	}{
		{"drain unknown", Drain{Seed: "nope"}, `operation 1: no seed "nope"`},
		{"remove unknown", RemoveSeed{Seed: "nope"}, `operation 1: no seed "nope"`},
		{"add existing", AddSeeds{Seeds: []*api.Seed{seed("a", "eu-west-1", 1)}}, `operation 1: seed "a" exists already`},
		{"count 0", AddShoots{Like: shoot("x", ""), Count: 0}, "operation 1: count 0: must be at least 1"},
		{"no template", AddShoots{Count: 1}, "operation 1: no Shoot to copy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(snap, nil, sameRegion, []Operation{AddShoots{Like: shoot("first", ""), Count: 1}, tt.op})
			assert.EqualError(t, err, strings.Replace(tt.want, "operation 1", "operation 2", 1))
			var opErr *OpError
			require.ErrorAs(t, err, &opErr)
			assert.Equal(t, 1, opErr.Index, "the index of the operation in the list")
		})
	}
}

// An added seed without a status is taken as ready; one whose status says
// otherwise is not.
func TestAddedSeedReadiness(t *testing.T) {
	bare := func(s *api.Seed) { s.Status.LastOperation, s.Status.Conditions = nil, nil }
	unready := func(s *api.Seed) { s.Status.Conditions[0].Status = "False" }
	noLastOperation := func(s *api.Seed) { s.Status.LastOperation = nil }
	tests := []struct {
		name   string
		mods   []func(*api.Seed)
		placed bool
	}{
		{"ready as written", nil, true},
		{"no status but allocatable: assumed ready", []func(*api.Seed){bare}, true},
		{"no status, no backup: assumed ready", []func(*api.Seed){bare, noBackup}, true},
		{"GardenletReady False: as written", []func(*api.Seed){unready}, false},
		{"conditions without lastOperation: as written", []func(*api.Seed){noLastOperation}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			full := seed("full", "eu-west-1", 0)
			added := seed("new", "eu-west-1", 1, tc.mods...)
			r, err := Run(landscape([]*api.Seed{full}, nil), nil, sameRegion, []Operation{
				AddSeeds{Seeds: []*api.Seed{added}},
				AddShoots{Like: shoot("s", ""), Count: 1},
			})
			require.NoError(t, err)
			assert.Equal(t, tc.placed, len(r.Placed) == 1, "placed: %v, unplaced: %v", r.Placed, r.Unplaced)
			if tc.placed {
				assert.Equal(t, "new", r.Placed[0].To)
			}
		})
	}
}
