package placement

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/api"
)

// TestUsageReadOncePerDecision: a decision reads each seed's usage from
// the snapshot at most once, however many steps need it (capacity, least
// used, the scorers), on every path, with the memo grown past its first
// size; and it still chooses by that usage.
func TestUsageReadOncePerDecision(t *testing.T) {
	var seeds []*api.Seed
	usage := map[string]int64{}
	for i := range 300 {
		name := fmt.Sprintf("seed-%03d", i)
		seeds = append(seeds, readySeed(name, withAllocatable(1000)))
		usage[name] = int64(500 - i%250)
	}
	snap := snapshotOf(nil, seeds...)
	reads := map[string]int{}
	snap.Usage = func(s *Seed) int64 { reads[s.Name]++; return usage[s.Name] }
	profile := &Profile{Scorers: []WeightedScorer{{Name: ScoreLeastAllocated, Weight: 1}, {Name: ScoreLeastShoots, Weight: 1}}}
	for _, opts := range []Options{{Strategy: SameRegion}, {Strategy: MinimalDistance, Scoring: profile}} {
		for _, p := range []path{plainPath, explainPath, fastPath} {
			clear(reads)
			d := run(snap, basicShoot(), opts, p)
			require.Equal(t, "seed-249", d.Seed, "path %d", p)
			require.Len(t, reads, 300, "path %d: every seed's capacity is checked", p)
			for name, n := range reads {
				require.Equal(t, 1, n, "path %d: usage of %s read %d times", p, name, n)
			}
		}
	}
}
