package e2e

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/operationsapi"
	"github.com/seedwarden/seedwarden/internal/pending"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
)

// TestAutoscalerScalesUpForPendingShoots: a ManagedSeedSet of one seed with
// room for 6 Shoots, and a flood of 9 Shoots that only its seeds may take:
// 6 fill the seed, 3 wait. The autoscaler (utilization target 50%) raises
// the replicas through the scale subresource from 1 to the 3 seeds that
// keep 9 Shoots at half of their allocatable, in one step; the player
// registers the new replicas' Seeds, and the retry controller binds the
// pending Shoots to them: every Shoot ends on a seed of the set, none over
// its allocatable. The SeedAutoscaler's status and its event say so.
//
// The new seeds keep room to spare (the target is 50%);
// TestAutoscalerScaleUpIntoExactRoom scales up into exactly the room
// needed.
func TestAutoscalerScalesUpForPendingShoots(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace)
	ctx := context.Background()
	const set, perSeed, flood = "e2e-scaleup", 6, 9
	// The SeedAutoscaler comes once the flood has settled, so that its
	// first sync sees every pending Shoot.
	key, player, shoots := st.floodOneSeedSet(t, set, perSeed, flood)
	st.createSeedAutoscaler(t, seedAutoscaler(set, set, 1, 6, 50, time.Minute))
	st.logAutoscalerDecisions(t, set)
	eventually(t, 30*time.Second, func() error {
		if err := player.Err(); err != nil {
			return fmt.Errorf("the set's controller: %w", err)
		}
		return allBound(t, shoots)
	}, "the pending Shoots are not all bound to new seeds of %s", set)

	// The set's controller reports the replicas it registered after the
	// fact.
	assert.NoError(t, poll(ctx, 5*time.Second, eventuallyInterval, func() error {
		spec, status, err := st.scaleOf(ctx, key)
		if err == nil && (spec != 3 || status != 3) {
			err = fmt.Errorf("managedseedsets/scale spec.replicas %d, status.replicas %d; want 3 (9 Shoots at 50%% of 6 need 3 seeds)", spec, status)
		}
		return err
	}))
	assert.Equal(t, []string{set + "-0", set + "-1", set + "-2"}, player.Created())
	usage := st.setUsage(t, shoots)
	onNew := 0
	for seed, n := range usage {
		assert.LessOrEqual(t, n, perSeed, "seed %s holds more Shoots than its allocatable", seed)
		assert.Contains(t, player.Created(), seed, "a Shoot went to a seed outside the set")
		if seed != set+"-0" {
			onNew += n
		}
	}
	assert.Equal(t, flood-perSeed, onNew, "the pending Shoots went to the new seeds: %v", usage)

	sas := st.waitAutoscalerStatus(t, set, func(s autoscalingapi.SeedAutoscalerStatus) error {
		if s.CurrentReplicas != 3 || s.LastScaleTime == nil {
			return fmt.Errorf("currentReplicas %d, lastScaleTime %v", s.CurrentReplicas, s.LastScaleTime)
		}
		return nil
	})
	assert.Equal(t, "the ManagedSeedSet's template (spec.template.spec.gardenlet.config.seedConfig)", sas.Status.NewSeedModel)
	note := st.requireScaleEvent(t, set, "ScaledUp", 1, 3)
	assert.Contains(t, note, "3 pending Shoots would go to the new seeds")
}

// TestAutoscalerScaleUpIntoExactRoom: a set of one seed with room for 2,
// and 6 Shoots only its seeds may take (4 wait). A SeedAutoscaler at 100%
// utilization scales it to 3, and the player registers 2 new seeds with
// room for exactly the 4 pending Shoots. Each pending Shoot is bound within
// 10 s of its seed's ready status being written, though the retry
// controller's backoff is 30 s: the Seed events wake the Shoots the new
// seeds can take (seeds registered together wake different Shoots), and a
// bind refused in a race for a seed's last place is retried within seconds.
func TestAutoscalerScaleUpIntoExactRoom(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace)
	const set, perSeed, flood = "e2e-exact", 2, 6
	const placeToBind = 10 * time.Second
	key, player, shoots := st.floodOneSeedSet(t, set, perSeed, flood)
	waiting := unbound(t, shoots)
	require.Len(t, waiting, flood-perSeed)
	st.createSeedAutoscaler(t, seedAutoscaler(set, set, 1, 6, 100, time.Minute))
	st.logAutoscalerDecisions(t, set)

	binds := st.waitBinds(t, waiting, 60*time.Second)
	for _, k := range waiting {
		b := binds[k]
		ready := player.ReadyAt(b.seed)
		require.False(t, ready.IsZero(), "Shoot %s bound to %s, which the player did not register", k.Name, b.seed)
		took := b.at.Sub(ready)
		t.Logf("Shoot %s bound to %s %s after the seed was ready", k.Name, b.seed, took.Round(10*time.Millisecond))
		assert.LessOrEqual(t, took, placeToBind, "Shoot %s waited for a place that existed on %s", k.Name, b.seed)
	}
	assert.Equal(t, map[string]int{set + "-0": perSeed, set + "-1": perSeed, set + "-2": perSeed}, st.setUsage(t, shoots),
		"the new seeds are exactly full")
	spec, status, err := st.scaleOf(context.Background(), key)
	require.NoError(t, err)
	assert.Equal(t, [2]int32{3, 3}, [2]int32{spec, status}, "managedseedsets/scale spec and status replicas")
	require.NoError(t, player.Err())
}

// TestAutoscalerScalesDownAfterWindow: a set of 4 seeds with room for 2
// Shoots each, all full; then the Shoots are deleted but one on the second
// and one on the fourth seed. The replicas stay 4 for the scale-down
// stabilization window (6 s), then drop to 2, not to the 1 the utilization
// alone asks for: the two seeds that hold Shoots stay, past another window
// (their Shoots opt out of drains; scale-in by drain is
// TestAutoscalerScaleInDrainsOneReplica's). The player removes
// the two empty seeds (the first and the third: Gardener's controller
// removes the lowest ordinal without Shoots), and never has to wait for a
// seed to empty: the autoscaler asked for no replica it could not remove.
func TestAutoscalerScalesDownAfterWindow(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace)
	ctx := context.Background()
	const set, perSeed, window = "e2e-scaledown", 2, 6 * time.Second
	key := st.createManagedSeedSet(t, set, 4, perSeed)
	player := st.startSetPlayer(t, key)
	sizes := map[string]int64{}
	for i := range int32(4) {
		sizes[seedmanagement.ReplicaName(set, i)] = perSeed
	}
	st.waitSetSeeds(t, player, sizes)
	keep, gone := st.fillSetSeeds(t, set, 4, perSeed)
	st.createSeedAutoscaler(t, seedAutoscaler(set, set, 1, 6, 100, window))
	st.logAutoscalerDecisions(t, set)
	st.waitAutoscalerStatus(t, set, func(s autoscalingapi.SeedAutoscalerStatus) error {
		if s.DesiredReplicas != 4 || s.CurrentReplicas != 4 {
			return fmt.Errorf("current %d, desired %d, want 4 and 4 (8 Shoots fill 4 seeds of 2)", s.CurrentReplicas, s.DesiredReplicas)
		}
		return nil
	})

	for _, sh := range gone {
		require.NoError(t, st.deleteShoot(ctx, sh))
	}
	deleted := time.Now()
	// The highest recommendation of the window wins: 4 until the last
	// sample taken before the deletions leaves it (one sync period early
	// at most).
	st.requireReplicasHeld(t, key, 4, deleted.Add(window-autoscalerSyncPeriod-500*time.Millisecond),
		"scaled down within the %s window after the deletions", window)
	eventually(t, window+15*time.Second, func() error {
		spec, status, err := st.scaleOf(ctx, key)
		if err == nil && (spec != 2 || status != 2) {
			err = fmt.Errorf("scale spec.replicas %d, status.replicas %d, want 2", spec, status)
		}
		return err
	}, "the replicas do not drop to the 2 seeds that hold Shoots")
	t.Logf("scaled down %s after the deletions (window %s)", time.Since(deleted).Round(100*time.Millisecond), window)
	// Never below the seeds that hold Shoots: it stays at 2, past another
	// window (their Shoots opt out of drains, so no scale-in drains one).
	st.requireReplicasHeld(t, key, 2, time.Now().Add(window+3*time.Second), "scaled below the seeds that hold Shoots")
	assert.Equal(t, []removal{{seed: set + "-0"}, {seed: set + "-2"}}, player.Removed(), "the removed seeds held no Shoots")
	assert.Empty(t, player.Blocked(), "the autoscaler asked for fewer replicas than the seeds holding Shoots")
	for name, seed := range keep {
		assert.Equal(t, seed, seedNameOf(t, keyOf(projectNamespace, name)), "Shoot %s moved or was stranded", name)
	}
	st.requireScaleEvent(t, set, "ScaledDown", 4, 2)
}

// TestAutoscalerDryRun: a set of one seed with room for 2, 5 Shoots only
// the set may take (3 wait), and then a SeedAutoscaler with dryRun: its
// status and its one event say it would scale from 1 to 3 and name the set,
// but the scale subresource keeps 1, no seed registers, and the 3 Shoots
// stay pending.
func TestAutoscalerDryRun(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace)
	ctx := context.Background()
	const set, perSeed = "e2e-dryrun", 2
	key, player, shoots := st.floodOneSeedSet(t, set, perSeed, 5)
	sas := seedAutoscaler(set, set, 1, 6, 100, time.Minute)
	sas.Spec.DryRun = true
	st.createSeedAutoscaler(t, sas)
	st.logAutoscalerDecisions(t, set)
	got := st.waitAutoscalerStatus(t, set, func(s autoscalingapi.SeedAutoscalerStatus) error {
		if s.DesiredReplicas != 3 || s.CurrentReplicas != 1 {
			return fmt.Errorf("current %d, desired %d, want 1 and 3", s.CurrentReplicas, s.DesiredReplicas)
		}
		return nil
	})
	assert.True(t, strings.HasPrefix(got.Status.Reason, "DryRun"), "reason %q", got.Status.Reason)
	assert.Nil(t, got.Status.LastScaleTime, "a dry run never scales")
	requireNamesSetAndReplicas(t, got.Status.Message, set, 1, 3)
	assert.Contains(t, got.Status.Message, "dry run, spec.replicas stays 1")
	st.requireScaleEvent(t, set, got.Status.Reason, 1, 3)
	// Several sync periods later, nothing has changed.
	time.Sleep(3 * autoscalerSyncPeriod)
	spec, _, err := st.scaleOf(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, int32(1), spec, "dry run wrote the scale subresource")
	assert.Equal(t, []string{set + "-0"}, player.Created())
	assert.Equal(t, map[string]int{set + "-0": perSeed}, st.setUsage(t, shoots), "3 Shoots stay pending")
}

// TestAutoscalerAtMaxReplicasStillShort: a set of one seed with room for
// 2, at most 2 replicas, and 6 Shoots only the set may take (4 wait): the
// autoscaler scales to its maximum, 2, and says that is not enough: reason
// AtMaxReplicas, condition ScalingLimited, one Warning event naming the
// set and the replicas, and seedwarden_autoscaler_short at 1 (the alert's
// signal) next to the current and desired replicas; Shoots stay pending.
func TestAutoscalerAtMaxReplicasStillShort(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace)
	ctx := context.Background()
	const set, perSeed = "e2e-atmax", 2
	key, _, shoots := st.floodOneSeedSet(t, set, perSeed, 6)
	st.createSeedAutoscaler(t, seedAutoscaler(set, set, 1, 2, 100, time.Minute))
	st.logAutoscalerDecisions(t, set)

	got := st.waitAutoscalerStatus(t, set, func(s autoscalingapi.SeedAutoscalerStatus) error {
		if s.CurrentReplicas != 2 || s.Reason != "AtMaxReplicas" {
			return fmt.Errorf("current %d, want 2 and reason AtMaxReplicas", s.CurrentReplicas)
		}
		return nil
	})
	assert.Contains(t, got.Status.Message, "(maxReplicas) and still short")
	limited := meta.FindStatusCondition(got.Status.Conditions, autoscalingapi.ConditionScalingLimited)
	if assert.NotNil(t, limited, "no %s condition", autoscalingapi.ConditionScalingLimited) {
		assert.Equal(t, metav1.ConditionTrue, limited.Status)
		assert.Equal(t, "AtMaxReplicas", limited.Reason)
	}
	st.requireScaleEvent(t, set, "AtMaxReplicas", 1, 2)
	eventually(t, 10*time.Second, func() error {
		return autoscalerGauges(st.metricsURL(), set, map[string]float64{
			"seedwarden_autoscaler_short": 1, "seedwarden_autoscaler_current_replicas": 2, "seedwarden_autoscaler_desired_replicas": 2,
		})
	})
	spec, _, err := st.scaleOf(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, int32(2), spec, "beyond maxReplicas")
	require.Error(t, allBound(t, shoots), "2 seeds of 2 cannot hold 6 Shoots")
}

// autoscalerGauges is nil when the webhook at metricsURL exports want
// (metric name -> value) for SeedAutoscaler garden/name.
func autoscalerGauges(metricsURL, name string, want map[string]float64) error {
	samples, err := scrape(metricsURL)
	if err != nil {
		return err
	}
	got := map[string]float64{}
	for _, smp := range samples {
		if _, ok := want[smp.name]; ok && smp.labels["autoscaler_namespace"] == gardenNamespace && smp.labels["autoscaler"] == name {
			got[smp.name] = smp.value
		}
	}
	if !maps.Equal(got, want) {
		return fmt.Errorf("SeedAutoscaler %s's gauges %v, want %v", name, got, want)
	}
	return nil
}

// fillSetSeeds fills the first seeds replicas of set with perSeed Shoots
// each (named after their seed), bound at CREATE, and returns the Shoots
// that are to stay (the first on every second seed: Shoot -> seed) and the
// others. An operator of its own creates them (system:masters): the
// admin's unconfirmed reservations of earlier tests' Shoots, which the
// capacity webhook counts against reservations.maxPerUser for a few
// seconds, are not this test's.
func (st *suite) fillSetSeeds(t *testing.T, set string, seeds int32, perSeed int) (keep map[string]string, gone []client.Object) {
	t.Helper()
	operator, _ := st.clientAs(t, "e2e-set-filler", "system:masters")
	keep = map[string]string{}
	for i := range seeds {
		seed := seedmanagement.ReplicaName(set, i)
		for j := range perSeed {
			// The Shoots that stay opt out of drains: the seeds that hold
			// them stay, and no scale-in by drain follows the scale-down.
			stay := j == 0 && i%2 == 1
			opts := []shootOpt{onSet(set), withSeed(seed), withName(fmt.Sprintf("%s-%d", seed, j))}
			if stay {
				opts = append(opts, withAnnotation(operationsapi.AnnotationNoDrain, "true"))
			}
			sh := newShoot(t.Name(), opts...)
			require.NoError(t, operator.Create(context.Background(), sh), "Shoot on %s", seed)
			if stay {
				keep[sh.GetName()] = seed
			} else {
				gone = append(gone, sh)
			}
		}
	}
	return keep, gone
}

// requireReplicasHeld requires that set's scale subresource says want for
// spec.replicas at every look (each 100 ms) until until.
func (st *suite) requireReplicasHeld(t *testing.T, set types.NamespacedName, want int32, until time.Time, msgAndArgs ...any) {
	t.Helper()
	for time.Now().Before(until) {
		spec, _, err := st.scaleOf(context.Background(), set)
		require.NoError(t, err)
		require.Equal(t, want, spec, msgAndArgs...)
		time.Sleep(100 * time.Millisecond)
	}
}

// logAutoscalerDecisions logs, when t ends, every distinct reason and
// message the status of SeedAutoscaler garden/name showed meanwhile (read
// every 50 ms): what an operator would have seen, and how the replicas got
// where they are.
func (st *suite) logAutoscalerDecisions(t *testing.T, name string) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []string)
	go func() {
		var seen []string
		for ctx.Err() == nil {
			sas := &autoscalingapi.SeedAutoscaler{}
			if err := st.c.Get(ctx, keyOf(gardenNamespace, name), sas); err == nil && sas.Status.Reason != "" {
				line := fmt.Sprintf("%s: %s", sas.Status.Reason, sas.Status.Message)
				if len(seen) == 0 || seen[len(seen)-1] != line {
					seen = append(seen, line)
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		done <- seen
	}()
	t.Cleanup(func() {
		cancel()
		t.Logf("SeedAutoscaler %s said, in order:\n  %s", name, strings.Join(<-done, "\n  "))
	})
}

// waitSetSeeds waits until the player registered the seeds of sizes (name
// -> allocatable) and the webhook knows each with its allocatable.
func (st *suite) waitSetSeeds(t *testing.T, player *setPlayer, sizes map[string]int64) {
	t.Helper()
	eventually(t, 20*time.Second, func() error {
		if err := player.Err(); err != nil {
			return err
		}
		return knowsSeeds(st.metricsURL(), sizes)
	}, "the set's seeds are not registered and known")
}

// pendingOnSet is nil when n Shoots of keys are bound to seed and each
// other has no seed and a SchedulingFailed event.
func (st *suite) pendingOnSet(ctx context.Context, t *testing.T, keys []types.NamespacedName, seed string, n int) error {
	bound := 0
	for _, k := range keys {
		switch got := seedNameOf(t, k); got {
		case seed:
			bound++
		case "":
			evs, err := st.shootEvents(ctx, k, corev1.EventTypeWarning, pending.ReasonSchedulingFailed)
			if err != nil {
				return err
			}
			if len(evs) == 0 {
				return fmt.Errorf("Shoot %s: no %s event yet", k.Name, pending.ReasonSchedulingFailed)
			}
		default:
			return fmt.Errorf("Shoot %s bound to %s", k.Name, got)
		}
	}
	if bound != n {
		return fmt.Errorf("%d Shoots bound to %s, want %d", bound, seed, n)
	}
	return nil
}

// allBound is nil when every Shoot of keys has a seed.
func allBound(t *testing.T, keys []types.NamespacedName) error {
	var unbound []string
	for _, k := range keys {
		if seedNameOf(t, k) == "" {
			unbound = append(unbound, k.Name)
		}
	}
	if len(unbound) > 0 {
		return fmt.Errorf("%d Shoots without a seed: %v", len(unbound), unbound)
	}
	return nil
}

// setUsage counts the Shoots of keys per seed (the bound ones).
func (st *suite) setUsage(t *testing.T, keys []types.NamespacedName) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, k := range keys {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(shootGVK)
		require.NoError(t, st.c.Get(context.Background(), k, u))
		if seed := seedName(u); seed != "" {
			out[seed]++
		}
	}
	return out
}

// waitAutoscalerStatus waits until the status of SeedAutoscaler garden/name
// passes check, and returns the SeedAutoscaler.
func (st *suite) waitAutoscalerStatus(t *testing.T, name string, check func(autoscalingapi.SeedAutoscalerStatus) error) *autoscalingapi.SeedAutoscaler {
	t.Helper()
	sas := &autoscalingapi.SeedAutoscaler{}
	eventually(t, 30*time.Second, func() error {
		if err := st.c.Get(context.Background(), keyOf(gardenNamespace, name), sas); err != nil {
			return err
		}
		if err := check(sas.Status); err != nil {
			return fmt.Errorf("%w (reason %q, message %q)", err, sas.Status.Reason, sas.Status.Message)
		}
		return nil
	}, "SeedAutoscaler %s", name)
	return sas
}

// requireScaleEvent requires that the one event with reason about
// SeedAutoscaler garden/name names the set and the replicas from and to,
// and returns its note.
func (st *suite) requireScaleEvent(t *testing.T, name, reason string, from, to int32) string {
	t.Helper()
	var notes []string
	eventually(t, 10*time.Second, func() error {
		var list eventsv1.EventList
		if err := st.c.List(context.Background(), &list, client.InNamespace(gardenNamespace)); err != nil {
			return err
		}
		notes = nil
		for _, e := range list.Items {
			if e.Regarding.Kind == "SeedAutoscaler" && e.Regarding.Name == name && e.Reason == reason {
				notes = append(notes, e.Note)
			}
		}
		if len(notes) == 0 {
			return fmt.Errorf("no %s event about SeedAutoscaler %s", reason, name)
		}
		return nil
	})
	require.Len(t, notes, 1, "%s events about SeedAutoscaler %s", reason, name)
	requireNamesSetAndReplicas(t, notes[0], name, from, to)
	t.Logf("%s event: %s", reason, notes[0])
	return notes[0]
}

// requireNamesSetAndReplicas requires that msg names the set (namespace
// garden) and the replicas from and to, as an operator reads it.
func requireNamesSetAndReplicas(t *testing.T, msg, set string, from, to int32) {
	t.Helper()
	require.Contains(t, msg, fmt.Sprintf("set %s/%s: %d -> %d", gardenNamespace, set, from, to))
}
