package seedscale

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// full is a set of n member seeds in eu-west-1 with allocatable alloc,
// each holding used Shoots.
func full(n int, alloc, used int64) *world {
	w := &world{model: seed("model", "eu-west-1", alloc, true)}
	for i := range n {
		s := seed("set-"+string(rune('a'+i)), "eu-west-1", alloc, true)
		w.seeds = append(w.seeds, s)
		w.shoots = append(w.shoots, shoots(s.Name, "eu-west-1", s.Name, int(used))...)
	}
	return w
}

func TestRecommendTargets(t *testing.T) {
	profiles := map[string]*api.Shoot{"small": shoot("small", "eu-west-1", "")}
	t.Run("utilization: 27 of 30 used, target 60% needs 5 seeds of 10", func(t *testing.T) {
		in := full(3, 10, 9).input(spec(1, 10, utilization(60)))
		rec, err := Recommend(in)
		require.NoError(t, err)
		assert.Equal(t, int32(5), rec.Desired)
		assert.Equal(t, ReasonScaleUp, rec.Reason)
		assert.Equal(t, "set garden/set: 3 -> 5, to keep the shoots utilization at most 60% (aws eu-west-1)", rec.Message)
		require.Len(t, rec.Metrics, 1)
		assert.Equal(t, MetricResult{Type: "Resource", Name: "shoots", Target: "shoots utilization at most 60% of allocatable",
			Current: "90% (27 of 30 allocatable)", Replicas: 5, Met: true}, rec.Metrics[0])
	})
	t.Run("average value: 24 Shoots, at most 5 per seed needs 5 seeds", func(t *testing.T) {
		rec, err := Recommend(full(3, 10, 8).input(spec(1, 10, averageValue(5))))
		require.NoError(t, err)
		assert.Equal(t, int32(5), rec.Desired)
		assert.Equal(t, "8.0 Shoots per seed (24 on 3)", rec.Metrics[0].Current)
	})
	t.Run("headroom: full set, room for 15 more needs two new seeds of 10", func(t *testing.T) {
		in := full(3, 10, 10).input(spec(1, 10, headroom("small", 15)))
		in.Profiles = profiles
		rec, err := Recommend(in)
		require.NoError(t, err)
		assert.Equal(t, int32(5), rec.Desired)
		assert.Equal(t, "set garden/set: 3 -> 5, to keep 15 more Shoots like small placeable (aws eu-west-1)", rec.Message)
		assert.Equal(t, "0 more Shoots placeable", rec.Metrics[0].Current)
	})
	t.Run("headroom held by seeds outside the set: no scale-up", func(t *testing.T) {
		w := full(2, 10, 10)
		w.seeds = append(w.seeds, seed("other", "eu-west-1", 50, false))
		in := w.input(spec(1, 10, headroom("small", 20)))
		in.Profiles = profiles
		rec, err := Recommend(in)
		require.NoError(t, err)
		assert.Equal(t, int32(2), rec.Desired)
		assert.Equal(t, ReasonSteady, rec.Reason)
	})
	t.Run("pending Shoots count even at 100%: 25 pending need 3 more seeds", func(t *testing.T) {
		w := full(3, 10, 10)
		w.pending = shoots("new", "eu-west-1", "", 25)
		rec, err := Recommend(w.input(spec(1, 10, utilization(100))))
		require.NoError(t, err)
		assert.Equal(t, int32(6), rec.Desired)
		assert.Equal(t, 25, rec.PendingPlaced)
		assert.Equal(t, 0, rec.PendingUnplaced)
		assert.Contains(t, rec.Message, "; 25 pending Shoots would go to the new seeds")
	})
}

func TestRecommendNewSeedsWouldNotHelp(t *testing.T) {
	cases := []struct {
		name  string
		model *api.Seed
		like  *api.Shoot
		why   string
		code  placement.ReasonCode
	}{
		{"taint", seed("model", "eu-west-1", 10, true, tainted), shoot("small", "eu-west-1", ""),
			"shoot does not tolerate the seed's taints", placement.TaintNotTolerated},
		{"region", seed("model", "us-east-1", 10, true), shoot("small", "eu-west-1", ""),
			"SameRegion: provider type or region differs from the shoot's", placement.RegionMismatch},
		{"selector", seed("model", "eu-west-1", 10, true), func() *api.Shoot {
			s := shoot("small", "eu-west-1", "")
			s.Spec.SeedSelector = &api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}}
			return s
		}(), "labels do not match the Shoot's seed selector", placement.ShootSelectorMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := full(3, 10, 10)
			w.model = c.model
			in := w.input(spec(1, 10, headroom("small", 5)))
			in.Profiles = map[string]*api.Shoot{"small": c.like}
			rec, err := Recommend(in)
			require.NoError(t, err)
			assert.Equal(t, int32(3), rec.Desired, "no scale-up")
			assert.False(t, rec.Short)
			assert.Equal(t, ReasonNewSeedsWouldNotHelp, rec.Reason)
			assert.Contains(t, rec.Metrics[0].WouldNotHelp, c.why)
			assert.Equal(t, c.code, rec.Metrics[0].WouldNotHelpCode)
			assert.Equal(t, "set garden/set: 3 -> 3: new seeds of the set would not take Shoots like small: "+rec.Metrics[0].WouldNotHelp, rec.Message)
		})
	}
}

func TestRecommendBounds(t *testing.T) {
	t.Run("max: short at the maximum", func(t *testing.T) {
		rec, err := Recommend(full(3, 10, 10).input(spec(1, 4, utilization(50))))
		require.NoError(t, err)
		assert.Equal(t, int32(4), rec.Desired)
		assert.True(t, rec.Short)
		assert.False(t, rec.Metrics[0].Met)
		assert.Equal(t, ReasonAtMaxReplicas, rec.Reason)
		assert.Equal(t, "set garden/set: 3 -> 4 (maxReplicas) and still short: shoots utilization at most 50% of allocatable (now 100% (30 of 30 allocatable))", rec.Message)
	})
	t.Run("min: an idle set keeps minReplicas", func(t *testing.T) {
		w := full(5, 10, 0)
		rec, err := Recommend(w.input(spec(4, 10, utilization(80))))
		require.NoError(t, err)
		assert.Equal(t, int32(4), rec.Desired)
		assert.Equal(t, ReasonScaleDown, rec.Reason)
	})
	t.Run("min above the set: grows to it", func(t *testing.T) {
		rec, err := Recommend(full(1, 10, 0).input(spec(3, 10, utilization(80))))
		require.NoError(t, err)
		assert.Equal(t, int32(3), rec.Desired)
		assert.Equal(t, "set garden/set: 1 -> 3, to keep minReplicas (aws eu-west-1)", rec.Message)
	})
	t.Run("maxReplicas past the limit is refused", func(t *testing.T) {
		_, err := Recommend(full(1, 10, 0).input(spec(1, 100_000, utilization(80))))
		assert.EqualError(t, err, "spec.maxReplicas 100000: at most 1000")
	})
	t.Run("invalid bounds are refused naming the fields", func(t *testing.T) {
		_, err := Recommend(full(1, 10, 0).input(spec(5, 3, utilization(80))))
		assert.EqualError(t, err, "spec.minReplicas 5 and spec.maxReplicas 3: want 0 <= minReplicas <= maxReplicas and maxReplicas >= 1")
	})
}

func TestRecommendNeverBelowSeedsWithShoots(t *testing.T) {
	w := full(5, 10, 0)
	// set-a and set-c hold Shoots; set-e is protected.
	w.shoots = append(shoots("a", "eu-west-1", "set-a", 1), shoots("c", "eu-west-1", "set-c", 1)...)
	w.protected = map[string]bool{"set-e": true}
	rec, err := Recommend(w.input(spec(1, 10, utilization(90))))
	require.NoError(t, err)
	assert.Equal(t, int32(3), rec.Floor)
	assert.Equal(t, int32(3), rec.Desired)
	assert.Equal(t, ReasonScaleDown, rec.Reason)

	w.replicas = 3
	rec, err = Recommend(w.input(spec(1, 10, utilization(90))))
	require.NoError(t, err)
	assert.Equal(t, ReasonSteady, rec.Reason)
	assert.Equal(t, "set garden/set: 3 -> 3: every target holds, and no fewer: 3 seeds hold Shoots or are protected", rec.Message)
}

// A replica registered but not ready yet is counted as the seed it will
// become, so a scale-up under way is not repeated.
func TestRecommendCountsStartingReplicas(t *testing.T) {
	w := full(3, 10, 10)
	w.seeds = append(w.seeds, seed("set-new", "eu-west-1", -1, true, notReady))
	w.pending = shoots("new", "eu-west-1", "", 8)
	rec, err := Recommend(w.input(spec(1, 10, utilization(100))))
	require.NoError(t, err)
	assert.Equal(t, int32(4), rec.Desired)
	assert.Equal(t, 8, rec.PendingPlaced)
}

// Replicas asked for but not registered yet are modelled too.
func TestRecommendCountsReplicasNotRegistered(t *testing.T) {
	w := full(3, 10, 10)
	w.replicas = 4
	w.pending = shoots("new", "eu-west-1", "", 8)
	rec, err := Recommend(w.input(spec(1, 10, utilization(100))))
	require.NoError(t, err)
	assert.Equal(t, int32(4), rec.Current)
	assert.Equal(t, int32(4), rec.Desired)
	assert.Equal(t, ReasonSteady, rec.Reason)
}

// On generated landscapes the recommendation stays in its bounds, never
// below the seeds that hold Shoots, and every metric it calls met holds
// at its replicas.
func TestRecommendGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 1))
	for i := range 200 {
		w := generated(r)
		minR, maxR := int32(r.IntN(3)), int32(1+r.IntN(10))
		minR = min(minR, maxR)
		in := w.input(spec(minR, maxR, utilization(int32(50+r.IntN(51))), averageValue(int32(3+r.IntN(10)))))
		rec, err := Recommend(in)
		require.NoError(t, err, "landscape %d", i)
		assert.GreaterOrEqual(t, rec.Desired, rec.Floor, "landscape %d", i)
		assert.GreaterOrEqual(t, rec.Desired, minR, "landscape %d", i)
		assert.LessOrEqual(t, rec.Desired, max(maxR, rec.Floor), "landscape %d", i)
		if rec.Short {
			assert.Equal(t, max(maxR, rec.Floor), rec.Desired, "landscape %d: short only at the maximum", i)
		}
		ms, err := metrics(in.Spec.Metrics, &metricEnv{})
		require.NoError(t, err)
		s := newSim(&in)
		o, err := s.run(rec.Desired, true)
		require.NoError(t, err)
		for j, m := range rec.Metrics {
			v, err := ms[j].read(o, in.Options)
			require.NoError(t, err)
			if m.Met {
				assert.True(t, v.met, "landscape %d metric %d at %d", i, j, rec.Desired)
			}
		}
		removed := s.removable[:max(0, s.registered()-rec.Desired)]
		for _, seed := range in.Snapshot.Seeds {
			if slices.Contains(removed, seed.Name) {
				assert.Zero(t, in.Snapshot.Usage(seed), "landscape %d: removed seed %s held Shoots", i, seed.Name)
			}
		}
	}
}

// A Headroom target that holds needs no scale-up, whether or not new seeds
// of the set would take such Shoots: it is met, not "would not help".
func TestRecommendHeadroomMetElsewhere(t *testing.T) {
	w := full(2, 10, 10)
	w.model = seed("model", "eu-west-1", 10, true, tainted)
	w.seeds = append(w.seeds, seed("other", "eu-west-1", 5, false))
	in := w.input(spec(1, 10, headroom("small", 5)))
	in.Profiles = map[string]*api.Shoot{"small": shoot("small", "eu-west-1", "")}
	rec, err := Recommend(in)
	require.NoError(t, err)
	assert.Equal(t, ReasonSteady, rec.Reason)
	assert.Equal(t, int32(2), rec.Desired)
	assert.Equal(t, MetricResult{Type: "Headroom", Name: "small", Target: "at least 5 more Shoots like small placeable",
		Current: "5 more Shoots placeable", Replicas: 2, Met: true}, rec.Metrics[0])
}

// An inline template is named by its metadata.name.
func TestRecommendInlineTemplate(t *testing.T) {
	in := full(3, 10, 10).input(spec(1, 10, autoscalingapi.MetricSpec{
		Type: autoscalingapi.HeadroomMetricSourceType,
		Headroom: &autoscalingapi.HeadroomMetricSource{MinShoots: 1, Shoot: &runtime.RawExtension{Raw: []byte(
			`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","metadata":{"name":"tiny","namespace":"garden-dev"},` +
				`"spec":{"cloudProfile":{"kind":"CloudProfile","name":"aws"},"region":"eu-west-1","provider":{"type":"aws","workers":[{"name":"pool"}]}}}`)}},
	}))
	in.DecodeShoot = landscape.DecodeShoot
	rec, err := Recommend(in)
	require.NoError(t, err)
	assert.Equal(t, "set garden/set: 3 -> 4, to keep 1 more Shoot like tiny placeable (aws eu-west-1)", rec.Message)
}

// Short at the maximum because of pending Shoots, the message counts them
// rather than quoting a utilization that reads as met.
func TestRecommendShortNamesStuckPending(t *testing.T) {
	w := full(2, 1, 1)
	w.pending = shoots("new", "eu-west-1", "", 3)
	rec, err := Recommend(w.input(spec(1, 3, utilization(100))))
	require.NoError(t, err)
	assert.Equal(t, ReasonAtMaxReplicas, rec.Reason)
	assert.Equal(t, 2, rec.PendingUnplaced)
	assert.Equal(t, "set garden/set: 2 -> 3 (maxReplicas) and still short: 2 pending Shoots that new seeds would take find no seed; "+
		"shoots utilization at most 100% of allocatable (now 100% (2 of 2 allocatable))", rec.Message)
}
