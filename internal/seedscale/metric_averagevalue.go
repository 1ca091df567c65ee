package seedscale

import (
	"fmt"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// averageValueMetric is GEP-13's Resource metric with an AverageValue target:
// Shoots per seed of the set.
type averageValueMetric struct {
	// perSeed is the target, at least 1.
	perSeed int64
}

func newAverageValue(_ string, _ int, spec *autoscalingapi.MetricSpec, _ *metricEnv) (metric, error) {
	a := &averageValueMetric{perSeed: int64(*spec.Resource.Target.AverageValue)}
	return metric{typ: spec.Type, name: spec.Resource.Name, pool: -1, kind: a}, nil
}

func (a *averageValueMetric) read(o *outcome, _ placement.Options) (value, error) {
	used, _ := o.usage()
	seeds := int64(len(o.seeds))
	if seeds == 0 {
		return value{ok: true, met: used == 0, n: used, text: fmt.Sprintf("%d %s on no seed", used, shootsWord(used))}, nil
	}
	return value{ok: true, met: used <= a.perSeed*seeds, n: used,
		text: fmt.Sprintf("%.1f Shoots per seed (%d on %d)", float64(used)/float64(seeds), used, seeds)}, nil
}

func (a *averageValueMetric) target() string {
	return fmt.Sprintf("at most %d %s per seed", a.perSeed, shootsWord(a.perSeed))
}

func (a *averageValueMetric) driver() string { return a.target() }
