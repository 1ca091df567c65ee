package placement_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/seedwarden/seedwarden/internal/landscapegen"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// Generators for what the fast path's narrowing (fast_narrow.go) turns on:
// region configs whose least distance several regions share, that leave the
// Shoot's region out, list no region or do not parse, and scoring profiles
// with and without RegionDistance.

// genRegionConfig is landscapegen's region config, or one with random
// tables for random regions.
func genRegionConfig(r *rand.Rand) *placement.RegionConfig {
	cm := landscapegen.RegionConfig()
	if r.IntN(3) == 0 {
		return placement.NewRegionConfig(cm)
	}
	cm.Data = map[string]string{}
	for _, from := range landscapegen.Regions {
		text := ""
		switch r.IntN(8) {
		case 0:
			continue // no table: name distance
		case 1:
			text = "{}" // a table listing no region
		case 2:
			text = "nowhere: x" // does not parse: step 11 fails
		default:
			for _, to := range landscapegen.Regions {
				if r.IntN(3) > 0 {
					// Small distances, so several regions tie for the least.
					text += fmt.Sprintf("%s: %d\n", to, r.IntN(3)-r.IntN(2))
				}
			}
		}
		cm.Data[from] = text
	}
	return placement.NewRegionConfig(cm)
}

// genProfiles are the scoring profiles the generated cases decide under.
var genProfiles = []*placement.Profile{
	nil, nil, nil,
	{Scorers: []placement.WeightedScorer{{Name: placement.ScoreLeastAllocated, Weight: 2}, {Name: placement.ScoreProjectSpread, Weight: 1}}, DefaultCapacity: 100},
	{Scorers: []placement.WeightedScorer{{Name: placement.ScoreRegionDistance, Weight: 3}, {Name: placement.ScoreLeastShoots, Weight: 1}}},
}
