package placement

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPoolSelectsAsSelector: a pool's seed selector decides by map lookups
// exactly what labels.Selector decides, for selectors of matchLabels alone
// (the lookups) and with expressions (the selector itself).
func TestPoolSelectsAsSelector(t *testing.T) {
	r := rand.New(rand.NewPCG(39, 7))
	keys, values := []string{"pool", "tier", "env"}, []string{"gold", "silver", ""}
	draw := func(n int) map[string]string {
		m := map[string]string{}
		for range n {
			m[keys[r.IntN(len(keys))]] = values[r.IntN(len(values))]
		}
		return m
	}
	lookups := 0
	for i := range 2000 {
		sel := &metav1.LabelSelector{MatchLabels: draw(1 + r.IntN(2))}
		if r.IntN(4) == 0 {
			sel.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: keys[r.IntN(len(keys))], Operator: metav1.LabelSelectorOpExists}}
		}
		pool, err := NewPool("p", PoolRequired, []string{"proj"}, nil, sel)
		require.NoError(t, err)
		if pool.matchLabels != nil {
			lookups++
		}
		seed := &Seed{labels: draw(r.IntN(4))}
		require.Equal(t, pool.SeedSelector.Matches(seed.labels), pool.selects(seed), fmt.Sprintf("case %d: selector %v, labels %v", i, sel, seed.labels))
	}
	require.Greater(t, lookups, 1000)
}
