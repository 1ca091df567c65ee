package placement

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pool's seed selector is asked about every seed a decision keeps (the
// Required pools after step 4, the Preferred pools' rank), so a selector of
// matchLabels alone, the usual pool, is compared by map lookups rather
// than through labels.Selector's requirements. TestPoolSelectsAsSelector
// holds it to SeedSelector.Matches.

// label is one key and value of a matchLabels.
type label struct{ key, value string }

// simpleMatchLabels is the selector's matchLabels when it has nothing else,
// nil otherwise; a slice, as ranging over a map costs more than the lookups.
func simpleMatchLabels(sel *metav1.LabelSelector) []label {
	if len(sel.MatchExpressions) > 0 || len(sel.MatchLabels) == 0 {
		return nil
	}
	var ls []label
	for _, k := range slices.Sorted(maps.Keys(sel.MatchLabels)) {
		ls = append(ls, label{k, sel.MatchLabels[k]})
	}
	return ls
}

// selects reports whether the pool's seed selector selects s.
func (p *Pool) selects(s *Seed) bool {
	if p.matchLabels == nil {
		return p.SeedSelector.Matches(s.labels)
	}
	for _, l := range p.matchLabels {
		if got, ok := s.labels[l.key]; !ok || got != l.value {
			return false
		}
	}
	return true
}
