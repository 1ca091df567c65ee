package placement

import (
	"strconv"
	"strings"
)

// ScoreRanks is how many seeds a scored decision's breakdown holds: the
// chosen seed and the runners-up.
const ScoreRanks = 3

// SeedScore is one seed's line of a scored decision's breakdown.
type SeedScore struct {
	Seed string `json:"seed"`
	// Total is the sum of Score × Weight over Parts.
	Total int `json:"total"`
	// Parts are the profile's scorers, in the profile's order.
	Parts []ScorePart `json:"scores"`
}

// ScorePart is one scorer's score of a seed.
type ScorePart struct {
	Scorer ScorerName `json:"scorer"`
	// Score is 0 to 100.
	Score  int `json:"score"`
	Weight int `json:"weight"`
}

// ScoreSummary explains a scored decision in one line, for admission
// warnings, simulate and events: the chosen seed and the runners-up with
// their totals and each scorer's score x weight,
//
//	seed-a 540 (LeastAllocated 80x5, RegionDistance 100x1) > seed-b 500 (...) > seed-c 470 (...); 12 seeds scored
//
// with "=" between equal totals (the name decides). It is "" for a decision
// without a breakdown. ASCII only ("x", not "×"): it goes into HTTP headers.
func (d *Decision) ScoreSummary() string {
	if len(d.Scores) == 0 {
		return ""
	}
	var b strings.Builder
	for r, s := range d.Scores {
		if r > 0 {
			if s.Total == d.Scores[r-1].Total {
				b.WriteString(" = ")
			} else {
				b.WriteString(" > ")
			}
		}
		b.WriteString(s.Seed + " " + strconv.Itoa(s.Total) + " (")
		for i, p := range s.Parts {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(string(p.Scorer) + " " + strconv.Itoa(p.Score) + "x" + strconv.Itoa(p.Weight))
		}
		b.WriteString(")")
	}
	b.WriteString("; " + strconv.Itoa(d.Scored) + " seeds scored")
	return b.String()
}
