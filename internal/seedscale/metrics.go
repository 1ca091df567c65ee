package seedscale

import (
	"cmp"
	"fmt"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/plan"
)

// metric is one target of the spec, ready to evaluate.
type metric struct {
	typ  autoscalingapi.MetricSourceType
	name string
	// utilization (percent) or perSeed (Shoots per seed), for Resource.
	utilization, perSeed int64
	// like and minShoots, for Headroom.
	like      *api.Shoot
	minShoots int
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

// metrics checks the spec's metrics and resolves their templates.
func metrics(specs []autoscalingapi.MetricSpec, profiles map[string]*api.Shoot, inline func(int) (*api.Shoot, error)) ([]metric, error) {
	if len(specs) == 0 {
		return nil, fmt.Errorf("spec.metrics: empty (name at least one metric)")
	}
	out := make([]metric, 0, len(specs))
	for i, m := range specs {
		path := fmt.Sprintf("spec.metrics[%d]", i)
		switch {
		case m.Type == autoscalingapi.ResourceMetricSourceType && m.Resource != nil:
			r, err := resourceMetric(path, m.Resource)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		case m.Type == autoscalingapi.HeadroomMetricSourceType && m.Headroom != nil:
			h, err := headroomMetric(path, i, m.Headroom, profiles, inline)
			if err != nil {
				return nil, err
			}
			out = append(out, h)
		default:
			return nil, fmt.Errorf("%s.type: %q needs its own field (resource or headroom) and no other", path, m.Type)
		}
	}
	return out, nil
}

func resourceMetric(path string, r *autoscalingapi.ResourceMetricSource) (metric, error) {
	if r.Name != autoscalingapi.ResourceShoots {
		return metric{}, fmt.Errorf("%s.resource.name: %q is not supported (only %q)", path, r.Name, autoscalingapi.ResourceShoots)
	}
	m := metric{typ: autoscalingapi.ResourceMetricSourceType, name: r.Name}
	t := r.Target
	switch {
	case t.Type == autoscalingapi.UtilizationMetricType && t.AverageUtilization != nil:
		if *t.AverageUtilization < 1 || *t.AverageUtilization > 100 {
			return metric{}, fmt.Errorf("%s.resource.target.averageUtilization: %d is out of range (1 to 100)", path, *t.AverageUtilization)
		}
		m.utilization = int64(*t.AverageUtilization)
	case t.Type == autoscalingapi.AverageValueMetricType && t.AverageValue != nil:
		if *t.AverageValue < 1 {
			return metric{}, fmt.Errorf("%s.resource.target.averageValue: %d must be at least 1", path, *t.AverageValue)
		}
		m.perSeed = int64(*t.AverageValue)
	default:
		return metric{}, fmt.Errorf("%s.resource.target: type %q needs averageUtilization (Utilization) or averageValue (AverageValue)", path, t.Type)
	}
	return m, nil
}

func headroomMetric(path string, i int, h *autoscalingapi.HeadroomMetricSource, profiles map[string]*api.Shoot, inline func(int) (*api.Shoot, error)) (metric, error) {
	if h.MinShoots < 1 {
		return metric{}, fmt.Errorf("%s.headroom.minShoots: %d must be at least 1", path, h.MinShoots)
	}
	m := metric{typ: autoscalingapi.HeadroomMetricSourceType, minShoots: int(h.MinShoots)}
	switch {
	case h.Profile != "" && h.Shoot == nil:
		like, ok := profiles[h.Profile]
		if !ok {
			return metric{}, fmt.Errorf("%s.headroom.profile: %q is not one of seedwarden's headroom profiles (headroom.profiles)", path, h.Profile)
		}
		m.name, m.like = h.Profile, like
	case h.Profile == "" && h.Shoot != nil:
		like, err := inline(i)
		if err != nil {
			return metric{}, fmt.Errorf("%s.headroom.shoot: %w", path, err)
		}
		m.name, m.like = cmp.Or(like.Name, inlineProfile), like
	default:
		return metric{}, fmt.Errorf("%s.headroom: set exactly one of profile and shoot", path)
	}
	return m, nil
}

// inlineProfile names a Headroom metric whose inline template has no name.
const inlineProfile = "inline"

// read evaluates the metric at an outcome.
func (m *metric) read(o *outcome, opts placement.Options) (value, error) {
	switch {
	case m.like != nil:
		n, err := plan.Headroom(o.view.Snapshot(), m.like, opts, m.minShoots)
		if err != nil {
			return value{}, err
		}
		return value{ok: true, met: n >= m.minShoots, n: int64(n), text: fmt.Sprintf("%d more %s placeable", n, shootsWord(int64(n)))}, nil
	case m.utilization > 0:
		used, alloc := o.usage()
		if alloc == 0 {
			return value{text: "unknown: no seed of the set has status.allocatable.shoots"}, nil
		}
		return value{ok: true, met: used*100 <= m.utilization*alloc, n: used,
			text: fmt.Sprintf("%d%% (%d of %d allocatable)", used*100/alloc, used, alloc)}, nil
	default:
		used, _ := o.usage()
		seeds := int64(len(o.seeds))
		if seeds == 0 {
			return value{ok: true, met: used == 0, n: used, text: fmt.Sprintf("%d %s on no seed", used, shootsWord(used))}, nil
		}
		return value{ok: true, met: used <= m.perSeed*seeds, n: used,
			text: fmt.Sprintf("%.1f Shoots per seed (%d on %d)", float64(used)/float64(seeds), used, seeds)}, nil
	}
}

// target says the metric's target in words.
func (m *metric) target() string {
	switch {
	case m.like != nil:
		return fmt.Sprintf("at least %d more %s like %s placeable", m.minShoots, shootsWord(int64(m.minShoots)), m.name)
	case m.utilization > 0:
		return fmt.Sprintf("shoots utilization at most %d%% of allocatable", m.utilization)
	default:
		return fmt.Sprintf("at most %d %s per seed", m.perSeed, shootsWord(m.perSeed))
	}
}

// shootsWord is the noun for n Shoots.
func shootsWord(n int64) string {
	if n == 1 {
		return "Shoot"
	}
	return "Shoots"
}
