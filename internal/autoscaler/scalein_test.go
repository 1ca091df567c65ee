package autoscaler

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/operationsapi"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
)

// spreadSet is a set of len(used) seeds aws-0, … with backup (a drain
// needs it), allocatable 10, seed i holding used[i] Shoots: the Shoots and
// the landscape they make.
type spreadSet struct {
	seeds  []*api.Seed
	shoots []*api.Shoot
}

func newSpreadSet(used ...int) *spreadSet {
	s := &spreadSet{}
	for i, n := range used {
		name := seedmanagement.ReplicaName(setName, int32(i))
		seed := seedObj(name, 10, true)
		seed.Spec.Backup = &api.SeedBackup{Provider: "aws"}
		seed.Status.Conditions = append(seed.Status.Conditions, api.Condition{Type: api.ConditionBackupBucketsReady, Status: api.ConditionTrue})
		s.seeds = append(s.seeds, seed)
		for j := range n {
			s.shoots = append(s.shoots, shootObj(fmt.Sprintf("%s-shoot-%d", name, j), name))
		}
	}
	return s
}

// store is the landscape of the set's seeds and Shoots.
func (s *spreadSet) store() *cache.Store {
	store := cache.NewStore(cache.Options{})
	objs := landscapeBase()
	for _, seed := range s.seeds {
		objs = append(objs, seed)
	}
	for _, sh := range s.shoots {
		objs = append(objs, sh)
	}
	store.Load(objs)
	return store
}

// objects are the Shoots as the fake API server holds them.
func (s *spreadSet) objects() []client.Object {
	out := make([]client.Object, len(s.shoots))
	for i, sh := range s.shoots {
		out[i] = sh.DeepCopy()
	}
	return out
}

// moveAll moves every Shoot of seed from to seed to, as a finished drain
// leaves them (annotated with the move at at), in the landscape and on the
// fake API server.
func (s *spreadSet) moveAll(t *testing.T, f *fixture, from, to string, at time.Time) {
	t.Helper()
	for _, sh := range s.shoots {
		if ptr.Deref(sh.Spec.SeedName, "") != from {
			continue
		}
		sh.Spec.SeedName, sh.Status.SeedName = ptr.To(to), ptr.To(to)
		sh.Annotations = map[string]string{operationsapi.AnnotationLastDrainMove: operationsapi.Move{Drain: drainName(from), From: from, To: to, At: at}.Encode()}
		stored := &api.Shoot{}
		require.NoError(t, f.c.Get(context.Background(), client.ObjectKeyFromObject(sh), stored))
		stored.Spec.SeedName, stored.Status.SeedName, stored.Annotations = sh.Spec.SeedName, sh.Status.SeedName, sh.Annotations
		require.NoError(t, f.c.Update(context.Background(), stored))
	}
	f.r.Snapshot = s.store().Snapshot
}

// without takes seed out of the landscape, as Gardener's deletion of the
// replica does.
func (s *spreadSet) without(f *fixture, seed string) {
	for i, x := range s.seeds {
		if x.Name == seed {
			s.seeds = append(s.seeds[:i], s.seeds[i+1:]...)
			break
		}
	}
	f.r.Snapshot = s.store().Snapshot
}

func (f *fixture) drains(t *testing.T) []operationsapi.SeedDrain {
	t.Helper()
	list := &operationsapi.SeedDrainList{}
	require.NoError(t, f.c.List(context.Background(), list))
	return list.Items
}

func newScaleInFixture(t *testing.T, s *spreadSet, sa *autoscalingapi.SeedAutoscaler) *fixture {
	objs := append(s.objects(), managedSeedSet(int32(len(s.seeds))), sa)
	return newFixture(t, s.store(), nil, objs...)
}

// A set of three seeds holding 4, 1 and 3 Shoots, at most 60% used: two
// would do. The scale-in waits for the scale-down window, then drains the
// replica with the fewest Shoots with a SeedDrain of its own, holds the
// replicas while it is not empty, lowers them once it is, keeps the seed
// cordoned until Gardener deleted it, and a second scale-in waits for the
// window again and never goes below minReplicas.
func TestScaleInDrainsThenLowersReplicas(t *testing.T) {
	s := newSpreadSet(4, 1, 3)
	sa := seedAutoscaler(1, 5)
	sa.Spec.Metrics[0].Resource.Target.AverageUtilization = ptr.To[int32](90)
	f := newScaleInFixture(t, s, sa)

	got, _, err := f.sync(t)
	require.NoError(t, err)
	require.NotNil(t, got.Status.ScaleIn)
	assert.Equal(t, autoscalingapi.ScaleInWaiting, got.Status.ScaleIn.Phase)
	assert.Equal(t, "aws-1", got.Status.ScaleIn.Replica)
	assert.Equal(t, ReasonScaleInWaiting, got.Status.Reason)
	assert.Contains(t, got.Status.Message, "scale-down stabilization window")
	assert.Empty(t, f.drains(t), "no SeedDrain before the window has passed")
	assert.Equal(t, int32(3), f.replicas(t))

	f.now = f.now.Add(31 * time.Minute)
	got, _, err = f.sync(t)
	require.NoError(t, err)
	require.NotNil(t, got.Status.ScaleIn)
	assert.Equal(t, autoscalingapi.ScaleInDraining, got.Status.ScaleIn.Phase)
	assert.Equal(t, ReasonDrainingForScaleIn, got.Status.Reason)
	assert.Equal(t, []autoscalingapi.ScaleInMove{{Shoot: "garden-dev/aws-1-shoot-0", To: "aws-2"}}, got.Status.ScaleIn.Moves)
	assert.Equal(t, int32(3), f.replicas(t), "not lowered while the replica holds Shoots")
	drains := f.drains(t)
	require.Len(t, drains, 1)
	d := drains[0]
	assert.Equal(t, "scale-in-aws-1", d.Name)
	assert.Equal(t, "aws-1", d.Spec.SeedName)
	assert.Equal(t, string(sa.UID), d.Labels[LabelScaleInOwner])
	assert.Equal(t, ns+"/"+saName, d.Annotations[AnnotationScaleInOwner])
	assert.False(t, d.Spec.DryRun)
	assert.Contains(t, reasons(f.events.take()), "Normal "+ReasonDrainingForScaleIn)

	f.now = f.now.Add(time.Minute)
	_, _, err = f.sync(t)
	require.NoError(t, err)
	assert.Len(t, f.drains(t), 1, "one SeedDrain per scale-in")
	assert.Equal(t, int32(3), f.replicas(t))

	// The drain moved the Shoot: the replica is empty, the replicas go down.
	s.moveAll(t, f, "aws-1", "aws-2", f.now)
	f.now = f.now.Add(time.Minute)
	got, _, err = f.sync(t)
	require.NoError(t, err)
	assert.Equal(t, int32(2), f.replicas(t))
	assert.Equal(t, ReasonScaledDown, got.Status.Reason)
	require.NotNil(t, got.Status.ScaleIn)
	assert.Equal(t, autoscalingapi.ScaleInRemoving, got.Status.ScaleIn.Phase)
	assert.Len(t, f.drains(t), 1, "the seed stays cordoned until Gardener has deleted it")

	f.now = f.now.Add(time.Minute)
	_, _, err = f.sync(t)
	require.NoError(t, err)
	assert.Len(t, f.drains(t), 1)

	s.without(f, "aws-1")
	f.now = f.now.Add(time.Minute)
	got, _, err = f.sync(t)
	require.NoError(t, err)
	assert.Empty(t, f.drains(t), "the seed is gone, and with it its SeedDrain")
	// A second scale-in: aws-2 holds a Shoot moved a few minutes ago, so
	// aws-0 is the one; the scale-down window, started afresh by the last
	// scale, holds it.
	require.NotNil(t, got.Status.ScaleIn)
	assert.Equal(t, autoscalingapi.ScaleInWaiting, got.Status.ScaleIn.Phase)
	assert.Equal(t, "aws-0", got.Status.ScaleIn.Replica)
	assert.Equal(t, int32(2), f.replicas(t))
}

// The floor: no scale-in below minReplicas.
func TestScaleInNeverBelowMinReplicas(t *testing.T) {
	s := newSpreadSet(4, 1, 3)
	sa := seedAutoscaler(3, 5)
	f := newScaleInFixture(t, s, sa)
	for range 3 {
		got, _, err := f.sync(t)
		require.NoError(t, err)
		assert.Nil(t, got.Status.ScaleIn)
		f.now = f.now.Add(time.Hour)
	}
	assert.Empty(t, f.drains(t))
	assert.Equal(t, int32(3), f.replicas(t))
}

// Dry-run shows the whole plan in the status and creates no SeedDrain.
func TestScaleInDryRun(t *testing.T) {
	s := newSpreadSet(4, 1, 3)
	sa := seedAutoscaler(1, 5)
	sa.Spec.DryRun = true
	f := newScaleInFixture(t, s, sa)
	_, _, err := f.sync(t)
	require.NoError(t, err)
	f.now = f.now.Add(31 * time.Minute)
	got, _, err := f.sync(t)
	require.NoError(t, err)
	require.NotNil(t, got.Status.ScaleIn)
	assert.Equal(t, autoscalingapi.ScaleInDryRun, got.Status.ScaleIn.Phase)
	assert.Equal(t, ReasonDryRunScaleIn, got.Status.Reason)
	assert.Equal(t, &autoscalingapi.ScaleInStatus{Phase: autoscalingapi.ScaleInDryRun, Replica: "aws-1", Replicas: 2, Shoots: 1,
		Moves:   []autoscalingapi.ScaleInMove{{Shoot: "garden-dev/aws-1-shoot-0", To: "aws-2"}},
		Message: "dry run: would drain aws-1 (1 to move), then 3 -> 2 replicas; no SeedDrain is created"}, got.Status.ScaleIn)
	assert.Empty(t, f.drains(t))
	assert.Equal(t, int32(3), f.replicas(t))
	assert.Equal(t, []string{"Normal " + ReasonDryRunScaleIn}, reasons(f.events.take()), "once")
	f.now = f.now.Add(time.Minute)
	_, _, err = f.sync(t)
	require.NoError(t, err)
	assert.Empty(t, f.events.take(), "a plan that lasts is recorded once")
}

// A scale-in whose SeedDrain is stuck (Blocked) is called off with a
// warning, and the next replica is chosen instead of the same one again.
func TestScaleInStuckDrainIsCalledOff(t *testing.T) {
	s := newSpreadSet(4, 1, 3)
	sa := seedAutoscaler(1, 5)
	f := newScaleInFixture(t, s, sa)
	_, _, err := f.sync(t)
	require.NoError(t, err)
	f.now = f.now.Add(31 * time.Minute)
	_, _, err = f.sync(t)
	require.NoError(t, err)
	drains := f.drains(t)
	require.Len(t, drains, 1)
	d := drains[0]
	d.Status.Phase, d.Status.Message = operationsapi.PhaseBlocked, "garden-dev/aws-1-shoot-0: migration failed"
	require.NoError(t, f.c.Update(context.Background(), &d))
	f.events.take()

	f.now = f.now.Add(time.Minute)
	got, _, err := f.sync(t)
	require.NoError(t, err)
	evs := f.events.take()
	assert.Contains(t, reasons(evs), "Warning "+ReasonScaleInDrainStuck)
	drains = f.drains(t)
	require.Len(t, drains, 1, "the stuck one deleted, the next replica's created")
	assert.Equal(t, "aws-2", drains[0].Spec.SeedName)
	require.NotNil(t, got.Status.ScaleIn)
	assert.Equal(t, "aws-2", got.Status.ScaleIn.Replica)

	f.now = f.now.Add(time.Minute)
	_, _, err = f.sync(t)
	require.NoError(t, err)
	assert.NotContains(t, reasons(f.events.take()), "Warning "+ReasonScaleInDrainStuck, "warned once")
}

// A scale-in the targets no longer allow is called off: its SeedDrain is
// deleted (the seed takes Shoots again) and an event says why.
func TestScaleInCancelledWhenTheTargetsNeedTheReplica(t *testing.T) {
	s := newSpreadSet(4, 1, 3)
	sa := seedAutoscaler(1, 5)
	f := newScaleInFixture(t, s, sa)
	_, _, err := f.sync(t)
	require.NoError(t, err)
	f.now = f.now.Add(31 * time.Minute)
	_, _, err = f.sync(t)
	require.NoError(t, err)
	require.Len(t, f.drains(t), 1)
	f.events.take()

	// Pending Shoots arrive that need every seed.
	var pending []*api.Shoot
	for i := range 8 {
		pending = append(pending, shootObj(fmt.Sprintf("new-%d", i), ""))
	}
	f.r.Pending = func() []*api.Shoot { return pending }
	f.now = f.now.Add(time.Minute)
	got, _, err := f.sync(t)
	require.NoError(t, err)
	assert.Empty(t, f.drains(t))
	assert.Nil(t, got.Status.ScaleIn)
	assert.Contains(t, reasons(f.events.take()), "Normal "+ReasonScaleInCancelled)
}

// When the targets would hold with one replica fewer but no replica can be
// emptied, the status says why for each replica tried: without it an
// operator sees only that every seed holds Shoots.
func TestScaleInRefusedSaysWhyForEachReplica(t *testing.T) {
	s := newSpreadSet(1, 1, 1)
	for _, sh := range s.shoots {
		sh.Annotations = map[string]string{operationsapi.AnnotationNoDrain: "true"}
	}
	sa := seedAutoscaler(1, 5)
	sa.Spec.Metrics[0].Resource.Target.AverageUtilization = ptr.To[int32](90)
	f := newScaleInFixture(t, s, sa)

	got, _, err := f.sync(t)
	require.NoError(t, err)
	assert.Nil(t, got.Status.ScaleIn)
	assert.Empty(t, f.drains(t))
	for _, seed := range []string{"aws-0", "aws-1", "aws-2"} {
		assert.Contains(t, got.Status.Message, seed+": ")
	}
	assert.Contains(t, got.Status.Message, "no scale-in by drain: ")
	assert.Contains(t, got.Status.Message, "opted out")
}
