package placement

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/landscapegen"
)

// TestBuildIndexReusesRecords: an index built from its predecessor equals
// one built from scratch, buckets included, whatever changed in between (one
// seed replaced, added or removed as the cache does, or arbitrary
// reshuffles, duplicates and truncations, which it does not), and shares
// its predecessor's buckets when only a Seed's pointer changed.
func TestBuildIndexReusesRecords(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pool := make([]*Seed, 60)
	for i := range pool {
		s := landscapegen.Seed(i)
		switch i % 5 {
		case 1:
			s.Status.LastOperation = nil // unusable
		case 2:
			s.Spec.Settings = nil // zone selection leaves it
		case 3:
			s.Spec.Provider.Zones = append(s.Spec.Provider.Zones, "x-1", "x-2", "x-3") // beyond the fingerprints
		}
		pool[i] = NewSeed(s)
	}
	seeds := slices.Clone(pool[:20])
	prev := buildIndex(seeds, nil)
	for i := 0; i < 2000; i++ {
		next := slices.Clone(seeds)
		same := false
		switch r.IntN(7) {
		case 0:
			if len(next) > 0 {
				next[r.IntN(len(next))] = pool[r.IntN(len(pool))]
			}
		case 1:
			next = slices.Insert(next, r.IntN(len(next)+1), pool[r.IntN(len(pool))])
		case 2:
			if len(next) > 0 {
				j := r.IntN(len(next))
				next = slices.Delete(next, j, j+1)
			}
		case 3:
			r.Shuffle(len(next), func(i, j int) { next[i], next[j] = next[j], next[i] })
		case 4:
			next = next[:r.IntN(len(next)+1)]
		case 5:
			next = append(next, next...)
		case 6: // the same seed digested again: the buckets are shared
			if len(next) > 0 {
				j := r.IntN(len(next))
				next[j] = NewSeed(next[j].Object)
				same = true
			}
		}
		if len(next) > 200 {
			next = next[:r.IntN(40)]
		}
		idx := buildIndex(next, prev)
		require.Equal(t, buildIndex(next, nil), idx, "step %d", i)
		if same {
			require.Same(t, prev.buckets, idx.buckets, "step %d", i)
		}
		seeds, prev = next, idx
	}
}

// TestSeedRecUsable: the index skips what isUsable rejects, a deleting seed
// included, so the fast path does not even visit it.
func TestSeedRecUsable(t *testing.T) {
	for _, tt := range []struct {
		name string
		seed *Seed
		want bool
	}{
		{"ready", NewSeed(readySeed("s")), true},
		{"deleting", NewSeed(readySeed("s", deleting)), false},
		{"not ready", NewSeed(readySeed("s", func(s *api.Seed) { s.Status.LastOperation = nil })), false},
	} {
		require.Equal(t, tt.want, newSeedRec(tt.seed).flags&recUsable != 0, tt.name)
	}
}
