package seedscale

import (
	"cmp"
	"fmt"
	"slices"

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
	// pool is the index of the seed pool the metric names in policies'
	// Pools (headroom.pool), or -1: the room is counted on its seeds only.
	pool     int
	policies *placement.Policies
}

// inlineProfile names a Headroom metric whose inline template has no name.
const inlineProfile = "inline"

func newHeadroom(path string, i int, spec *autoscalingapi.MetricSpec, env *metricEnv) (metric, error) {
	h := &headroomMetric{minShoots: int(spec.Headroom.MinShoots), pool: -1, policies: env.policies}
	if name := spec.Headroom.Pool; name != "" {
		if h.pool = poolIndex(env.policies, name); h.pool < 0 {
			return metric{}, fmt.Errorf("%s.headroom.pool: %q is not one of seedwarden's seed pools (policies.pools)", path, name)
		}
	}
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
	return metric{typ: spec.Type, name: h.name, like: h.like, pool: h.pool, kind: h}, nil
}

func (h *headroomMetric) read(o *outcome, opts placement.Options) (value, error) {
	snap := o.view.Snapshot()
	if h.pool >= 0 {
		snap = onPool(snap, h.policies, h.pool)
	}
	n, err := plan.Headroom(snap, h.like, opts, h.minShoots)
	if err != nil {
		return value{}, err
	}
	return value{ok: true, met: n >= h.minShoots, n: int64(n), text: fmt.Sprintf("%d more %s placeable", n, shootsWord(int64(n)))}, nil
}

func (h *headroomMetric) target() string {
	return fmt.Sprintf("at least %d more %s like %s placeable%s", h.minShoots, shootsWord(int64(h.minShoots)), h.name, h.onPool())
}

func (h *headroomMetric) driver() string {
	return fmt.Sprintf("%d more %s like %s placeable%s", h.minShoots, shootsWord(int64(h.minShoots)), h.name, h.onPool())
}

// onPool names the metric's pool, for its target in words.
func (h *headroomMetric) onPool() string {
	if h.pool < 0 {
		return ""
	}
	return fmt.Sprintf(" on seed pool %s", h.policies.Pools[h.pool].Name)
}

// onPool is snap with only the seeds of pool i of policies: where a
// Headroom metric naming the pool counts room.
func onPool(snap *placement.Snapshot, policies *placement.Policies, i int) *placement.Snapshot {
	out := *snap
	out.Seeds = make([]*placement.Seed, 0, len(snap.Seeds))
	for _, s := range snap.Seeds {
		if policies.SeedPools(s).Has(i) {
			out.Seeds = append(out.Seeds, s)
		}
	}
	return &out
}

// poolIndex is the index of the pool named name in p's Pools, or -1.
func poolIndex(p *placement.Policies, name string) int {
	if p == nil {
		return -1
	}
	return slices.IndexFunc(p.Pools, func(pool placement.Pool) bool { return pool.Name == name })
}
