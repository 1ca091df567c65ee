package seedscale

import (
	"cmp"
	"fmt"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/plan"
)

// headroomMetric is seedwarden's Headroom metric: room for minShoots more Shoots
// like a template anywhere on the landscape, counted with the placement
// rules.
type headroomMetric struct {
	name      string
	like      *api.Shoot
	minShoots int
}

// inlineProfile names a Headroom metric whose inline template has no name.
const inlineProfile = "inline"

func newHeadroom(path string, i int, spec *autoscalingapi.MetricSpec, env *metricEnv) (metric, error) {
	h := &headroomMetric{minShoots: int(spec.Headroom.MinShoots)}
	if p := spec.Headroom.Profile; p != "" {
		like, ok := env.profiles[p]
		if !ok {
			return metric{}, fmt.Errorf("%s.headroom.profile: %q is not one of seedwarden's headroom profiles (headroom.profiles)", path, p)
		}
		h.name, h.like = p, like
	} else {
		like, err := env.inline(i)
		if err != nil {
			return metric{}, fmt.Errorf("%s.headroom.shoot: %w", path, err)
		}
		h.name, h.like = cmp.Or(like.Name, inlineProfile), like
	}
	return metric{typ: spec.Type, name: h.name, like: h.like, kind: h}, nil
}

func (h *headroomMetric) read(o *outcome, opts placement.Options) (value, error) {
	n, err := plan.Headroom(o.view.Snapshot(), h.like, opts, h.minShoots)
	if err != nil {
		return value{}, err
	}
	return value{ok: true, met: n >= h.minShoots, n: int64(n), text: fmt.Sprintf("%d more %s placeable", n, shootsWord(int64(n)))}, nil
}

func (h *headroomMetric) target() string {
	return fmt.Sprintf("at least %d more %s like %s placeable", h.minShoots, shootsWord(int64(h.minShoots)), h.name)
}

func (h *headroomMetric) driver() string {
	return fmt.Sprintf("%d more %s like %s placeable", h.minShoots, shootsWord(int64(h.minShoots)), h.name)
}
