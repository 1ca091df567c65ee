package placement

import (
	"fmt"
	"strings"
)

// Weighted scoring (GEP-13's proposal, shaped like kube-scheduler's score
// plugins): with Options.Scoring, step 12 no longer takes the least-used
// seed. Every enabled scorer (scorers.go) gives each seed left by the hard
// filters an integer score from 0 to 100, the seed with the highest sum of
// score × weight wins, and equal sums go by seed name, as step 12 does.
// A score never overrides a filter: it only ranks the seeds they kept.

// ScorerName names a scorer of a Profile.
type ScorerName string

// The scorers; formulas in scorers.go.
const (
	// ScoreRegionDistance prefers seeds nearer the Shoot's region, by the
	// distances the MinimalDistance strategy uses. With it the region
	// strategy is no longer a filter.
	ScoreRegionDistance ScorerName = "RegionDistance"
	// ScoreLeastAllocated prefers seeds with more room left after the
	// Shoot (GEP-13's SeedResourcesLeastAllocated).
	ScoreLeastAllocated ScorerName = "LeastAllocated"
	// ScoreMostAllocated prefers the fullest seeds (bin-packing).
	ScoreMostAllocated ScorerName = "MostAllocated"
	// ScoreLeastShoots is Gardener's rule as a score: only the least-used
	// seeds get 100.
	ScoreLeastShoots ScorerName = "LeastShoots"
	// ScoreProjectSpread prefers seeds holding fewer Shoots of the Shoot's
	// project (Snapshot.ProjectShoots).
	ScoreProjectSpread ScorerName = "ProjectSpread"
)

// ScorerNames are the known scorers, in the order messages list them.
var ScorerNames = [...]ScorerName{ScoreRegionDistance, ScoreLeastAllocated, ScoreMostAllocated, ScoreLeastShoots, ScoreProjectSpread}

// MaxWeight bounds a scorer's weight, so a total fits any integer and no
// scorer can outweigh another by more than a hundredfold.
const MaxWeight = 100

// Profile is a scoring profile: the enabled scorers with their weights.
type Profile struct {
	Scorers []WeightedScorer
	// DefaultCapacity is the capacity LeastAllocated and MostAllocated
	// assume for a seed without status.allocatable.shoots. 0: such a seed's
	// size is unknown and both rate it 0.
	DefaultCapacity int64
}

// WeightedScorer is one entry of a Profile.
type WeightedScorer struct {
	Name ScorerName
	// Weight multiplies the scorer's 0-100 score: 1 to MaxWeight.
	Weight int
}

// Validate names the offending field and value. It allocates nothing for a
// valid profile: decisions check the profile they are given.
func (p *Profile) Validate() error {
	if len(p.Scorers) == 0 {
		return fmt.Errorf("scoring.scorers: empty; name at least one of %s, or leave scoring out for Gardener's rule", scorerList())
	}
	for i, ws := range p.Scorers {
		// Past len(ScorerNames) entries an unknown or duplicate name must
		// already have been met, so this loop stays short for any input.
		if _, ok := scorers[ws.Name]; !ok {
			return fmt.Errorf("scoring.scorers[%d].name: unknown scorer %q (want one of %s)", i, ws.Name, scorerList())
		}
		for j := range i {
			if p.Scorers[j].Name == ws.Name {
				return fmt.Errorf("scoring.scorers[%d].name: duplicate scorer %q (already scorers[%d])", i, ws.Name, j)
			}
		}
		if ws.Weight < 1 || ws.Weight > MaxWeight {
			return fmt.Errorf("scoring.scorers[%d].weight: %d for %s is out of range (want 1 to %d)", i, ws.Weight, ws.Name, MaxWeight)
		}
	}
	if p.DefaultCapacity < 0 {
		return fmt.Errorf("scoring.defaultCapacity: %d must not be negative", p.DefaultCapacity)
	}
	return nil
}

func scorerList() string {
	names := make([]string, len(ScorerNames))
	for i, n := range ScorerNames {
		names[i] = string(n)
	}
	return strings.Join(names, ", ")
}

// has reports whether the profile enables the scorer; false for nil.
func (p *Profile) has(name ScorerName) bool {
	if p == nil {
		return false
	}
	for _, ws := range p.Scorers {
		if ws.Name == name {
			return true
		}
	}
	return false
}

// scoreBufs are a scored decision's per-seed numbers, indexed like the
// seeds being ranked, and the RegionDistance memo. Pooled with the
// decider; the memo's strings are region and provider names, so a pooled
// decider retains no snapshot of note.
type scoreBufs struct {
	usage, total []int64
	// scores[i] are the scores of the profile's i-th scorer (a valid
	// profile has at most one per known scorer).
	scores   [len(ScorerNames)][]int64
	distMemo distMemo
}

// buffers returns the decider's score buffers sized for n seeds and m
// scorers.
func (d *decider) buffers(n, m int) *scoreBufs {
	if d.scores == nil {
		d.scores = &scoreBufs{}
	}
	b := d.scores
	grow := func(s []int64) []int64 {
		if cap(s) < n {
			return make([]int64, n)
		}
		return s[:n]
	}
	b.usage, b.total = grow(b.usage), grow(b.total)
	for i := range b.scores[:m] {
		b.scores[i] = grow(b.scores[i])
	}
	return b
}

// scoreSeeds is step 12 with a profile (validated in decide): it ranks the
// seeds (never none, sorted by name) by weighted score.
func (d *decider) scoreSeeds(_ *Snapshot, seeds []*Seed) Decision {
	p := d.opts.Scoring
	b := d.buffers(len(seeds), len(p.Scorers))
	if p.has(ScoreLeastAllocated) || p.has(ScoreMostAllocated) || p.has(ScoreLeastShoots) {
		for j, s := range seeds {
			b.usage[j] = d.usage(s)
		}
	}
	clear(b.total)
	for i, ws := range p.Scorers {
		scores := b.scores[i]
		scorers[ws.Name](d, seeds, b.usage, scores)
		for j, v := range scores {
			b.total[j] += int64(ws.Weight) * v
		}
	}
	top, n := topRanks(b.total)
	best := top[0]
	var tied []string
	for j, s := range seeds[best:] {
		if b.total[best+j] == b.total[best] {
			tied = append(tied, s.Name)
		}
	}
	return Decision{
		Seed:   seeds[best].Name,
		Tied:   tied,
		Usage:  d.usage(seeds[best]),
		Scores: breakdown(p, seeds, b, top[:n]),
		Scored: len(seeds),
		Total:  len(d.snap.Seeds),
	}
}

// topRanks returns the indices of the ScoreRanks highest totals, highest
// first; equal totals keep index (name) order, so top[0] is the winner.
func topRanks(total []int64) (top [ScoreRanks]int, n int) {
	for j, t := range total {
		if n == len(top) && t <= total[top[n-1]] {
			continue
		}
		k := min(n, len(top)-1) // where j goes unless it beats those above
		for k > 0 && t > total[top[k-1]] {
			top[k] = top[k-1]
			k--
		}
		top[k] = j
		n = min(n+1, len(top))
	}
	return top, n
}

// breakdown is the Decision's Scores for the seeds at ranks.
func breakdown(p *Profile, seeds []*Seed, b *scoreBufs, ranks []int) []SeedScore {
	m := len(p.Scorers)
	parts := make([]ScorePart, len(ranks)*m)
	out := make([]SeedScore, len(ranks))
	for r, j := range ranks {
		row := parts[r*m : (r+1)*m : (r+1)*m]
		for i, ws := range p.Scorers {
			row[i] = ScorePart{Scorer: ws.Name, Score: int(b.scores[i][j]), Weight: ws.Weight}
		}
		out[r] = SeedScore{Seed: seeds[j].Name, Total: int(b.total[j]), Parts: row}
	}
	return out
}
