package config

import "strconv"

// Scoring is the scoring block (Gardener's GEP-13): weighted scorers rank
// the seeds the filters keep instead of Gardener's least-used rule.
// cmd/webhook converts it into placement.Profile; the scorer names and the
// weight bound are placement's (ScorerNames, MaxWeight), checked there
// through a Check so that they are spelled in one place.
type Scoring struct {
	// Scorers are the enabled scorers with their weights: at least one,
	// each name once, weight 1 to 100.
	Scorers []WeightedScorer `json:"scorers"`
	// DefaultCapacity is the shoot capacity LeastAllocated and
	// MostAllocated assume for a seed without status.allocatable.shoots.
	// Default: 0 (such a seed scores 0 with both); not negative.
	DefaultCapacity int64 `json:"defaultCapacity,omitempty"`
}

// WeightedScorer is one entry of scoring.scorers.
type WeightedScorer struct {
	// Name is a scorer: RegionDistance, LeastAllocated, MostAllocated,
	// LeastShoots or ProjectSpread.
	Name string `json:"name"`
	// Weight multiplies the scorer's 0-100 score.
	Weight int `json:"weight"`
}

// validateScoring checks what needs no knowledge of the scorers: a block
// that is present names at least one scorer, each once, and a capacity that
// is not negative. Names and weights are cmd/webhook's check.
func (c *Config) validateScoring(p *problems) {
	s := c.Scoring
	if s == nil {
		return
	}
	if len(s.Scorers) == 0 {
		p.add("scoring.scorers", "empty (name at least one scorer, or leave scoring out for Gardener's least-used rule)")
	}
	for i, ws := range s.Scorers {
		for j := range i {
			if s.Scorers[j].Name == ws.Name {
				p.add("scoring.scorers["+strconv.Itoa(i)+"].name", "duplicate scorer %q (already scoring.scorers[%d])", ws.Name, j)
				break
			}
		}
	}
	if s.DefaultCapacity < 0 {
		p.add("scoring.defaultCapacity", "%d must not be negative", s.DefaultCapacity)
	}
}
