package plan

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/landscapegen"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// randomLandscape is a generated landscape of n seeds with random
// allocatable (some without) and random Shoots on them, which it returns
// too.
func randomLandscape(rng *rand.Rand, n int) (*placement.Snapshot, []*api.Shoot) {
	objs := []client.Object{landscapegen.CloudProfile(), landscapegen.Project(), landscapegen.RegionConfig()}
	for i := range n {
		s := landscapegen.Seed(i)
		switch rng.IntN(5) {
		case 0:
			s.Status.Allocatable = nil
		default:
			s.Status.Allocatable = corev1.ResourceList{api.ResourceShoots: *resource.NewQuantity(int64(rng.IntN(8)), resource.DecimalSI)}
		}
		objs = append(objs, s)
	}
	var shoots []*api.Shoot
	for i := range rng.IntN(4 * n) {
		s := landscapegen.ExistingShoot(i*(1+rng.IntN(3)), n)
		objs = append(objs, s)
		shoots = append(shoots, s)
	}
	store := cache.NewStore(cache.Options{})
	store.Load(objs)
	return store.Snapshot(), shoots
}

func randomOptions(rng *rand.Rand) placement.Options {
	opts := placement.Options{Strategy: []placement.Strategy{placement.SameRegion, placement.MinimalDistance}[rng.IntN(2)]}
	if rng.IntN(2) == 0 {
		p := &placement.Profile{DefaultCapacity: int64(rng.IntN(10))}
		for _, name := range placement.ScorerNames {
			if rng.IntN(2) == 0 {
				p.Scorers = append(p.Scorers, placement.WeightedScorer{Name: name, Weight: 1 + rng.IntN(placement.MaxWeight)})
			}
		}
		if len(p.Scorers) > 0 {
			opts.Scoring = p
		}
	}
	return opts
}

// TestHeadroomFastMatchesPlain holds the fast path to its specification:
// filling the chosen seed at once counts what placing copies one by one
// counts, whatever the strategy, profile, limits and fill levels.
func TestHeadroomFastMatchesPlain(t *testing.T) {
	nonZero, limited := 0, 0
	for i := range 300 {
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		snap, _ := randomLandscape(rng, 1+rng.IntN(90))
		opts := randomOptions(rng)
		shoot := landscapegen.NewShoot("template")
		shoot.Spec.Region = landscapegen.Regions[rng.IntN(len(landscapegen.Regions))]
		if rng.IntN(3) == 0 {
			shoot.Spec.Tolerations = nil
		}
		limit := 1 + rng.IntN(300)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			fast, err := Headroom(snap, shoot, opts, limit)
			require.NoError(t, err)
			plain := headroomPlain(NewView(snap, nil), newShootLike(shoot, shoot.Name), opts, limit)
			assert.Equal(t, plain, fast, "seeds %d, limit %d, options %+v", len(snap.Seeds), limit, opts)
			if plain > 0 {
				nonZero++
			}
			if plain == limit {
				limited++
			}
		})
	}
	// The landscapes must exercise both endings: out of room and the limit.
	assert.Greater(t, nonZero-limited, 50, "cases that ran out of room")
	assert.Greater(t, limited, 20, "cases stopped by the limit")
}

func TestHeadroom(t *testing.T) {
	snap := landscape([]*api.Seed{seed("a", "eu-west-1", 3), seed("b", "eu-west-1", -1), seed("us", "us-east-1", 5)}, shootsOn("a", "a", 1))
	tests := []struct {
		name  string
		limit int
		want  int
	}{
		{"a seed without allocatable takes up to the limit", 50, 50},
		{"limit 1", 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Headroom(snap, shoot("new", ""), sameRegion, tt.limit)
			require.NoError(t, err)
			assert.Equal(t, tt.want, n)
		})
	}

	bounded := landscape([]*api.Seed{seed("a", "eu-west-1", 3), seed("c", "eu-west-1", 4), seed("us", "us-east-1", 5)}, shootsOn("a", "a", 1))
	n, err := Headroom(bounded, shoot("new", ""), sameRegion, 1000)
	require.NoError(t, err)
	assert.Equal(t, 2+4, n, "SameRegion: the us-east-1 seed does not count")
	n, err = Headroom(bounded, shoot("new", ""), placement.Options{Strategy: placement.MinimalDistance}, 1000)
	require.NoError(t, err)
	assert.Equal(t, 2+4+5, n, "MinimalDistance goes farther once the nearest seeds are full")
	assert.Equal(t, int64(1), bounded.Usage(bounded.Seeds[0]), "the snapshot is left as it was")

	_, err = Headroom(bounded, nil, sameRegion, 1)
	assert.EqualError(t, err, "headroom: no Shoot to copy")
	_, err = Headroom(bounded, shoot("new", ""), sameRegion, 0)
	assert.EqualError(t, err, "headroom: limit 0: must be at least 1")
}

// TestSoftHeadroomIsRoomUnderSoftLimits holds SoftHeadroom to its meaning:
// the headroom of the same landscape with each seed's allocatable lowered
// to its soft limit and no soft limits left, on generated landscapes with
// a configured percentage, seeds' own annotations, or neither. Without
// soft limits it is Headroom.
func TestSoftHeadroomIsRoomUnderSoftLimits(t *testing.T) {
	differs := 0
	for i := range 200 {
		rng := rand.New(rand.NewPCG(uint64(i), 39))
		snap, _ := randomLandscape(rng, 1+rng.IntN(60))
		opts := randomOptions(rng)
		if rng.IntN(4) > 0 {
			opts.Policies = &placement.Policies{SoftLimitPercent: rng.IntN(101)}
		}
		annotated := *snap
		annotated.Seeds = nil
		for _, s := range snap.Seeds {
			obj := s.Object.DeepCopy()
			if rng.IntN(4) == 0 {
				obj.Annotations = map[string]string{api.AnnotationSeedSoftLimitPercent: fmt.Sprint(rng.IntN(101))}
			}
			annotated.Seeds = append(annotated.Seeds, placement.NewSeed(obj))
		}
		// The same landscape held to the soft limits by its allocatable.
		held := annotated
		held.Seeds = nil
		for _, s := range annotated.Seeds {
			obj := s.Object.DeepCopy()
			delete(obj.Annotations, api.AnnotationSeedSoftLimitPercent)
			if soft, ok := opts.Policies.SoftLimit(s); ok {
				obj.Status.Allocatable = corev1.ResourceList{api.ResourceShoots: *resource.NewQuantity(soft, resource.DecimalSI)}
			}
			held.Seeds = append(held.Seeds, placement.NewSeed(obj))
		}
		// Usage is by seed name, so it follows the copies.
		usage := map[string]int64{}
		for _, s := range snap.Seeds {
			if snap.Usage != nil {
				usage[s.Name] = snap.Usage(s)
			}
		}
		byName := func(s *placement.Seed) int64 { return usage[s.Name] }
		annotated.Usage, held.Usage = byName, byName
		shoot := landscapegen.NewShoot("template")
		shoot.Spec.Region = landscapegen.Regions[rng.IntN(len(landscapegen.Regions))]
		limit := 1 + rng.IntN(300)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			soft, err := SoftHeadroom(&annotated, shoot, opts, limit)
			require.NoError(t, err)
			noSoft := opts
			noSoft.Policies = nil
			want, err := Headroom(&held, shoot, noSoft, limit)
			require.NoError(t, err)
			assert.Equal(t, want, soft, "room under the soft limits")
			hard, err := Headroom(&annotated, shoot, opts, limit)
			require.NoError(t, err)
			assert.LessOrEqual(t, soft, hard, "the soft count never exceeds the hard one")
			if !HasSoftLimits(&annotated, opts.Policies) {
				assert.Equal(t, hard, soft, "without soft limits the two are one")
			}
			if soft != hard {
				differs++
			}
		})
	}
	assert.Greater(t, differs, 20, "landscapes where the soft limits change the count")
}
