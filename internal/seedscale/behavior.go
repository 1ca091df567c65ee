package seedscale

import (
	"fmt"
	"math"
	"time"

	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
)

// Sample is a recommendation at a time.
type Sample struct {
	At       time.Time
	Replicas int32
}

// Scale is one change of the replicas the controller made.
type Scale struct {
	At       time.Time
	From, To int32
}

// History is what behavior remembers of one SeedAutoscaler: recent
// recommendations (for the stabilization windows) and recent changes of
// the replicas (for the policies' periods). The controller keeps it in
// memory; the caller appends a Scale after it writes new replicas.
type History struct {
	Recommendations []Sample
	Scales          []Scale
}

// Decision is the replicas to set after behavior, with what bounded them.
type Decision struct {
	Replicas int32
	// Limited says what held the replicas back from the recommendation,
	// or "".
	Limited string
}

// The defaults: seeds take long to create and are expensive to keep, and
// a removed seed is gone for good, so scale-up is prompt and scale-down
// waits and goes one seed at a time.
var (
	defaultScaleUp = autoscalingapi.ScalingRules{
		StabilizationWindowSeconds: ptr.To[int32](0),
		SelectPolicy:               ptr.To(autoscalingapi.MaxChangePolicySelect),
		Policies: []autoscalingapi.ScalingPolicy{
			{Type: autoscalingapi.SeedsScalingPolicy, Value: 2, PeriodSeconds: 300},
			{Type: autoscalingapi.PercentScalingPolicy, Value: 50, PeriodSeconds: 300},
		},
	}
	defaultScaleDown = autoscalingapi.ScalingRules{
		StabilizationWindowSeconds: ptr.To[int32](1800),
		SelectPolicy:               ptr.To(autoscalingapi.MaxChangePolicySelect),
		Policies: []autoscalingapi.ScalingPolicy{
			{Type: autoscalingapi.SeedsScalingPolicy, Value: 1, PeriodSeconds: 600},
		},
	}
)

// Rules are b's rules for one direction, each unset field defaulted.
func Rules(b *autoscalingapi.Behavior, up bool) autoscalingapi.ScalingRules {
	def, set := defaultScaleDown, (*autoscalingapi.ScalingRules)(nil)
	if up {
		def = defaultScaleUp
	}
	if b != nil {
		set = b.ScaleDown
		if up {
			set = b.ScaleUp
		}
	}
	if set == nil {
		return def
	}
	out := *set
	if out.StabilizationWindowSeconds == nil {
		out.StabilizationWindowSeconds = def.StabilizationWindowSeconds
	}
	if out.SelectPolicy == nil {
		out.SelectPolicy = def.SelectPolicy
	}
	if len(out.Policies) == 0 {
		out.Policies = def.Policies
	}
	return out
}

// Behave applies b (nil: the defaults) to a recommendation, as a
// HorizontalPodAutoscaler does: it records the recommendation in h (an
// empty h first records current, as if recommended now); a
// scale-up takes the lowest recommendation of its window and a scale-down
// the highest of its; then the policies bound the change over their
// periods, counting the changes h holds.
func Behave(b *autoscalingapi.Behavior, h *History, current, recommended int32, now time.Time) Decision {
	up, down := Rules(b, true), Rules(b, false)
	if len(h.Recommendations) == 0 {
		// A new history (a new leader) starts from where the replicas are,
		// so a window is never shorter than it says.
		h.Recommendations = append(h.Recommendations, Sample{At: now, Replicas: current})
	}
	h.Recommendations = append(h.Recommendations, Sample{At: now, Replicas: recommended})
	h.prune(now, up, down)

	upWindow, downWindow := window(up), window(down)
	lowest, highest := recommended, recommended
	for _, s := range h.Recommendations {
		if s.At.After(now.Add(-upWindow)) {
			lowest = min(lowest, s.Replicas)
		}
		if s.At.After(now.Add(-downWindow)) {
			highest = max(highest, s.Replicas)
		}
	}
	stable := current
	if lowest > stable {
		stable = lowest
	}
	if highest < stable {
		stable = highest
	}
	d := Decision{Replicas: stable}
	switch {
	case stable != recommended && recommended > current:
		d.Limited = fmt.Sprintf("scale-up stabilization window of %s", upWindow)
	case stable != recommended && recommended < current:
		d.Limited = fmt.Sprintf("scale-down stabilization window of %s", downWindow)
	}
	switch {
	case stable > current:
		limit, why := h.limit(current, up, now, true)
		if stable > limit {
			d = Decision{Replicas: limit, Limited: why}
		}
	case stable < current:
		limit, why := h.limit(current, down, now, false)
		if stable < limit {
			d = Decision{Replicas: limit, Limited: why}
		}
	}
	return d
}

func window(r autoscalingapi.ScalingRules) time.Duration {
	return time.Duration(ptr.Deref(r.StabilizationWindowSeconds, 0)) * time.Second
}

// prune forgets what no window or period looks back to any more.
func (h *History) prune(now time.Time, rules ...autoscalingapi.ScalingRules) {
	var keepRecs, keepScales time.Duration
	for _, r := range rules {
		keepRecs = max(keepRecs, window(r))
		for _, p := range r.Policies {
			keepScales = max(keepScales, time.Duration(p.PeriodSeconds)*time.Second)
		}
	}
	recs := h.Recommendations[:0]
	for _, s := range h.Recommendations {
		if s.At.After(now.Add(-keepRecs)) {
			recs = append(recs, s)
		}
	}
	h.Recommendations = recs
	scales := h.Scales[:0]
	for _, s := range h.Scales {
		if !s.At.Before(now.Add(-keepScales)) {
			scales = append(scales, s)
		}
	}
	h.Scales = scales
}

// changed sums the replicas added (up) or removed (down) within period.
func (h *History) changed(now time.Time, period time.Duration, up bool) int32 {
	var n int32
	for _, s := range h.Scales {
		if s.At.Before(now.Add(-period)) {
			continue
		}
		if d := s.To - s.From; up && d > 0 {
			n += d
		} else if !up && d < 0 {
			n -= d
		}
	}
	return n
}

// limit is as far from current as a direction's policies let the replicas
// go now: up, the most; down, the fewest. A Percent policy's step is
// rounded up, so it always allows at least one seed.
func (h *History) limit(current int32, r autoscalingapi.ScalingRules, now time.Time, up bool) (int32, string) {
	dir, sign := "scale-down", int32(-1)
	if up {
		dir, sign = "scale-up", 1
	}
	if *r.SelectPolicy == autoscalingapi.DisabledPolicySelect {
		return current, dir + " is disabled (selectPolicy Disabled)"
	}
	minChange := *r.SelectPolicy == autoscalingapi.MinChangePolicySelect
	var best int32
	var why string
	for i, p := range r.Policies {
		start := current - sign*h.changed(now, time.Duration(p.PeriodSeconds)*time.Second, up)
		step := p.Value
		if p.Type == autoscalingapi.PercentScalingPolicy {
			step = int32(math.Ceil(float64(start) * float64(p.Value) / 100))
		}
		limit := start + sign*step
		change, bestChange := sign*(limit-current), sign*(best-current)
		if i == 0 || minChange && change < bestChange || !minChange && change > bestChange {
			best, why = limit, policyText(dir, p)
		}
	}
	return max(best, 0), why
}

func policyText(dir string, p autoscalingapi.ScalingPolicy) string {
	unit := " seeds"
	if p.Type == autoscalingapi.PercentScalingPolicy {
		unit = "%"
	}
	return fmt.Sprintf("%s policy: at most %d%s per %s", dir, p.Value, unit, time.Duration(p.PeriodSeconds)*time.Second)
}

// WithPending lifts a decision to rec.ForPending, the replicas the pending
// Shoots need, in one step: behavior's policies limit growth the metrics
// ask for, not seeds Shoots are waiting for (with the default policies a
// set of 1 would take four periods of 5 minutes to reach 6). Growth past
// ForPending, and every scale-down, stays as behavior decided.
func WithPending(d Decision, current int32, rec Recommendation) Decision {
	if rec.ForPending <= current || rec.ForPending <= d.Replicas {
		return d
	}
	if rec.ForPending >= rec.Desired {
		return Decision{Replicas: rec.Desired}
	}
	// What the metrics ask for beyond stays held back as behavior said.
	return Decision{Replicas: rec.ForPending, Limited: d.Limited}
}
