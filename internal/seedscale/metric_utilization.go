package seedscale

import (
	"fmt"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// utilizationMetric is GEP-13's Resource metric with a Utilization target: the
// set's Shoots over its seeds' status.allocatable.shoots, summed.
type utilizationMetric struct {
	// percent is the target, 1 to 100.
	percent int64
}

func newUtilization(_ string, _ int, spec *autoscalingapi.MetricSpec, _ *metricEnv) (metric, error) {
	u := &utilizationMetric{percent: int64(*spec.Resource.Target.AverageUtilization)}
	return metric{typ: spec.Type, name: spec.Resource.Name, pool: -1, kind: u}, nil
}

func (u *utilizationMetric) read(o *outcome, _ placement.Options) (value, error) {
	used, alloc := o.usage()
	if len(o.seeds) == 0 && used == 0 {
		// No seed and nothing to hold (minReplicas 0): met, so that the
		// set goes to 0 and back to 1 only for pending Shoots it would
		// take, which no target survives (verdicts).
		return value{ok: true, met: true, text: "0 Shoots on no seed"}, nil
	}
	if alloc == 0 {
		return value{text: "unknown: no seed of the set has status.allocatable.shoots"}, nil
	}
	return value{ok: true, met: used*100 <= u.percent*alloc, n: used,
		text: fmt.Sprintf("%d%% (%d of %d allocatable)", used*100/alloc, used, alloc)}, nil
}

func (u *utilizationMetric) target() string {
	return fmt.Sprintf("shoots utilization at most %d%% of allocatable", u.percent)
}

func (u *utilizationMetric) driver() string {
	return fmt.Sprintf("the shoots utilization at most %d%%", u.percent)
}
