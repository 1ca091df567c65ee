package seeddrain

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	ops "github.com/seedwarden/seedwarden/internal/operationsapi"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/plan"
)

func threeSeeds() []*api.Seed { return []*api.Seed{seed("old", 20), seed("b", 20), seed("c", 20)} }

// planned is where `plan --drain old` sends each Shoot.
func planned(t *testing.T, e *env, shoots []*api.Shoot) map[string]string {
	r, err := plan.Run(e.store.Snapshot(), shoots, placement.Options{Strategy: placement.SameRegion}, []plan.Operation{plan.Drain{Seed: "old"}})
	require.NoError(t, err)
	out := map[string]string{}
	for _, p := range r.Placed {
		out[p.Shoot[len("garden-dev/"):]] = p.To
	}
	return out
}

// Six Shoots, a budget of two: never more than two migrations in flight,
// every Shoot ends on the seed the plan named, the drain ends Drained, and
// the drained seed takes no new Shoot meanwhile.
func TestDrainKeepsTheBudget(t *testing.T) {
	shoots := shootsOn("s", "old", 6)
	e := newEnv(t, threeSeeds(), shoots, drainOf("d", "old", 2))
	want := planned(t, e, shoots)
	require.Len(t, want, 6)

	var d *ops.SeedDrain
	for range 20 {
		d = e.sync("d")
		assert.LessOrEqual(t, e.migrating(), 2, "in flight")
		assert.LessOrEqual(t, d.Status.Counts.Migrating, int32(2))
		newShoot := e.store.Place(shoot("new", ""), placement.Options{Strategy: placement.SameRegion}, "")
		assert.NotEqual(t, "old", newShoot.Seed, "the drained seed takes no new Shoot")
		if d.Status.Phase == ops.PhaseDrained {
			break
		}
		e.gardenlet()
	}
	require.Equal(t, ops.PhaseDrained, d.Status.Phase, d.Status.Message)
	seeds, _ := e.seedsOf()
	assert.Equal(t, want, seeds)
	assert.Equal(t, int32(6), d.Status.Counts.Moved)
	for _, s := range d.Status.Shoots {
		assert.Equal(t, ops.ShootMoved, s.State)
		assert.NotNil(t, s.StartedAt)
		assert.NotNil(t, s.FinishedAt)
	}
	assert.True(t, meta.IsStatusConditionTrue(d.Status.Conditions, ops.ConditionCordoned))
	assert.Contains(t, e.rec.reasons(), ReasonDrained)
}

// A migration Gardener fails stops that Shoot with Gardener's reason and
// is not tried again; the others go on.
func TestFailedMigrationStopsOneShoot(t *testing.T) {
	shoots := shootsOn("s", "old", 4)
	e := newEnv(t, threeSeeds(), shoots, drainOf("d", "old", 2))
	e.fail["s-1"] = true
	var d *ops.SeedDrain
	for range 20 {
		d = e.sync("d")
		e.gardenlet()
	}
	require.Equal(t, ops.PhaseBlocked, d.Status.Phase, d.Status.Message)
	assert.Equal(t, int32(3), d.Status.Counts.Moved)
	assert.Equal(t, int32(1), d.Status.Counts.Failed)
	for _, s := range d.Status.Shoots {
		if s.Name == "s-1" {
			assert.Equal(t, ops.ShootFailed, s.State)
			assert.Contains(t, s.Reason, "backup entry not reachable")
		}
	}
	_, versions := e.seedsOf()
	before := versions["s-1"]
	e.sync("d")
	_, versions = e.seedsOf()
	assert.Equal(t, before, versions["s-1"], "not retried")
	assert.Contains(t, e.rec.reasons(), ReasonMigrationFailed)
}

// A dry run writes nothing but its status, which shows the plan.
func TestDryRunWritesNothing(t *testing.T) {
	shoots := shootsOn("s", "old", 3)
	drain := drainOf("d", "old", 5)
	drain.Spec.DryRun = true
	e := newEnv(t, threeSeeds(), shoots, drain)
	want := planned(t, e, shoots)
	_, before := e.seedsOf()
	d := e.sync("d")
	d = e.sync("d")
	_, after := e.seedsOf()
	assert.Equal(t, before, after)
	assert.Equal(t, ops.PhasePlanned, d.Status.Phase)
	got := map[string]string{}
	for _, s := range d.Status.Shoots {
		assert.Equal(t, ops.ShootPlanned, s.State)
		got[s.Name] = s.Destination
	}
	assert.Equal(t, want, got)
	assert.False(t, meta.IsStatusConditionTrue(d.Status.Conditions, ops.ConditionCordoned))
	assert.Empty(t, e.store.Cordoned("old"), "a dry run cordons nothing")
}

// An opted-out Shoot is never moved; the drain cannot end Drained.
func TestOptOut(t *testing.T) {
	shoots := shootsOn("s", "old", 2)
	shoots[0].Annotations = map[string]string{ops.AnnotationNoDrain: "true"}
	e := newEnv(t, threeSeeds(), shoots, drainOf("d", "old", 2))
	var d *ops.SeedDrain
	for range 6 {
		d = e.sync("d")
		e.gardenlet()
	}
	seeds, _ := e.seedsOf()
	assert.Equal(t, "old", seeds["s-0"])
	assert.NotEqual(t, "old", seeds["s-1"])
	assert.Equal(t, ops.PhaseBlocked, d.Status.Phase)
	assert.Equal(t, int32(1), d.Status.Counts.OptedOut)
}

// A Shoot already migrating away (started by someone else) holds a slot
// and is waited for before the next migration starts.
func TestMigratingAwayIsWaitedFor(t *testing.T) {
	away := shoot("away", "b")
	away.Status.SeedName = ptr.To("old")
	away.Status.LastOperation = &api.LastOperation{Type: opMigrate, State: "Processing"}
	shoots := append(shootsOn("s", "old", 1), away)
	e := newEnv(t, threeSeeds(), shoots, drainOf("d", "old", 1))
	d := e.sync("d")
	seeds, _ := e.seedsOf()
	assert.Equal(t, "old", seeds["s-0"], "no slot while away migrates")
	assert.Equal(t, int32(1), d.Status.Counts.Migrating)
	assert.Equal(t, int32(1), d.Status.Counts.Planned)

	e.gardenlet() // away: restored on b
	d = e.sync("d")
	seeds, _ = e.seedsOf()
	assert.NotEqual(t, "old", seeds["s-0"], "started once the slot is free")
	for range 3 {
		e.gardenlet()
		d = e.sync("d")
	}
	assert.Equal(t, ops.PhaseDrained, d.Status.Phase, d.Status.Message)
}

// maxPerHour bounds the starts within an hour.
func TestMaxPerHour(t *testing.T) {
	drain := drainOf("d", "old", 5)
	drain.Spec.Budget.MaxPerHour = ptr.To[int32](2)
	e := newEnv(t, threeSeeds(), shootsOn("s", "old", 4), drain)
	d := e.sync("d")
	assert.Equal(t, int32(2), d.Status.Counts.Migrating)
	for range 3 {
		e.gardenlet()
		d = e.sync("d")
	}
	assert.Equal(t, int32(2), d.Status.Counts.Moved)
	assert.Equal(t, int32(2), d.Status.Counts.Planned, "the hour is not over")
	e.now = e.now.Add(61 * 60e9)
	d = e.sync("d")
	assert.Equal(t, int32(2), d.Status.Counts.Migrating)
}

// Until the landscape may be trusted nothing is planned or written but
// the Pending phase.
func TestPendingUntilReady(t *testing.T) {
	e := newEnv(t, threeSeeds(), shootsOn("s", "old", 1), drainOf("d", "old", 1))
	ready := false
	e.r.Ready = func() bool { return ready }
	_, before := e.seedsOf()
	d := e.sync("d")
	assert.Equal(t, ops.PhasePending, d.Status.Phase)
	assert.Empty(t, d.Status.Shoots)
	_, after := e.seedsOf()
	assert.Equal(t, before, after)
	ready = true
	d = e.sync("d")
	assert.Equal(t, ops.PhaseDraining, d.Status.Phase)
}
