package seedscale

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/operationsapi"
)

// withBackup gives a seed backup, with its bucket ready (Gardener's
// readiness asks for both).
func withBackup(s *api.Seed) {
	s.Spec.Backup = &api.SeedBackup{Provider: "aws"}
	s.Status.Conditions = append(s.Status.Conditions, api.Condition{Type: api.ConditionBackupBucketsReady, Status: api.ConditionTrue})
}

// spread is a set of seeds set-0, set-1, … in eu-west-1 with allocatable
// 10 and backup (a drain needs it), seed i holding used[i] Shoots.
func spread(used ...int) *world {
	w := &world{model: seed("model", "eu-west-1", 10, true, withBackup)}
	for i, n := range used {
		s := seed(fmt.Sprintf("set-%d", i), "eu-west-1", 10, true, withBackup)
		w.seeds = append(w.seeds, s)
		w.shoots = append(w.shoots, shoots(s.Name, "eu-west-1", s.Name, n)...)
	}
	return w
}

func TestChooseScaleIn(t *testing.T) {
	movedRecently := func(sh *api.Shoot) string {
		if sh.Name == "set-1-000" {
			return "a drain moved it 2h ago (within 24h)"
		}
		return ""
	}
	tests := []struct {
		name   string
		world  func() *world
		minR   int32
		target int32 // utilization percent
		si     ScaleIn
		// want is the chosen replica ("" for none) and its moves' count;
		// why the reason when none is chosen.
		want    string
		moves   int
		why     string
		blocked map[string]string // replica -> a part of why it was not chosen
	}{
		{name: "fewest Shoots", world: func() *world { return spread(4, 2, 3) }, target: 60, want: "set-1", moves: 2},
		{name: "equals: the lowest ordinal, as Gardener deletes", world: func() *world { return spread(3, 2, 2) }, target: 60, want: "set-1", moves: 2},
		{name: "equals: a seed that is not ready before a ready one", world: func() *world {
			w := spread(3, 2, 2)
			notReady(w.seeds[2])
			return w
		}, target: 60, want: "set-2", moves: 2},
		{name: "a replica holding a recently moved Shoot is not chosen", world: func() *world { return spread(4, 2, 3) }, target: 60,
			si: ScaleIn{Hold: movedRecently}, want: "set-2", moves: 3,
			blocked: map[string]string{"set-1": "Shoot garden-dev/set-1-000 cannot move: a drain moved it 2h ago"}},
		{name: "avoided", world: func() *world { return spread(4, 2, 3) }, target: 60,
			si: ScaleIn{Avoid: map[string]string{"set-1": "its last scale-in drain got stuck"}}, want: "set-2", moves: 3,
			blocked: map[string]string{"set-1": "its last scale-in drain got stuck"}},
		{name: "protected", world: func() *world {
			w := spread(4, 2, 3)
			w.protected = map[string]bool{"set-1": true}
			return w
		}, target: 60, want: "set-2", moves: 3, blocked: map[string]string{"set-1": "protected from deletion"}},
		{name: "more Shoots than the budget", world: func() *world { return spread(4, 2, 3) }, target: 60, si: ScaleIn{MaxShoots: 1},
			why: "no replica can be emptied", blocked: map[string]string{"set-1": "2 Shoots, more than the 1 one scale-in drains"}},
		{name: "the targets would not hold", world: func() *world { return spread(4, 2, 3) }, target: 40,
			why: "no replica can be emptied", blocked: map[string]string{"set-1": "without it shoots utilization at most 40% of allocatable does not hold (45% (9 of 20 allocatable))"}},
		{name: "pending Shoots need the room", world: func() *world {
			w := spread(4, 2, 3)
			w.pending = shoots("pending", "eu-west-1", "", 4)
			return w
		}, target: 60, why: "no replica can be emptied", blocked: map[string]string{"set-1": "does not hold (65% (13 of 20 allocatable))"}},
		{name: "pending Shoots need more seeds", world: func() *world {
			w := spread(4, 2, 3)
			w.pending = shoots("pending", "eu-west-1", "", 10)
			return w
		}, target: 60, why: "the targets need 4 replicas"},
		{name: "no backup: the drain moves nothing", world: func() *world {
			w := spread(4, 2, 3)
			for _, s := range w.seeds {
				s.Spec.Backup = nil
			}
			return w
		}, target: 60, why: "no replica can be emptied", blocked: map[string]string{"set-1": "the drain finds no seed for Shoot garden-dev/set-1-000"}},
		{name: "at minReplicas", world: func() *world { return spread(4, 2, 3) }, minR: 3, target: 60, why: "at minReplicas 3"},
		{name: "an empty replica goes without a drain", world: func() *world { return spread(4, 0, 3) }, target: 60,
			why: "the set scales in without a drain"},
		{name: "the targets need every replica", world: func() *world { return spread(9, 8, 9) }, target: 90, why: "no replica can be emptied",
			blocked: map[string]string{"set-1": "the drain finds no seed", "set-0": "the drain finds no seed", "set-2": "the drain finds no seed"}},
		{name: "the replica being drained is kept, its Shoots migrating away not counted", world: func() *world {
			w := spread(4, 2, 3)
			w.shoots[len(w.shoots)-1].Spec.SeedName = ptr.To("set-0") // set-2-002 migrates set-2 -> set-0
			return w
		}, target: 60, si: ScaleIn{Draining: "set-2"}, want: "set-2", moves: 2},
		{name: "a migration not of the drain's making blocks the replica", world: func() *world {
			w := spread(4, 2, 3)
			w.shoots[4].Spec.SeedName = ptr.To("set-0") // set-1-000 migrates set-1 -> set-0
			return w
		}, target: 60, want: "set-2", moves: 3, blocked: map[string]string{"set-1": "Shoot garden-dev/set-1-000 would be stranded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := tt.world()
			in := w.input(spec(tt.minR, 10, utilization(tt.target)))
			rec, err := Recommend(in)
			require.NoError(t, err)
			si := tt.si
			si.Shoots = w.shoots
			got, err := ChooseScaleIn(in, rec, si)
			require.NoError(t, err)
			if tt.want == "" {
				assert.Nil(t, got.Plan)
				assert.Contains(t, got.Why, tt.why)
			} else {
				require.NotNil(t, got.Plan, "%s; candidates %+v", got.Why, got.Candidates)
				assert.Equal(t, tt.want, got.Plan.Replica)
				assert.Equal(t, tt.moves, got.Plan.Shoots)
				assert.Len(t, got.Plan.Moves, tt.moves)
				assert.Equal(t, int32(len(w.seeds)-1), got.Plan.Replicas)
				for _, m := range got.Plan.Moves {
					assert.Equal(t, tt.want, m.From)
					assert.NotEqual(t, tt.want, m.To)
				}
			}
			blocked := map[string]string{}
			for _, c := range got.Candidates {
				blocked[c.Replica] = c.Blocked
			}
			for replica, part := range tt.blocked {
				assert.Contains(t, blocked[replica], part, replica)
			}
		})
	}
}

// The plan's moves are the drain's: fed to plan.Run with the same
// landscape, a Drain of the replica names the same destinations.
func TestChooseScaleInMovesAreTheDrainsPlan(t *testing.T) {
	w := spread(5, 3, 4, 4)
	in := w.input(spec(1, 10, utilization(80)))
	rec, err := Recommend(in)
	require.NoError(t, err)
	got, err := ChooseScaleIn(in, rec, ScaleIn{Shoots: w.shoots})
	require.NoError(t, err)
	require.NotNil(t, got.Plan)
	assert.Equal(t, "set-1", got.Plan.Replica)
	to := map[string]int{}
	for _, m := range got.Plan.Moves {
		to[m.To]++
	}
	// Least used first, one at a time: 4, 4, 5 become 5, 5, 6.
	assert.Equal(t, map[string]int{"set-0": 1, "set-2": 1, "set-3": 1}, to)
	assert.Equal(t, []ScaleInCandidate{{Replica: "set-1", Shoots: 3}, {Replica: "set-2", Shoots: 4}, {Replica: "set-3", Shoots: 4}, {Replica: "set-0", Shoots: 5}}, got.Candidates)
}

func TestDrainHold(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	move := func(at time.Time) string {
		return operationsapi.Move{Drain: "d", From: "a", To: "b", At: at}.Encode()
	}
	tests := []struct {
		name        string
		annotations map[string]string
		want        string // a part of the reason; "" for not held
	}{
		{"nothing", nil, ""},
		{"opted out", map[string]string{operationsapi.AnnotationNoDrain: "true"}, "opted out of drains"},
		{"opt-out other than true", map[string]string{operationsapi.AnnotationNoDrain: "yes"}, ""},
		{"moved an hour ago", map[string]string{operationsapi.AnnotationLastDrainMove: move(now.Add(-time.Hour))}, "a drain moved it less than 24h0m0s ago"},
		{"moved 25 hours ago", map[string]string{operationsapi.AnnotationLastDrainMove: move(now.Add(-25 * time.Hour))}, ""},
		{"moved in the future (a clock ahead)", map[string]string{operationsapi.AnnotationLastDrainMove: move(now.Add(time.Hour))}, "a drain moved it"},
	}
	hold := DrainHold(now, NoMoveWindow)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := shoot("s", "eu-west-1", "a")
			sh.Annotations = tt.annotations
			got := hold(sh)
			if tt.want == "" {
				assert.Empty(t, got)
			} else {
				assert.Contains(t, got, tt.want)
			}
		})
	}
}
