package handlers

import (
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedreserve"
)

// With a scoring profile the admission warnings explain the placement:
// the chosen seed and the runner-up with each scorer's score and weight, in
// a warning of its own (the announcing one stays as without a profile).
// The review is the exact bytes of a real CREATE, through the production
// handler. Gardener's rule would take aws-eu1 (equal usage, first by name);
// LeastAllocated prefers aws-eu2, which has more room.
func TestShootMutatorScoresWarning(t *testing.T) {
	const scores = ScoresWarningPrefix +
		"aws-eu2 298 (LeastAllocated 99x2, LeastShoots 100x1) > aws-eu1 280 (LeastAllocated 90x2, LeastShoots 100x1); 2 seeds scored"
	profile := &placement.Profile{Scorers: []placement.WeightedScorer{
		{Name: placement.ScoreLeastAllocated, Weight: 2}, {Name: placement.ScoreLeastShoots, Weight: 1},
	}}
	for _, tc := range []struct {
		name     string
		announce bool
		profile  *placement.Profile
		seed     string
		want     []string
	}{
		{"patch mode", false, profile, "aws-eu2", []string{scores}},
		{"binding mode", true, profile, "aws-eu2", []string{AnnouncedWarningPrefix + `"aws-eu2"`, scores}},
		{"no profile: Gardener's rule, no breakdown", true, nil, "aws-eu1", []string{AnnouncedWarningPrefix + `"aws-eu1"`}},
		{"no profile, patch mode: no warning", false, nil, "aws-eu1", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newVClock()
			rec := metrics.New(nil)
			store := floodStore(clock, cache.Limits{}, rec, []string{"garden-dev"},
				vSeed("aws-eu1", 10), vSeed("aws-eu2", 100), vSeed("aws-us1", 1000, inRegion("us-east-1")))
			m := newMutator(t, &seedreserve.ClusterPlacer{Local: store}, nil)
			m.Projects, m.Metrics, m.Log = store, rec, logr.Discard()
			m.Announce = tc.announce
			m.Options.Scoring = tc.profile
			m.Signer = vSigner(t, clock)

			resp := postReview(t, NewMutatingHTTPHandler(m, 0), review{}.body())
			require.True(t, resp.Allowed, vMessage(resp))
			assert.Equal(t, tc.want, resp.Warnings)
			obj := applyPatch(t, shootJSON("", ""), resp.Patch)
			if tc.announce {
				assert.Equal(t, tc.seed, obj["metadata"].(map[string]any)["annotations"].(map[string]any)["seedwarden.io/seed"])
			} else {
				assert.Equal(t, tc.seed, obj["spec"].(map[string]any)["seedName"])
			}
		})
	}
}
