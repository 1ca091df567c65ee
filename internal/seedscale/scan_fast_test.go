package seedscale

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
)

// The fast scan decides exactly what the plain scan decides, on generated
// landscapes with every metric type, pending Shoots, wide replica ranges
// and, now and then, a model whose taint makes new seeds useless.
func TestScanFastDecidesAsPlain(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 2))
	profiles := map[string]*api.Shoot{"small": shoot("small", "eu-west-1", "")}
	for i := range 300 {
		w := generated(r)
		if r.IntN(5) == 0 {
			tainted(w.model)
		}
		maxR := int32(1 + r.IntN(40))
		minR := min(int32(r.IntN(4)), maxR)
		metrics := []autoscalingapi.MetricSpec{}
		for _, pick := range r.Perm(3)[:1+r.IntN(3)] {
			switch pick {
			case 0:
				metrics = append(metrics, utilization(int32(30+r.IntN(71))))
			case 1:
				metrics = append(metrics, averageValue(int32(1+r.IntN(12))))
			default:
				metrics = append(metrics, headroom("small", int32(1+r.IntN(200))))
			}
		}
		in := w.input(spec(minR, maxR, metrics...))
		in.Profiles = profiles
		fast, err := recommend(in, (*recommender).scan)
		require.NoError(t, err, "landscape %d", i)
		plain, err := recommend(in, (*recommender).scanPlain)
		require.NoError(t, err, "landscape %d", i)
		assert.Equal(t, plain, fast, "landscape %d", i)
	}
}
