package seedscale

import (
	"fmt"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// The metric kinds, as placement's scorers: a table from a kind's key to
// what builds it, and one file per kind (metric_utilization.go,
// metric_averagevalue.go, metric_headroom.go). A new kind is a constant in
// internal/autoscalingapi, its rule in autoscalingapi.ValidateMetric (held
// to the CRD), a file here and a row of this table.
var kinds = map[kindKey]newMetric{
	{autoscalingapi.ResourceMetricSourceType, autoscalingapi.UtilizationMetricType}:  newUtilization,
	{autoscalingapi.ResourceMetricSourceType, autoscalingapi.AverageValueMetricType}: newAverageValue,
	{autoscalingapi.HeadroomMetricSourceType, ""}:                                    newHeadroom,
}

// kindKey is a metric's type, and for a Resource metric its target's type.
type kindKey struct {
	source autoscalingapi.MetricSourceType
	target autoscalingapi.MetricTargetType
}

func keyOf(m *autoscalingapi.MetricSpec) kindKey {
	k := kindKey{source: m.Type}
	if m.Resource != nil {
		k.target = m.Resource.Target.Type
	}
	return k
}

// newMetric builds the metric of a spec autoscalingapi.ValidateMetric
// accepted; it fails only for what the CRD cannot know (a profile that is
// not configured, an inline template that does not decode).
type newMetric func(path string, i int, spec *autoscalingapi.MetricSpec, env *metricEnv) (metric, error)

// metricEnv is what building a metric may read besides its spec.
type metricEnv struct {
	profiles map[string]*api.Shoot
	inline   func(int) (*api.Shoot, error)
	// policies are the placement policies, whose seed pools a Headroom
	// metric may name.
	policies *placement.Policies
}

// metric is one target of the spec, ready to evaluate.
type metric struct {
	typ  autoscalingapi.MetricSourceType
	name string
	// like is a Headroom metric's template: the Shoots new seeds must be
	// able to take for more seeds to help. Nil for the other kinds.
	like *api.Shoot
	// pool is the index of the seed pool a Headroom metric names, or -1.
	pool int
	kind reader
}

// reader is what a kind does: read its value at an outcome, and say its
// target as the status shows it and as the message names what drives a
// scale-up.
type reader interface {
	read(o *outcome, opts placement.Options) (value, error)
	target() string
	driver() string
}

// value is a metric's reading at one outcome, comparable across outcomes.
type value struct {
	// ok is false when the metric cannot be read (no allocatable).
	ok  bool
	met bool
	// n is the Shoots used (Resource) or placeable (Headroom).
	n    int64
	text string
}

// metrics checks the spec's metrics and builds them.
func metrics(specs []autoscalingapi.MetricSpec, env *metricEnv) ([]metric, error) {
	if len(specs) == 0 {
		return nil, fmt.Errorf("spec.metrics: empty (name at least one metric)")
	}
	out := make([]metric, 0, len(specs))
	for i := range specs {
		path := fmt.Sprintf("spec.metrics[%d]", i)
		if err := autoscalingapi.ValidateMetric(path, &specs[i]); err != nil {
			return nil, err
		}
		build, ok := kinds[keyOf(&specs[i])]
		if !ok {
			// ValidateMetric accepted a kind without a row: a bug, said
			// rather than panicked on.
			return nil, fmt.Errorf("%s: type %q has no metric kind in seedscale", path, specs[i].Type)
		}
		m, err := build(path, i, &specs[i], env)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// read evaluates the metric at an outcome.
func (m *metric) read(o *outcome, opts placement.Options) (value, error) {
	return m.kind.read(o, opts)
}

// target says the metric's target in words.
func (m *metric) target() string { return m.kind.target() }

// shootsWord is the noun for n Shoots.
func shootsWord(n int64) string {
	if n == 1 {
		return "Shoot"
	}
	return "Shoots"
}
